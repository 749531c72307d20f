"""A CNSet with ``podManagementPolicy: Pooling``: warm CNs that a CNPool hands
out to CNClaims.

The pods are the same CN pods (``pods.py``); what differs is who decides
about them. Each pod carries its place in the pool in the label
``pool.matrixorigin.io/phase`` (upstream's names and values):

``Unknown``
    just started (this set labels every new pod so). Once HAKeeper knows
    its store, the set makes sure the store is Draining with no labels
    (a pooling CN starts Draining: ``cn.init-work-state``) and moves the pod
    to ``Idle``.
``Idle``
    warm and claimable. Draining in HAKeeper with no labels, so the proxy
    sends it no session. (Back to ``Unknown`` should HAKeeper forget it.)
``Bound``
    a CNClaim holds it (label ``pool.matrixorigin.io/claimed-by``); the claim
    controller put its store to work with the claim's labels. This set never
    rolls, drains or retires a Bound pod on its own.
``Draining``
    its claim went and reclaimed it (annotation ``matrixorigin.io/reclaimed-at``).
    The set keeps its store Draining with no labels; once the CN holds no
    session (and ``minDelaySeconds`` passed) it goes back to ``Idle``, or to
    ``Terminating`` when it is outdated, asked to (``delete-on-reclaim``) or
    its drain outlasted ``storeDrainTimeout``.
``Terminating``
    leaving: the set deletes it.

The set keeps ``replicas`` pods that are not Terminating, counting Bound and
Draining ones first (never removed for a smaller ``replicas``); the pool
sets ``replicas``. Which spare pods go on scale-in is decided here (not yet
registered ones first, then the highest index), and each is first labelled
Terminating under a resourceVersion precondition, so a claim binding the
same pod at the same moment either wins (the label write fails and the pod
stays) or loses (its own write fails). A Pooling set never rolls: a pool
starts a new set for a new template and lets the old one drain.

Every phase change of a pod is a label patch carrying the resourceVersion
the decision was made on: a decision made on a stale cache fails with a
conflict and is made again, never applied over someone else's change.

A reclaimed pod's load (and, when it leaves, its lock tables) is read with the
round, only once its drain may be over (``reclaim_asks_load``).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.controller.outcome import Requeue
from mo_operator.kube.meta.objects import annotations_of, labels_of, namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, CNLoad, CNStore, StoreNotFound, WorkState
from mo_operator.matrixone.names import free_ordinals

from ..framework import resources as r
from ..framework.decision import Emit
from ..framework.meta import is_deleting, name_of, uid_of
from ..framework.writes import Delete, Intent, Patch
from ..specs import pods as podutil
from . import pods as cnpods
from .drain import drain_limits
from .locks import lock_step, migrates_locks
from .observed import CNSetView, Draft
from .stores import gate_patch, store_call, store_condition, store_of

Obj = dict[str, Any]

IN_USE = frozenset({labels.POOL_PHASE_BOUND, labels.POOL_PHASE_DRAINING})
"""Phases of pods a claim holds or just let go: never removed by the set."""
PHASES = frozenset(
    {
        labels.POOL_PHASE_UNKNOWN,
        labels.POOL_PHASE_IDLE,
        labels.POOL_PHASE_BOUND,
        labels.POOL_PHASE_DRAINING,
        labels.POOL_PHASE_TERMINATING,
    }
)


def is_pooling(spec: Mapping[str, Any]) -> bool:
    """Whether a CNSet's spec, as JSON, is managed by a CNPool (``pooled`` of a typed spec)."""
    return spec.get("podManagementPolicy") == labels.POOLING


def pooled(spec: CNSetSpec) -> bool:
    """Whether a CNPool manages the pods of the set (``podManagementPolicy: Pooling``)."""
    return spec.pod_management_policy == labels.POOLING


