"""``Upgrading`` and ``Scaling``: the planned work a set is doing, with its progress,
in words ``kubectl get -o wide``/``describe`` readers understand::

    Upgrading  True   Rolling            2/3 log stores updated
    Scaling    True   ScalingUp          2/3 CNs ready (scaling 2 -> 3)

and, once done, a message that no longer moves, so that a converged set writes
nothing::

    Upgrading  False  UpToDate           the log stores run the current spec
    Scaling    False  AtDesiredReplicas  at the 3 replicas the spec asks for

``Upgrading`` follows ``UpToDate``: True while a roll replaces pods (a new version,
config or template), not while a set starts for the first time. ``Scaling`` is
True from a change of ``replicas`` until that many pods are there and ready. The
count it scales from is the one the set last stood at, which only the condition
itself records (``at the N replicas``, ``scaling N -> M``): the pods cannot tell a
new pod from a crashed one. A set with no such record stands where its spec asks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from mo_operator.kube.meta.objects import view

__all__ = [
    "AT_DESIRED",
    "NO_ROLLOUT",
    "ROLLING",
    "SCALING",
    "SCALING_DOWN",
    "SCALING_UP",
    "UPGRADING",
    "UP_TO_DATE",
    "scaling",
    "upgrading",
]

UPGRADING: Final = "Upgrading"
SCALING: Final = "Scaling"
ROLLING: Final = "Rolling"
UP_TO_DATE: Final = "UpToDate"
NO_ROLLOUT: Final = "NoRollout"
SCALING_UP: Final = "ScalingUp"
SCALING_DOWN: Final = "ScalingDown"
AT_DESIRED: Final = "AtDesiredReplicas"

Verdict = tuple[bool, str, str]
"""A condition's status, reason and message."""

_FROM = re.compile(r"\(scaling (\d{1,9}) -> \d+\)$")
_AT = re.compile(r"^at the (\d{1,9}) replicas")


def upgrading(
    up_to_date: Mapping[str, Any] | None,
    was: Mapping[str, Any] | None,
    updated: int,
    replicas: int,
    noun: str,
) -> Verdict:
    """``Upgrading`` from the set's ``UpToDate`` (as just decided) and its own previous
    value ``was``: a stalled roll is still the roll it was (``UpToDate`` and ``Ready``
    say the stall), a stalled first start is no roll."""
    reason = (up_to_date or {}).get("reason")
    rolling = reason == "RollingUpdate" or (
        reason == "RolloutStalled" and (was or {}).get("status") == "True"
    )
    if rolling:
        return True, ROLLING, f"{updated}/{replicas} {noun} updated"
    if (up_to_date or {}).get("status") == "True":
        return False, UP_TO_DATE, f"the {noun} run the current spec"
    return False, NO_ROLLOUT, "no planned rollout running"


def _stood_at(was: Mapping[str, Any] | None) -> int | None:
    """The replica count the set last stood at, as its ``Scaling`` condition records it."""
    message = str((was or {}).get("message") or "")
    found = _FROM.search(message) if (was or {}).get("status") == "True" else _AT.match(message)
    return int(found.group(1)) if found else None


def scaling(was: Mapping[str, Any] | None, desired: int, ready: int, present: int, noun: str) -> Verdict:
    """``Scaling`` from its previous value ``was``, the ``desired`` replicas, the pods
    ``ready`` and ``present`` (every pod of the set, those leaving included)."""
    at = _stood_at(was)
    if at is None or at == desired or (present == desired and ready == desired):
        return False, AT_DESIRED, f"at the {desired} replicas the spec asks for"
    return (
        True,
        SCALING_UP if desired > at else SCALING_DOWN,
        f"{min(ready, desired)}/{desired} {noun} ready (scaling {at} -> {desired})",
    )


def condition(status: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    """The condition ``ctype`` of ``status``."""
    return view({"status": status}).condition(ctype)
