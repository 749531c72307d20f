"""The decisions of the CN pool controllers, as pure functions of what they see.

- ``pool_replicas``: how many pods a pool's current CNSet runs;
- ``claim_candidates``: which idle pods a claim may take, best first;
- ``migration_step``: what a claim moving to another pod does next about the
  pod it leaves;
- ``claimset_scale`` and ``claim_deletion_order``: how many claims a
  CNClaimSet creates or deletes, and which go first.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaimSpec
from mo_operator.api.cnpool import CNPool
from mo_operator.kube.meta.objects import labels_of, status_of
from mo_operator.kube.meta.selectors import Selector, selector_from_dict
from mo_operator.matrixone import labels

from ..cnset.pooling import phase_of
from ..framework.meta import is_deleting, name_of
from ..framework.typed import read

Obj = dict[str, Any]

PENDING, BOUND, LOST, OUTDATED = "Pending", "Bound", "Lost", "Outdated"


# ---------------------------------------------------------------- the pool
@dataclass(frozen=True)
class PoolSize:
    replicas: int
    """Pods the pool's current CNSet runs (Terminating ones not counted)."""
    capped: bool = False
    """``maxPods`` kept it below what in-use pods, pending claims and ``maxIdle`` ask for."""


def pool_replicas(
    *,
    in_use: int,
    pending: int,
    max_idle: int,
    max_pods: int | None,
    old_in_use: int = 0,
    current_replicas: int = 0,
) -> PoolSize:
    """``in_use`` + ``pending`` + ``max_idle`` pods, within ``max_pods`` (less the pods
    older templates still hold), never fewer than ``in_use``.

    While claims are pending the set does not shrink (``current_replicas`` is kept):
    idle pods are about to be taken, and removing one now would only start another.
    """
    want = in_use + pending + max_idle
    limit = None if max_pods is None else max(max_pods - old_in_use, in_use)
    capped = limit is not None and want > limit
    if limit is not None:
        want = min(want, limit)
    if pending > 0 and want < current_replicas:
        want = current_replicas if limit is None else min(current_replicas, limit)
    return PoolSize(want, capped)


# --------------------------------------------------------------- the claim
_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> tuple[tuple[int, int | str], ...]:
    """Name order with numbers compared as numbers (``x-cn-2`` before ``x-cn-10``)."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(name) if part)


def claimable(pod: Mapping[str, Any]) -> bool:
    """An Idle pool pod that no claim holds, of the pool's current template."""
    pod_labels = labels_of(pod)
    return (
        phase_of(pod) == labels.POOL_PHASE_IDLE
        and not is_deleting(pod)
        and not pod_labels.get(labels.POOL_CLAIMED_BY)
        and labels.POD_OUTDATED not in pod_labels
    )


def claim_candidates(
    spec: CNClaimSpec, pods: Sequence[Mapping[str, Any]], taken: Collection[str] = ()
) -> list[Mapping[str, Any]]:
    """The pods a claim with ``spec`` may bind, best first.

    A candidate is claimable (``claimable``), matches the claim's ``selector``,
    belongs to its ``poolName`` when it names one, and is not the ``podName`` of
    another claim (``taken``). A pod its owner (``ownerName``) held last comes
    first, then name order: every claim tries the same pods in the same order,
    and the resourceVersion precondition of the bind decides who gets each.
    """
    selector = claim_selector(spec)
    pool, owner = spec.pool_name, spec.owner_name
    found = [
        p
        for p in pods
        if claimable(p)
        and name_of(p) not in taken
        and selector.matches(labels_of(p))
        and (not pool or labels_of(p).get(labels.POOL_NAME) == pool)
    ]

    def key(pod: Mapping[str, Any]) -> tuple[bool, tuple[tuple[int, int | str], ...]]:
        last = labels_of(pod).get(labels.POD_LAST_OWNER)
        return (not (owner and last == owner), natural_key(name_of(pod)))

    return sorted(found, key=key)