def phase_of(pod: Mapping[str, Any]) -> str:
    """The pool phase of a pod; a missing or unknown value reads as Unknown."""
    value = labels_of(pod).get(labels.POOL_PHASE)
    return str(value) if value in PHASES else labels.POOL_PHASE_UNKNOWN


def as_pool_pod(pod: Obj) -> Obj:
    """A new CN pod of a Pooling set: it starts Unknown, and says it is pooled."""
    meta = pod["metadata"]
    meta["labels"] = {**meta.get("labels", {}), labels.POOL_PHASE: labels.POOL_PHASE_UNKNOWN}
    meta["annotations"] = {**meta.get("annotations", {}), labels.POOL_MANAGEMENT_POLICY: labels.POOLING}
    return pod


# ------------------------------------------------------------------ decision
@dataclass(frozen=True)
class PoolMember:
    """What the decision needs to know of one pod."""

    name: str
    index: int
    phase: str
    ready: bool
    """Its containers are ready (see ``members``)."""
    deleting: bool = False


@dataclass(frozen=True)
class PoolingDecision:
    create: tuple[int, ...] = ()
    """Indices of pods to create."""
    retire: tuple[str, ...] = ()
    """Pods to remove: Terminating ones, spare ones named in podsToDelete, then the surplus."""


IDLE_MESSAGE = "the CN is registered and waits for a claim"


def _keep_order(pod: PoolMember) -> tuple[bool, bool, int]:
    """Sort key of spare pods, the ones most worth keeping first: registered
    (Idle) and ready, then the lowest index (the oldest)."""
    return (pod.phase != labels.POOL_PHASE_IDLE, not pod.ready, pod.index)


def decide_pooling(
    pods: Sequence[PoolMember],
    replicas: int,
    pods_to_delete: Collection[str] = (),
    *,
    max_create: int | None = None,
) -> PoolingDecision:
    """Which pods to create and remove, toward ``replicas`` pods that are not Terminating.

    Bound and Draining pods are always kept, even beyond ``replicas``; spare
    (Unknown and Idle) pods fill the rest, the least useful leaving first. At most
    ``max_create`` pods are created in one round (the next rounds make the rest).
    """
    live = [p for p in pods if not p.deleting]
    in_use = [p for p in live if p.phase in IN_USE]
    leaving = sorted(
        (
            p
            for p in live
            if p.phase == labels.POOL_PHASE_TERMINATING
            or (p.name in pods_to_delete and p.phase not in IN_USE)
        ),
        key=lambda p: p.index,
    )
    gone = {p.name for p in leaving}
    spare = sorted((p for p in live if p.phase not in IN_USE and p.name not in gone), key=_keep_order)
    room = max(replicas - len(in_use), 0)
    kept, surplus = spare[:room], spare[room:]
    missing = room - len(kept)
    if max_create is not None:
        missing = min(missing, max_create)
    create = free_ordinals(missing, {p.index for p in pods})
    return PoolingDecision(tuple(create), tuple(p.name for p in [*leaving, *reversed(surplus)]))


def members(pods: Sequence[Mapping[str, Any]]) -> list[PoolMember]:
    return [PoolMember(name_of(p), cnpods.index_of(p), phase_of(p), _serves(p), is_deleting(p)) for p in pods]


def _serves(pod: Mapping[str, Any]) -> bool:
    """Whether the pod's containers are ready. Not its Ready condition alone: that
    also waits on the pool's own readiness gate, which a pod just back from a drain
    has False until the kubelet sees the gate turn, and a shrinking pool would
    then remove the warm pod that came back instead of a newer spare."""
    containers = podutil.condition(pod, "ContainersReady")
    return podutil.is_ready(pod) or (containers is not None and containers.get("status") == "True")


