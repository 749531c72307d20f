"""The simulator's ``PodBehaviour`` for MatrixOne pods: a table lookup, never a computation.

The kubelet asks on every status it computes, so ``judge`` only reads the verdicts the
simulated MatrixOne computed at its last refresh. A pod it has not seen yet is held not
ready and triggers a refresh, whose new verdicts make the kubelet ask again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mo_devkit.localcluster.simulator.behaviour import PodVerdict
from mo_devkit.simulated.view import mo_component

_UNSEEN = PodVerdict(ready=False)


class MatrixOneBehaviour:
    """Answers the kubelet for pods labelled with a MatrixOne component; None for others."""

    def __init__(self, on_unseen: Callable[[], None]) -> None:
        self._on_unseen = on_unseen
        self._verdicts: dict[str, PodVerdict] = {}
        self.enabled = True

    def judge(self, pod: dict[str, Any], node: dict[str, Any] | None) -> PodVerdict | None:
        if not self.enabled or mo_component(pod) is None:
            return None
        found = self._verdicts.get(str((pod.get("metadata") or {}).get("uid") or ""))
        if found is None:
            self._on_unseen()
            return _UNSEEN
        return found

    def update(self, verdicts: Mapping[str, PodVerdict]) -> set[str]:
        """Take new verdicts (by pod UID); the UIDs whose verdict differs, appeared or
        went: the pods the kubelet must look at again."""
        old = self._verdicts
        changed = {uid for uid, v in verdicts.items() if old.get(uid) != v}
        changed.update(uid for uid in old if uid not in verdicts)
        self._verdicts = dict(verdicts)
        return changed
