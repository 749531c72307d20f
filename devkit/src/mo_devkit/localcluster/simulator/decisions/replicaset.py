"""The ReplicaSet controller's decision for one ReplicaSet
(pkg/controller/replicaset/replica_set.go): create or delete pods to match
``spec.replicas``, choosing victims as ``ActivePodsWithRanks`` does, and the
status counters."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.meta.times import parse_time

from ..core.actions import Action, Create, pod_delete
from ..core.kinds import POD, REPLICASET, Kind
from ..core.objects import (
    Obj,
    find_condition,
    generation_of,
    is_deleting,
    labels_of,
    meta,
    name_of,
    namespace_of,
    new_controller_ref,
    spec_of,
    status_of,
)
from ..core.pods import is_active, is_pod_available, is_pod_ready, node_name_of, phase_of
from ..core.selectors import map_selector_matches
from .ownership import claim_children

#: Pods a controller creates or deletes in one sync at most (``BurstReplicas``).
BURST = 500


def pod_from_template(owner: Obj, owner_kind: Kind, template: Mapping[str, Any]) -> Obj:
    """``controller.GetPodFromTemplate`` with a generated name."""
    tmeta = template.get("metadata") or {}
    pod_meta: Obj = {
        "generateName": f"{name_of(owner)}-",
        "namespace": namespace_of(owner),
        "labels": dict(tmeta.get("labels") or {}),
        "ownerReferences": [new_controller_ref(owner, owner_kind)],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": pod_meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def _deletion_rank(pod: Obj, now: float) -> tuple[Any, ...]:
    """Sort key, most deletable first (controller.ActivePods ordering):
    unassigned, then Pending before Unknown before Running, not ready before
    ready, ready for less time, more restarts, newer."""
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(phase_of(pod), 0)
    ready = is_pod_ready(pod)
    ready_since = (
        parse_time(
            (find_condition(status_of(pod).get("conditions"), "Ready") or {}).get("lastTransitionTime")
        )
        or 0.0
    )
    restarts = max(
        (int(c.get("restartCount") or 0) for c in status_of(pod).get("containerStatuses") or []), default=0
    )
    created = parse_time(meta(pod).get("creationTimestamp")) or 0.0
    return (
        1 if node_name_of(pod) else 0,
        phase_rank,
        1 if ready else 0,
        -ready_since if ready else 0,
        -restarts,
        -created,
        name_of(pod),
    )


@dataclass(frozen=True)
class ReplicaSetPlan:
    actions: list[Action]
    status: Obj | None
    requeue_after: float | None = None


_FIELDS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "observedGeneration")


def plan_replicaset(rs: Obj, pods: Sequence[Obj], now: float) -> ReplicaSetPlan:
    spec = spec_of(rs)
    owned, actions = claim_children(rs, REPLICASET, POD, spec.get("selector"), pods)
    active = [p for p in owned if is_active(p)]
    want = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
    if not is_deleting(rs):
        diff = len(active) - want
        if diff < 0:
            template = spec.get("template") or {}
            actions += [
                Create(POD, pod_from_template(rs, REPLICASET, template)) for _ in range(min(-diff, BURST))
            ]
        elif diff > 0:
            victims = sorted(active, key=lambda p: _deletion_rank(p, now))[: min(diff, BURST)]
            actions += [pod_delete(p) for p in victims]
    min_ready = int(spec.get("minReadySeconds") or 0)
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    status = {
        "replicas": len(active),
        "fullyLabeledReplicas": sum(1 for p in active if map_selector_matches(template_labels, labels_of(p))),
        "readyReplicas": sum(1 for p in active if is_pod_ready(p)),
        "availableReplicas": sum(1 for p in active if is_pod_available(p, min_ready, now)),
        "observedGeneration": generation_of(rs),
    }
    old = status_of(rs)
    differs = any(int(old.get(f) or 0) != status[f] for f in _FIELDS)
    requeue = None
    if min_ready and status["readyReplicas"] > status["availableReplicas"]:
        requeue = 1.0
    return ReplicaSetPlan(actions, status if differs else None, requeue)