# ------------------------------------------------------------------- writes
def set_phase(pod: Mapping[str, Any], phase: str, *, annotations: Obj | None = None) -> Patch:
    """Move ``pod`` to ``phase``, on condition that it is still the pod we decided on."""
    meta: Obj = {
        "resourceVersion": pod["metadata"]["resourceVersion"],
        "labels": {labels.POOL_PHASE: phase},
    }
    if annotations:
        meta["annotations"] = annotations
    return Patch(
        r.PODS, namespace_of(pod), name_of(pod), {"metadata": meta}, what=f"mark CN {name_of(pod)} {phase}"
    )


def retire(pod: Mapping[str, Any]) -> list[Intent]:
    """Label a spare pod Terminating (so no claim takes it meanwhile; a conflict means
    a claim just did), then delete it."""
    out: list[Intent] = []
    if phase_of(pod) != labels.POOL_PHASE_TERMINATING:
        out.append(set_phase(pod, labels.POOL_PHASE_TERMINATING))
    out.append(Delete(r.PODS, namespace_of(pod), name_of(pod), uid=uid_of(pod)))
    return out


def _readiness(
    pod: Mapping[str, Any], status: bool, reason: str, message: str, now: float, out: Draft
) -> None:
    current = podutil.condition(pod, labels.CN_STORE_READINESS)
    if current is not None and current.get("status") == str(status) and current.get("reason") == reason:
        return
    condition = store_condition(pod, status, reason, message, now)
    out.intents.append(gate_patch(pod, condition, f"set the readiness of CN {name_of(pod)}: {reason}"))


def _out_of_service(store: CNStore | None) -> bool:
    """HAKeeper holds the store Draining with no labels (a pooled CN out of service)."""
    return store is not None and store.work_state is WorkState.DRAINING and not store.labels


def reclaim_asks_load(view: CNSetView, pod: Mapping[str, Any]) -> bool:
    """Whether the drain of a reclaimed pod may be over: what its CN still holds decides."""
    if is_deleting(pod) or phase_of(pod) != labels.POOL_PHASE_DRAINING:
        return False
    if not _out_of_service(store_of(view.state, pod)):
        return False
    min_delay, timeout = drain_limits(view.spec, view.drain_timeout)
    started = podutil.parse_time(annotations_of(pod).get(labels.RECLAIMED_AT))
    return started is None or min_delay <= view.now - started < timeout


def reclaim_asks_locks(spec: CNSetSpec, pod: Mapping[str, Any], load: CNLoad | AdminError) -> bool:
    """Whether a drained reclaimed pod leaves (rather than returning Idle) and its
    lock tables must move first."""
    idle = isinstance(load, StoreNotFound) or (isinstance(load, CNLoad) and load.idle)
    return idle and _leaves(pod, unregistered=False) and migrates_locks(pod, spec)


def _leaves(pod: Mapping[str, Any], *, unregistered: bool) -> bool:
    return (
        labels.DELETE_ON_RECLAIM in annotations_of(pod)
        or labels.POD_OUTDATED in labels_of(pod)
        or unregistered
    )