def matching_pool(spec: CNClaimSpec, pools: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The pool (first by name) whose pods the claim's selector matches, to nominate it to."""
    selector = claim_selector(spec)
    for pool in sorted(pools, key=name_of):
        if is_deleting(pool):
            continue
        found = read(CNPool, pool)
        if found is not None and selector.matches(found.spec.pod_labels or {}):
            return pool
    return None


def claim_selector(spec: CNClaimSpec) -> Selector:
    """The claim's ``selector``; none selects nothing, as upstream."""
    return selector_from_dict(dump(spec.selector) if spec.selector is not None else None)


def bound_phase(pod: Mapping[str, Any] | None, claim_name: str) -> str | None:
    """The phase of a claim whose ``podName`` is ``pod``: Bound, Outdated, Lost, or
    None when the pod is free to be taken (again)."""
    if pod is None or is_deleting(pod):
        return LOST
    if status_of(pod).get("phase") in ("Succeeded", "Failed", "Unknown"):
        return LOST
    pod_labels = labels_of(pod)
    holder = pod_labels.get(labels.POOL_CLAIMED_BY)
    if holder == claim_name and phase_of(pod) == labels.POOL_PHASE_BOUND:
        return OUTDATED if labels.POD_OUTDATED in pod_labels else BOUND
    if not holder and claimable(pod):
        return None
    return LOST


# ------------------------------------------------------------ migration
DONE, WAIT, RECLAIM, DRAINING = "Done", "Wait", "Reclaim", "Draining"


@dataclass(frozen=True)
class MigrationStep:
    """What a claim migrating away from its source pod does next."""

    action: str
    """DONE (the source is back in its pool, or gone), WAIT (the target has not worked
    long enough), RECLAIM (give the source back, Draining) or DRAINING (report the load
    still on it and look again)."""
    wait: float = 0.0
    """With WAIT, how long."""


def migration_step(
    source: Mapping[str, Any] | None,
    claim_name: str,
    target_working_since: float | None,
    now: float,
    delay: float,
) -> MigrationStep:
    """Upstream's migration (``cnclaim/migrate.go``), as a decision.

    The source is drained only once the target has been Working with the claim's
    labels for ``delay`` seconds (``target_working_since``; None: not yet): the proxy
    must know where to send the sessions it moves off the source. A source no longer
    held by this claim, not Draining, or gone, ends the migration.
    """
    if source is None or is_deleting(source):
        return MigrationStep(DONE)
    phase = phase_of(source)
    holder = labels_of(source).get(labels.POOL_CLAIMED_BY)
    if phase == labels.POOL_PHASE_DRAINING:
        return MigrationStep(DRAINING)
    if phase != labels.POOL_PHASE_BOUND or holder != claim_name:
        return MigrationStep(DONE)
    if target_working_since is None:
        return MigrationStep(WAIT, delay)
    elapsed = now - target_working_since
    if elapsed < delay:
        return MigrationStep(WAIT, delay - elapsed)
    return MigrationStep(RECLAIM)


# ------------------------------------------------------------ the claimset
@dataclass(frozen=True)
class ClaimScale:
    create: int = 0
    delete: int = 0


def claimset_scale(phases: Sequence[str], replicas: int) -> ClaimScale:
    """How many claims to create or delete, given the phases of the set's live claims.

    Upstream's rule, a surge of one to roll: while some bound claims hold pods of an
    older template (Outdated) and there are enough bound claims, one more claim is
    made; once it is bound the set has one too many and an Outdated claim goes.
    """
    updated = sum(1 for p in phases if p == BOUND)
    outdated = sum(1 for p in phases if p == OUTDATED)
    current = len(phases)
    if updated + outdated > replicas:
        return ClaimScale(delete=current - replicas)
    desired = replicas
    if updated + outdated >= replicas and updated < replicas:
        desired += 1
    if desired > current:
        return ClaimScale(create=desired - current)
    return ClaimScale(delete=current - desired)


_CLAIM_PHASE_ORDER = {PENDING: 0, LOST: 1, OUTDATED: 2, BOUND: 3}
_POD_PHASE_ORDER = {"Pending": 0, "Failed": 1, "Running": 2}


@dataclass(frozen=True)
class ClaimVictim:
    """What the deletion order needs to know of one claim and its pod."""

    name: str
    index: int
    phase: str
    has_pod: bool = False
    scheduled: bool = False
    pod_phase: str = ""
    ready: bool = False
    deletion_cost: int = 0
    """The pod's ``controller.kubernetes.io/pod-deletion-cost``."""
    sessions: int = 0
    pod_created: float = 0.0


def _victim_key(c: ClaimVictim) -> tuple[Any, ...]:
    if not c.has_pod:
        return (0, _CLAIM_PHASE_ORDER.get(c.phase, 0), -c.index)
    return (
        1,
        _CLAIM_PHASE_ORDER.get(c.phase, 0),
        c.scheduled,
        _POD_PHASE_ORDER.get(c.pod_phase, 0),
        c.ready,
        c.deletion_cost,
        c.sessions,
        -c.pod_created,
    )


def claim_deletion_order(claims: Sequence[ClaimVictim]) -> list[str]:
    """Claims in the order they go on scale-in (upstream's, with sessions added):
    claims without a pod, then by phase (Pending, Lost, Outdated, Bound), then by
    their pod: unscheduled, not running, not ready, the lowest deletion cost, the
    fewest sessions, the newest."""
    return [c.name for c in sorted(claims, key=_victim_key)]
