"""How soon a CN set asks HAKeeper again about CNs that run but have not registered.

A CN's store registers in HAKeeper shortly after its process starts, and nothing
tells the operator when: the pod does not change until the set writes its
readiness gate (``stores.py``). Looking again only every ``--busy-poll-seconds``
left a new CN out of service for up to that long after it registered, the one
wait on a cluster's way to Ready that is the operator's. So a set looks again
after as long as it has already waited for that pod, from ``FIRST_LOOK``
doubling up to the busy poll: a CN that registers at once is seen within a
tenth of a second, one that takes long costs a few looks more than the busy
poll alone, never a steady fast poll.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.meta.objects import status_of
from mo_operator.matrixone.admin import HAKeeperState

from ..framework.meta import is_deleting, uid_of
from . import pods as cnpods
from .stores import store_of

FIRST_LOOK = 0.1
"""Seconds until the first look again at a CN found running without a store."""


def unregistered(pods: Sequence[Mapping[str, Any]], state: HAKeeperState | None) -> list[str]:
    """The uids of the pods whose CN runs but has no store in HAKeeper (none when
    HAKeeper did not answer: then nothing says whether they registered)."""
    if state is None:
        return []
    return [
        uid_of(p)
        for p in pods
        if status_of(p).get("phase") == "Running"
        and not is_deleting(p)
        and cnpods.draining_since(p) is None
        and store_of(state, p) is None
    ]


class Registration:
    """Per set, since when each of its running CNs has waited for its store."""

    def __init__(self) -> None:
        self._since: dict[tuple[str, str], dict[str, float]] = {}

    def next_look(
        self, key: tuple[str, str], waiting: Sequence[str], now: float, busy: float
    ) -> float | None:
        """Seconds until set ``key`` should look again for the ``waiting`` pods' stores
        (None: none waits); a pod no longer waiting is forgotten."""
        known = self._since.pop(key, {})
        if not waiting:
            return None
        since = {uid: known.get(uid, now) for uid in waiting}
        self._since[key] = since
        return min(min(max(FIRST_LOOK, now - started), busy) for started in since.values())