def sync_pool_stores(view: CNSetView, retiring: Collection[str], out: Draft) -> bool:
    """Move pods along their pool phases and keep their readiness gate; True while
    some pod still waits (to register, or for its sessions to leave)."""
    if view.state is None:
        return bool(view.pods)
    admin, state, now = view.admin, view.state, view.now
    unsettled = False
    for pod in view.pods:
        if is_deleting(pod) or name_of(pod) in retiring:
            continue
        phase = phase_of(pod)
        store = store_of(state, pod)
        uuid = cnpods.store_uuid(pod)
        if phase == labels.POOL_PHASE_UNKNOWN:
            if store is None:
                unsettled = True
                _readiness(pod, False, "NotRegistered", "the CN has not registered in HAKeeper yet", now, out)
            elif not _out_of_service(store):
                unsettled = True
                call = functools.partial(admin.set_cn_work_state, uuid, WorkState.DRAINING, {})
                out.intents.append(store_call(f"keep new CN {name_of(pod)} out of service", call))
            else:
                out.intents.append(set_phase(pod, labels.POOL_PHASE_IDLE))
                _readiness(pod, True, "Idle", IDLE_MESSAGE, now, out)
        elif phase == labels.POOL_PHASE_IDLE:
            if store is None:  # HAKeeper forgot it: not claimable until it registers again
                unsettled = True
                out.intents.append(set_phase(pod, labels.POOL_PHASE_UNKNOWN))
                _readiness(pod, False, "NotRegistered", "the CN is not registered in HAKeeper", now, out)
            else:
                _readiness(pod, True, "Idle", IDLE_MESSAGE, now, out)
        elif phase == labels.POOL_PHASE_BOUND:
            if store is not None and store.work_state is WorkState.WORKING:
                _readiness(pod, True, "Bound", "the CN is claimed and Working", now, out)
            else:
                _readiness(pod, False, "Binding", "its claim has not put the CN to work yet", now, out)
        elif phase == labels.POOL_PHASE_DRAINING:
            _readiness(pod, False, "Reclaiming", "the CN drains before it returns to its pool", now, out)
            if store is not None and not _out_of_service(store):
                call = functools.partial(admin.set_cn_work_state, uuid, WorkState.DRAINING, {})
                out.intents.append(store_call(f"drain reclaimed CN {name_of(pod)}", call))
                unsettled = True
                continue
            if not _reclaim_drained(view, pod, store is None, out):
                unsettled = True
    return unsettled


def _reclaim_drained(view: CNSetView, pod: Mapping[str, Any], unregistered: bool, out: Draft) -> bool:
    """Finish the drain of a reclaimed pod if it is over; True when it is. A pod
    that leaves (rather than returning Idle) first has its lock tables moved."""
    min_delay, timeout = drain_limits(view.spec, view.drain_timeout)
    started = podutil.parse_time(annotations_of(pod).get(labels.RECLAIMED_AT))
    elapsed = view.now - started if started is not None else None
    if elapsed is not None and elapsed >= timeout:
        out.events.append(
            Emit(
                "Warning",
                "DrainTimeout",
                f"reclaimed CN {name_of(pod)} still held sessions after {int(elapsed)}s: removing it",
            )
        )
        out.intents.append(set_phase(pod, labels.POOL_PHASE_TERMINATING))
        return True
    if elapsed is not None and elapsed < min_delay:
        out.look(Requeue(min_delay - elapsed, f"CN {name_of(pod)} to have drained for minDelaySeconds"))
        return False
    if not unregistered:
        load = view.loads.get(name_of(pod))
        if not isinstance(load, StoreNotFound) and not (isinstance(load, CNLoad) and load.idle):
            return False
    leave = _leaves(pod, unregistered=unregistered)
    if leave and not unregistered and migrates_locks(pod, view.spec):
        moved, _ = lock_step(view, pod, out)
        if not moved:
            return False
    phase = labels.POOL_PHASE_TERMINATING if leave else labels.POOL_PHASE_IDLE
    out.intents.append(set_phase(pod, phase, annotations={labels.RECLAIMED_AT: None}))
    if not leave:
        _readiness(pod, True, "Idle", IDLE_MESSAGE, view.now, out)
    out.log.append(f"reclaimed CN {name_of(pod)} drained: {phase}")
    return True


# ------------------------------------------------------------------- status
def pool_counts(pods: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Live pods per pool phase."""
    counts = dict.fromkeys(sorted(PHASES), 0)
    for pod in pods:
        if not is_deleting(pod):
            counts[phase_of(pod)] += 1
    return counts


def describe_counts(counts: Mapping[str, int]) -> str:
    return (
        f"{counts[labels.POOL_PHASE_IDLE]} idle, {counts[labels.POOL_PHASE_BOUND]} bound, "
        f"{counts[labels.POOL_PHASE_DRAINING]} reclaiming, {counts[labels.POOL_PHASE_UNKNOWN]} starting"
    )
