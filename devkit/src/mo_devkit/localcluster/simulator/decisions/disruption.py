"""kube-controller-manager's disruption controller for one PodDisruptionBudget
(``pkg/controller/disruption/disruption.go``, 1.28): the status the Eviction API
decides from.

- **expectedPods** and **desiredHealthy**: with ``maxUnavailable`` (or a percentage
  ``minAvailable``), the sum of the desired replicas of the pods' controllers (a
  StatefulSet, a Deployment through its ReplicaSet, a ReplicaSet, or anything with a
  scale subresource), and that sum less ``maxUnavailable`` (or the percentage of it),
  percentages rounded up; with an integer ``minAvailable``, the pods found and that
  number. A pod without a controller is left out of the sum (``UnmanagedPods``); one
  whose controller cannot be found fails the sync (``failSafe``: no disruption allowed,
  condition reason SyncFailed).
- **currentHealthy**: pods Ready, not being deleted, and not recorded in
  ``disruptedPods`` in the last ``DeletionTimeout`` (an eviction the API server let
  through and whose deletion has not shown yet).
- **disruptionsAllowed**: currentHealthy - desiredHealthy, at least 0, and 0 while no
  pod is expected.
- **disruptedPods** keeps only the pods still there, not being deleted, and recorded
  less than ``DeletionTimeout`` ago; the budget is looked at again when the first
  of those expires.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.meta.times import format_time, parse_time

from ..core.objects import Obj, generation_of, is_deleting, name_of, status_of
from ..core.pods import is_pod_ready

DELETION_TIMEOUT = 120.0
"""``DeletionTimeout``: how long an eviction's pod may take to start its deletion."""
CONDITION = "DisruptionAllowed"


@dataclass(frozen=True)
class Expected:
    """What the budget's pods' controllers want: the sum of their desired replicas
    (None when the budget counts the pods themselves: integer ``minAvailable``)."""

    replicas: int | None
    error: str | None = None
    """Why the controllers could not be read (the sync fails safe)."""


@dataclass(frozen=True)
class BudgetPlan:
    status: Obj | None
    """The budget's new status, None when it is already right."""
    recheck_after: float | None = None


def counts_controllers(pdb: Mapping[str, Any]) -> bool:
    """Whether the budget's bound is relative to its pods' controllers' scale."""
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        return True
    return isinstance(spec.get("minAvailable"), str)


def _scaled(value: int | str, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent`` rounding up."""
    if isinstance(value, int):
        return value
    return math.ceil(int(value.rstrip("%")) * total / 100)


def _expected(pdb: Mapping[str, Any], pods: Sequence[Obj], controllers: int | None) -> tuple[int, int]:
    spec = pdb.get("spec") or {}
    if spec.get("maxUnavailable") is not None:
        expected = controllers or 0
        return expected, max(0, expected - _scaled(spec["maxUnavailable"], expected))
    bound = spec.get("minAvailable")
    if isinstance(bound, int):
        return len(pods), bound
    if isinstance(bound, str):
        expected = controllers or 0
        return expected, _scaled(bound, expected)
    return 0, 0


def _condition(into: Obj, previous: Sequence[Mapping[str, Any]], **wanted: Any) -> None:
    """``apimeta.SetStatusCondition``: the transition time moves only with the status."""
    conditions = [dict(c) for c in previous]
    for c in conditions:
        if c.get("type") == CONDITION:
            moved = c.get("status") != wanted["status"]
            c.update(wanted)
            if moved:
                c["lastTransitionTime"] = wanted["lastTransitionTime"]
            else:
                c["lastTransitionTime"] = c.get("lastTransitionTime") or wanted["lastTransitionTime"]
            break
    else:
        conditions.append(dict(wanted))
    into["conditions"] = conditions


def plan_budget(pdb: Obj, pods: Sequence[Obj], expected: Expected, now: float) -> BudgetPlan:
    """The status the disruption controller would write now (None: unchanged)."""
    old = status_of(pdb)
    generation = generation_of(pdb)
    stamp = format_time(now)
    if expected.error is not None:  # failSafe
        failed = dict(old)
        failed["disruptionsAllowed"] = 0
        _condition(
            failed,
            old.get("conditions") or (),
            type=CONDITION,
            status="False",
            observedGeneration=int(old.get("observedGeneration") or 0),
            reason="SyncFailed",
            message=expected.error,
            lastTransitionTime=stamp,
        )
        return BudgetPlan(None if failed == old else failed)
    expected_count, desired = _expected(pdb, pods, expected.replicas)
    disrupted: dict[str, str] = {}
    recheck: float | None = None
    recorded = old.get("disruptedPods") or {}
    for pod in pods:
        at = parse_time(recorded.get(name_of(pod)))
        if is_deleting(pod) or at is None:
            continue
        if at + DELETION_TIMEOUT >= now:
            disrupted[name_of(pod)] = recorded[name_of(pod)]
            left = at + DELETION_TIMEOUT - now
            recheck = left if recheck is None else min(recheck, left)
    healthy = sum(1 for p in pods if not is_deleting(p) and name_of(p) not in disrupted and is_pod_ready(p))
    allowed = healthy - desired
    if expected_count <= 0 or allowed <= 0:
        allowed = 0
    status: Obj = {
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected_count,
        "disruptionsAllowed": allowed,
        "observedGeneration": generation,
    }
    if disrupted:
        status["disruptedPods"] = disrupted
    _condition(
        status,
        old.get("conditions") or (),
        type=CONDITION,
        status="True" if allowed > 0 else "False",
        observedGeneration=generation,
        reason="SufficientPods" if allowed > 0 else "InsufficientPods",
        message="",
        lastTransitionTime=stamp,
    )
    unchanged = all(old.get(k, 0) == status[k] for k in status if k not in ("disruptedPods", "conditions"))
    unchanged = unchanged and (old.get("disruptedPods") or {}) == disrupted
    unchanged = unchanged and _same_conditions(old.get("conditions") or (), status["conditions"])
    return BudgetPlan(None if unchanged else status, recheck)


def _same_conditions(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> bool:
    """``ConditionsAreUpToDate``: the DisruptionAllowed condition says what it should."""

    def key(conditions: Sequence[Mapping[str, Any]]) -> Any:
        return [
            (c.get("type"), c.get("status"), c.get("reason"), c.get("observedGeneration"))
            for c in conditions
            if c.get("type") == CONDITION
        ]

    return bool(key(old)) and key(old) == key(new)
