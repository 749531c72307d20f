"""The Deployment controller's decision for one Deployment
(pkg/controller/deployment: sync.go, rolling.go, recreate.go, progress.go,
util/deployment_util.go): the new ReplicaSet named by ``pod-template-hash``,
revisions, rolling updates bounded by maxSurge/maxUnavailable, Recreate,
history clean-up, and status with the Available and Progressing conditions.

Scaling in the middle of a rollout goes through the rolling step rather than
``scale``'s proportional split; the end state is the same.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.actions import Action, Create, Delete, Patch
from ..core.kinds import DEPLOYMENT, REPLICASET
from ..core.objects import (
    Obj,
    annotations_of,
    find_condition,
    generation_of,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    new_controller_ref,
    parse_time,
    rfc3339,
    spec_of,
    status_of,
    uid_of,
)
from ..core.pods import is_terminal
from .ownership import claim_children
from .revisions import template_hash

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX = "deployment.kubernetes.io/max-replicas"
_SKIPPED_ANNOTATIONS = (
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    DESIRED,
    MAX,
    "deployment.kubernetes.io/revision-history",
)


def _int_or_percent(value: Any, total: int, round_up: bool) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value)
    if text.endswith("%"):
        exact = int(text[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(text)


def fenceposts(d: Obj) -> tuple[int, int]:
    """``ResolveFenceposts``: (maxSurge rounded up, maxUnavailable rounded
    down), with maxUnavailable 1 when both would be 0."""
    strategy = spec_of(d).get("strategy") or {}
    if (strategy.get("type") or "RollingUpdate") != "RollingUpdate":
        return 0, 0
    ru = strategy.get("rollingUpdate") or {}
    replicas = _replicas(d)
    surge = _int_or_percent(ru.get("maxSurge", "25%"), replicas, True)
    unavailable = _int_or_percent(ru.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _replicas(obj: Obj) -> int:
    r = spec_of(obj).get("replicas")
    return 1 if r is None else int(r)


def _template_without_hash(template: Mapping[str, Any]) -> Obj:
    t = copy.deepcopy(dict(template))
    labels = (t.get("metadata") or {}).get("labels")
    if isinstance(labels, dict):
        labels.pop(HASH_LABEL, None)
    return t


def _revision(rs: Obj) -> int:
    try:
        return int(annotations_of(rs).get(REVISION, "0"))
    except ValueError:
        return 0


def _created(rs: Obj) -> tuple[str, str]:
    return str(meta(rs).get("creationTimestamp") or ""), name_of(rs)


@dataclass(frozen=True)
class DeploymentPlan:
    actions: list[Action]
    status: Obj | None
    requeue_after: float | None = None


def _new_replicaset(d: Obj, hash_: str, replicas: int, revision: int, max_surge: int) -> Obj:
    template = copy.deepcopy(spec_of(d).get("template") or {})
    template.setdefault("metadata", {}).setdefault("labels", {})[HASH_LABEL] = hash_
    selector = copy.deepcopy(spec_of(d).get("selector") or {})
    selector.setdefault("matchLabels", {})[HASH_LABEL] = hash_
    annotations = {k: v for k, v in annotations_of(d).items() if k not in _SKIPPED_ANNOTATIONS}
    annotations.update(
        {REVISION: str(revision), DESIRED: str(_replicas(d)), MAX: str(_replicas(d) + max_surge)}
    )
    spec: Obj = {"replicas": replicas, "selector": selector, "template": template}
    if spec_of(d).get("minReadySeconds"):
        spec["minReadySeconds"] = spec_of(d)["minReadySeconds"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{name_of(d)}-{hash_}",
            "namespace": namespace_of(d),
            "labels": dict(template["metadata"]["labels"]),
            "annotations": annotations,
            "ownerReferences": [new_controller_ref(d, DEPLOYMENT)],
        },
        "spec": spec,
    }


def _scale(rs: Obj, replicas: int, d: Obj, max_surge: int) -> Patch:
    return Patch(
        REPLICASET,
        namespace_of(rs),
        name_of(rs),
        {
            "metadata": {"annotations": {DESIRED: str(_replicas(d)), MAX: str(_replicas(d) + max_surge)}},
            "spec": {"replicas": replicas},
        },
    )


def _set_condition(conds: list[Obj], new: Obj, now: str, *, refresh: bool = False) -> list[Obj]:
    """``SetDeploymentCondition``; ``refresh`` updates lastUpdateTime of a
    True Progressing condition even when its reason holds (progress made)."""
    cur = find_condition(conds, new["type"])
    if (
        cur is not None
        and cur.get("status") == new["status"]
        and cur.get("reason") == new.get("reason")
        and not refresh
    ):
        return conds
    cond = dict(new, lastUpdateTime=now, lastTransitionTime=now)
    if cur is not None and cur.get("status") == new["status"]:
        cond["lastTransitionTime"] = cur.get("lastTransitionTime", now)
    return [c for c in conds if c.get("type") != new["type"]] + [cond]


def plan_deployment(d: Obj, replicasets: Sequence[Obj], pods: Sequence[Obj], now: float) -> DeploymentPlan:
    spec = spec_of(d)
    stamp = rfc3339(now)
    owned, actions = claim_children(d, DEPLOYMENT, REPLICASET, spec.get("selector"), replicasets)
    want_template = _template_without_hash(spec.get("template") or {})
    matching = sorted(
        (rs for rs in owned if _template_without_hash(spec_of(rs).get("template") or {}) == want_template),
        key=_created,
    )
    new_rs = matching[0] if matching else None
    olds = sorted((rs for rs in owned if rs is not new_rs), key=_created)
    surge, max_unavailable = fenceposts(d)
    replicas = _replicas(d)
    collision = int(status_of(d).get("collisionCount") or 0)
    max_old_rev = max((_revision(rs) for rs in olds), default=0)
    created_new = False
    if is_deleting(d):
        return DeploymentPlan(actions, None)
    paused = bool(spec.get("paused"))
    recreate = (spec.get("strategy") or {}).get("type") == "Recreate"

    old_pods_running = any(
        not is_terminal(p)
        for p in pods
        for rs in olds
        if any(
            r.get("uid") == uid_of(rs) and r.get("controller") for r in meta(p).get("ownerReferences") or []
        )
    )
    if (
        new_rs is None
        and not paused
        and (not recreate or (not old_pods_running and all(_replicas(rs) == 0 for rs in olds)))
    ):
        taken = {name_of(rs): rs for rs in replicasets}
        hash_ = template_hash(want_template, collision or None)
        while f"{name_of(d)}-{hash_}" in taken:
            collision += 1
            hash_ = template_hash(want_template, collision)
        if recreate:
            initial = replicas
        else:
            total = sum(_replicas(rs) for rs in olds)
            initial = max(0, min(replicas, replicas + surge - total))
        new_rs = _new_replicaset(d, hash_, initial, max_old_rev + 1, surge)
        actions.append(Create(REPLICASET, new_rs))
        created_new = True
    elif new_rs is not None:
        rev = _revision(new_rs) if _revision(new_rs) > max_old_rev else max_old_rev + 1
        ann = annotations_of(new_rs)
        wanted = {REVISION: str(rev), DESIRED: str(replicas), MAX: str(replicas + surge)}
        if any(ann.get(k) != v for k, v in wanted.items()):
            actions.append(
                Patch(
                    REPLICASET, namespace_of(new_rs), name_of(new_rs), {"metadata": {"annotations": wanted}}
                )
            )
            new_rs = copy.deepcopy(new_rs)
            new_rs["metadata"].setdefault("annotations", {}).update(wanted)

    if new_rs is not None and annotations_of(d).get(REVISION) != annotations_of(new_rs).get(REVISION):
        actions.append(
            Patch(
                DEPLOYMENT,
                namespace_of(d),
                name_of(d),
                {"metadata": {"annotations": {REVISION: annotations_of(new_rs)[REVISION]}}},
            )
        )

    if paused:
        pass
    elif recreate:
        for rs in olds:
            if _replicas(rs) != 0:
                actions.append(_scale(rs, 0, d, surge))
        if new_rs is not None and not created_new and not old_pods_running and _replicas(new_rs) != replicas:
            actions.append(_scale(new_rs, replicas, d, surge))
    elif new_rs is not None and not created_new:
        actions += _roll(d, new_rs, olds, replicas, surge, max_unavailable)

    status = _status(
        d,
        new_rs if not created_new else None,
        olds,
        replicas,
        max_unavailable,
        collision,
        stamp,
        now,
        created_new,
        paused,
    )
    # Clean-up: only once the rollout is complete, old ReplicaSets at zero beyond the history limit.
    limit = spec.get("revisionHistoryLimit")
    limit = 10 if limit is None else int(limit)
    if status.get("_complete"):
        idle = [
            rs
            for rs in olds
            if _replicas(rs) == 0 and not int(status_of(rs).get("replicas") or 0) and not is_deleting(rs)
        ]
        for rs in idle[: max(0, len(idle) - limit)]:
            actions.append(Delete(REPLICASET, namespace_of(rs), name_of(rs), uid=uid_of(rs)))
    requeue = status.pop("_requeue", None)
    status.pop("_complete", None)
    old_status = status_of(d)
    keys = set(status) | {k for k in old_status if k != "conditions"}
    differs = any((old_status.get(k) or 0) != (status.get(k) or 0) for k in keys if k != "conditions")
    differs = differs or (old_status.get("conditions") or []) != status["conditions"]
    return DeploymentPlan(actions, status if differs else None, requeue)


def _roll(
    d: Obj, new_rs: Obj, olds: list[Obj], replicas: int, surge: int, max_unavailable: int
) -> list[Action]:
    """One step of ``rolloutRolling``: scale the new ReplicaSet up within
    maxSurge, else scale old ones down within maxUnavailable."""
    all_rs = [new_rs, *olds]
    new_replicas = _replicas(new_rs)
    if new_replicas > replicas:
        return [_scale(new_rs, replicas, d, surge)]
    if new_replicas < replicas:
        current = sum(_replicas(rs) for rs in all_rs)
        up = min(max(0, replicas + surge - current), replicas - new_replicas)
        if up > 0:
            return [_scale(new_rs, new_replicas + up, d, surge)]
    old_total = sum(_replicas(rs) for rs in olds)
    if old_total == 0:
        return []
    all_total = sum(_replicas(rs) for rs in all_rs)
    min_available = replicas - max_unavailable
    new_unavailable = new_replicas - int(status_of(new_rs).get("availableReplicas") or 0)
    max_down = all_total - min_available - new_unavailable
    if max_down <= 0:
        return []
    actions: list[Action] = []
    sizes = {name_of(rs): _replicas(rs) for rs in olds}
    # cleanupUnhealthyReplicas: first drop old pods that are not available anyway.
    cleaned = 0
    for rs in olds:
        unhealthy = sizes[name_of(rs)] - int(status_of(rs).get("availableReplicas") or 0)
        take = min(max_down - cleaned, max(0, unhealthy))
        if take > 0:
            sizes[name_of(rs)] -= take
            cleaned += take
    # scaleDownOldReplicaSetsForRollingUpdate: then available ones, oldest first.
    available = sum(int(status_of(rs).get("availableReplicas") or 0) for rs in all_rs)
    budget = max(0, min(available - min_available, max_down - cleaned))
    for rs in olds:
        take = min(budget, sizes[name_of(rs)])
        sizes[name_of(rs)] -= take
        budget -= take
    for rs in olds:
        if sizes[name_of(rs)] != _replicas(rs):
            actions.append(_scale(rs, sizes[name_of(rs)], d, surge))
    return actions


def _status(
    d: Obj,
    new_rs: Obj | None,
    olds: list[Obj],
    replicas: int,
    max_unavailable: int,
    collision: int,
    stamp: str,
    now: float,
    created_new: bool,
    paused: bool,
) -> dict[str, Any]:
    all_rs = ([new_rs] if new_rs is not None else []) + olds
    total = sum(int(status_of(rs).get("replicas") or 0) for rs in all_rs)
    available = sum(int(status_of(rs).get("availableReplicas") or 0) for rs in all_rs)
    spec_total = sum(_replicas(rs) for rs in all_rs)
    updated = int(status_of(new_rs).get("replicas") or 0) if new_rs is not None else 0
    st: dict[str, Any] = {
        "observedGeneration": generation_of(d),
        "replicas": total,
        "updatedReplicas": updated,
        "readyReplicas": sum(int(status_of(rs).get("readyReplicas") or 0) for rs in all_rs),
        "availableReplicas": available,
        "unavailableReplicas": max(0, spec_total - available),
    }
    if collision:
        st["collisionCount"] = collision
    old = status_of(d)
    conds = [dict(c) for c in old.get("conditions") or []]
    if available >= replicas - max_unavailable:
        conds = _set_condition(
            conds,
            {
                "type": "Available",
                "status": "True",
                "reason": "MinimumReplicasAvailable",
                "message": "Deployment has minimum availability.",
            },
            stamp,
        )
    else:
        conds = _set_condition(
            conds,
            {
                "type": "Available",
                "status": "False",
                "reason": "MinimumReplicasUnavailable",
                "message": "Deployment does not have minimum availability.",
            },
            stamp,
        )
    rs_name = name_of(new_rs) if new_rs is not None else ""
    complete = new_rs is not None and updated == replicas and total == replicas and available == replicas
    deadline = spec_of(d).get("progressDeadlineSeconds")
    if paused:
        conds = _set_condition(
            conds,
            {
                "type": "Progressing",
                "status": "Unknown",
                "reason": "DeploymentPaused",
                "message": "Deployment is paused",
            },
            stamp,
        )
    elif created_new:
        conds = _set_condition(
            conds,
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetCreated",
                "message": f'Created new replica set "{rs_name}"',
            },
            stamp,
            refresh=True,
        )
    elif complete:
        conds = _set_condition(
            conds,
            {
                "type": "Progressing",
                "status": "True",
                "reason": "NewReplicaSetAvailable",
                "message": f'ReplicaSet "{rs_name}" has successfully progressed.',
            },
            stamp,
        )
    else:
        old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
        progressed = (
            updated > int(old.get("updatedReplicas") or 0)
            or total - updated < old_old
            or st["readyReplicas"] > int(old.get("readyReplicas") or 0)
            or available > int(old.get("availableReplicas") or 0)
        )
        cur = find_condition(conds, "Progressing")
        if progressed or cur is None or cur.get("reason") == "DeploymentPaused":
            conds = _set_condition(
                conds,
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "ReplicaSetUpdated",
                    "message": f'ReplicaSet "{rs_name}" is progressing.',
                },
                stamp,
                refresh=True,
            )
        cur = find_condition(conds, "Progressing")
        if deadline is not None and cur is not None and cur.get("status") == "True":
            since = parse_time(cur.get("lastUpdateTime")) or now
            if now >= since + int(deadline):
                conds = _set_condition(
                    conds,
                    {
                        "type": "Progressing",
                        "status": "False",
                        "reason": "ProgressDeadlineExceeded",
                        "message": f'ReplicaSet "{rs_name}" has timed out progressing.',
                    },
                    stamp,
                )
            else:
                st["_requeue"] = since + int(deadline) - now
    st["conditions"] = conds
    st["_complete"] = complete
    return st
