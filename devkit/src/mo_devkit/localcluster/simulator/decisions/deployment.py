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
from dataclasses import dataclass, replace
from typing import Any

from mo_operator.kube.meta.times import format_time, parse_time

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


@dataclass(frozen=True)
class _Sync:
    """One sync's view of a Deployment: its ReplicaSets split into the one
    matching the template and the old ones, and the rollout parameters."""

    d: Obj
    new_rs: Obj | None
    olds: list[Obj]
    replicas: int
    surge: int
    max_unavailable: int
    paused: bool
    recreate: bool
    #: Some pod of an old ReplicaSet is not terminal yet (Recreate waits for them).
    old_pods_running: bool
    now: float


def _old_pods_running(pods: Sequence[Obj], olds: Sequence[Obj]) -> bool:
    old_uids = {uid_of(rs) for rs in olds}
    return any(
        not is_terminal(p)
        for p in pods
        if any(r.get("uid") in old_uids and r.get("controller") for r in meta(p).get("ownerReferences") or [])
    )


def _view(d: Obj, owned: Sequence[Obj], pods: Sequence[Obj], now: float) -> _Sync:
    """The oldest ReplicaSet whose template (hash aside) equals the
    Deployment's is the new one; all others are old, oldest first."""
    spec = spec_of(d)
    want_template = _template_without_hash(spec.get("template") or {})
    matching = sorted(
        (rs for rs in owned if _template_without_hash(spec_of(rs).get("template") or {}) == want_template),
        key=_created,
    )
    new_rs = matching[0] if matching else None
    olds = sorted((rs for rs in owned if rs is not new_rs), key=_created)
    surge, max_unavailable = fenceposts(d)
    return _Sync(
        d=d,
        new_rs=new_rs,
        olds=olds,
        replicas=_replicas(d),
        surge=surge,
        max_unavailable=max_unavailable,
        paused=bool(spec.get("paused")),
        recreate=(spec.get("strategy") or {}).get("type") == "Recreate",
        old_pods_running=_old_pods_running(pods, olds),
        now=now,
    )


def _create_new(ctx: _Sync, replicasets: Sequence[Obj]) -> tuple[Obj, int]:
    """The new ReplicaSet, named by a template hash no other ReplicaSet holds
    (each clash bumps collisionCount), sized within maxSurge."""
    d = ctx.d
    want_template = _template_without_hash(spec_of(d).get("template") or {})
    collision = int(status_of(d).get("collisionCount") or 0)
    taken = {name_of(rs) for rs in replicasets}
    hash_ = template_hash(want_template, collision or None)
    while f"{name_of(d)}-{hash_}" in taken:
        collision += 1
        hash_ = template_hash(want_template, collision)
    if ctx.recreate:
        initial = ctx.replicas
    else:
        total = sum(_replicas(rs) for rs in ctx.olds)
        initial = max(0, min(ctx.replicas, ctx.replicas + ctx.surge - total))
    max_old_rev = max((_revision(rs) for rs in ctx.olds), default=0)
    return _new_replicaset(d, hash_, initial, max_old_rev + 1, ctx.surge), collision


def _sync_new_annotations(ctx: _Sync, new_rs: Obj) -> tuple[list[Action], Obj]:
    """Keeps the new ReplicaSet's revision above every old one and its
    desired/max replica annotations current; returns it as it will read."""
    max_old_rev = max((_revision(rs) for rs in ctx.olds), default=0)
    rev = _revision(new_rs) if _revision(new_rs) > max_old_rev else max_old_rev + 1
    ann = annotations_of(new_rs)
    wanted = {REVISION: str(rev), DESIRED: str(ctx.replicas), MAX: str(ctx.replicas + ctx.surge)}
    if all(ann.get(k) == v for k, v in wanted.items()):
        return [], new_rs
    patch = Patch(REPLICASET, namespace_of(new_rs), name_of(new_rs), {"metadata": {"annotations": wanted}})
    new_rs = copy.deepcopy(new_rs)
    new_rs["metadata"].setdefault("annotations", {}).update(wanted)
    return [patch], new_rs


def _revision_annotation(d: Obj, new_rs: Obj) -> list[Action]:
    """The Deployment carries its new ReplicaSet's revision, written through
    /status as kube-controller-manager writes it, so its generation stays."""
    revision = annotations_of(new_rs).get(REVISION)
    if annotations_of(d).get(REVISION) == revision:
        return []
    return [
        Patch(
            DEPLOYMENT,
            namespace_of(d),
            name_of(d),
            {"metadata": {"annotations": {REVISION: revision}}},
            subresource="status",
        )
    ]


def _scaling(ctx: _Sync, created_new: bool) -> list[Action]:
    """``rolloutRecreate`` (old ReplicaSets to zero, then the new one up once
    their pods are gone) or one rolling step; nothing while paused."""
    if ctx.paused:
        return []
    if not ctx.recreate:
        if ctx.new_rs is None or created_new:
            return []
        return _roll(ctx.d, ctx.new_rs, ctx.olds, ctx.replicas, ctx.surge, ctx.max_unavailable)
    actions: list[Action] = [_scale(rs, 0, ctx.d, ctx.surge) for rs in ctx.olds if _replicas(rs) != 0]
    new_rs = ctx.new_rs
    if (
        new_rs is not None
        and not created_new
        and not ctx.old_pods_running
        and _replicas(new_rs) != ctx.replicas
    ):
        actions.append(_scale(new_rs, ctx.replicas, ctx.d, ctx.surge))
    return actions


def _history_cleanup(d: Obj, olds: Sequence[Obj]) -> list[Action]:
    """Old ReplicaSets at zero beyond revisionHistoryLimit, oldest first."""
    limit = spec_of(d).get("revisionHistoryLimit")
    limit = 10 if limit is None else int(limit)
    idle = [
        rs
        for rs in olds
        if _replicas(rs) == 0 and not int(status_of(rs).get("replicas") or 0) and not is_deleting(rs)
    ]
    return [
        Delete(REPLICASET, namespace_of(rs), name_of(rs), uid=uid_of(rs))
        for rs in idle[: max(0, len(idle) - limit)]
    ]


def _status_differs(old: Obj, new: Obj) -> bool:
    keys = (set(new) | set(old)) - {"conditions"}
    return (
        any((old.get(k) or 0) != (new.get(k) or 0) for k in keys)
        or (old.get("conditions") or []) != new["conditions"]
    )


def plan_deployment(d: Obj, replicasets: Sequence[Obj], pods: Sequence[Obj], now: float) -> DeploymentPlan:
    owned, actions = claim_children(d, DEPLOYMENT, REPLICASET, spec_of(d).get("selector"), replicasets)
    if is_deleting(d):
        return DeploymentPlan(actions, None)
    ctx = _view(d, owned, pods, now)
    collision = int(status_of(d).get("collisionCount") or 0)
    new_rs, created_new = ctx.new_rs, False
    if new_rs is None:
        recreate_ready = not ctx.old_pods_running and all(_replicas(rs) == 0 for rs in ctx.olds)
        if not ctx.paused and (not ctx.recreate or recreate_ready):
            new_rs, collision = _create_new(ctx, replicasets)
            actions.append(Create(REPLICASET, new_rs))
            created_new = True
    else:
        patches, new_rs = _sync_new_annotations(ctx, new_rs)
        actions += patches
    if new_rs is not None:
        actions += _revision_annotation(d, new_rs)
    ctx = replace(ctx, new_rs=new_rs)
    actions += _scaling(ctx, created_new)

    status = _status(ctx, collision, created_new)
    # Clean-up only once the rollout is complete.
    if status.complete:
        actions += _history_cleanup(d, ctx.olds)
    return DeploymentPlan(
        actions, status.status if _status_differs(status_of(d), status.status) else None, status.requeue_after
    )


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


@dataclass(frozen=True)
class _Status:
    status: Obj
    #: The new ReplicaSet holds every replica, all available (history may go).
    complete: bool
    #: When the progress deadline runs out, if it is running.
    requeue_after: float | None


_AVAILABLE = {
    True: ("True", "MinimumReplicasAvailable", "Deployment has minimum availability."),
    False: ("False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."),
}


def _counts(ctx: _Sync, new_rs: Obj | None, collision: int) -> Obj:
    """The replica counters, summed over the ReplicaSets' own status."""
    all_rs = ([new_rs] if new_rs is not None else []) + ctx.olds
    available = sum(int(status_of(rs).get("availableReplicas") or 0) for rs in all_rs)
    st: Obj = {
        "observedGeneration": generation_of(ctx.d),
        "replicas": sum(int(status_of(rs).get("replicas") or 0) for rs in all_rs),
        "updatedReplicas": int(status_of(new_rs).get("replicas") or 0) if new_rs is not None else 0,
        "readyReplicas": sum(int(status_of(rs).get("readyReplicas") or 0) for rs in all_rs),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum(_replicas(rs) for rs in all_rs) - available),
    }
    if collision:
        st["collisionCount"] = collision
    return st


def _progressed(old: Obj, st: Obj) -> bool:
    """``DeploymentProgressing``: some counter moved the right way since the last status."""
    old_old = int(old.get("replicas") or 0) - int(old.get("updatedReplicas") or 0)
    return bool(
        st["updatedReplicas"] > int(old.get("updatedReplicas") or 0)
        or st["replicas"] - st["updatedReplicas"] < old_old
        or st["readyReplicas"] > int(old.get("readyReplicas") or 0)
        or st["availableReplicas"] > int(old.get("availableReplicas") or 0)
    )


def _progressing(
    ctx: _Sync, conds: list[Obj], st: Obj, rs_name: str, stamp: str
) -> tuple[list[Obj], float | None]:
    """An unfinished rollout: Progressing refreshed on progress, and False
    once progressDeadlineSeconds pass without any (with the wait until then)."""
    cur = find_condition(conds, "Progressing")
    if _progressed(status_of(ctx.d), st) or cur is None or cur.get("reason") == "DeploymentPaused":
        updated = {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}
        updated["message"] = f'ReplicaSet "{rs_name}" is progressing.'
        conds = _set_condition(conds, updated, stamp, refresh=True)
    cur = find_condition(conds, "Progressing")
    deadline = spec_of(ctx.d).get("progressDeadlineSeconds")
    if deadline is None or cur is None or cur.get("status") != "True":
        return conds, None
    since = parse_time(cur.get("lastUpdateTime")) or ctx.now
    if ctx.now < since + int(deadline):
        return conds, since + int(deadline) - ctx.now
    exceeded = {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}
    exceeded["message"] = f'ReplicaSet "{rs_name}" has timed out progressing.'
    return _set_condition(conds, exceeded, stamp), None


def _status(ctx: _Sync, collision: int, created_new: bool) -> _Status:
    """``syncRolloutStatus``: counters, then the Available and Progressing conditions."""
    new_rs = None if created_new else ctx.new_rs
    stamp = format_time(ctx.now)
    st = _counts(ctx, new_rs, collision)
    available = st["availableReplicas"]
    conds = [dict(c) for c in status_of(ctx.d).get("conditions") or []]
    status, reason, message = _AVAILABLE[available >= ctx.replicas - ctx.max_unavailable]
    conds = _set_condition(
        conds, {"type": "Available", "status": status, "reason": reason, "message": message}, stamp
    )
    rs_name = name_of(new_rs) if new_rs is not None else ""
    complete = new_rs is not None and st["updatedReplicas"] == st["replicas"] == available == ctx.replicas
    requeue = None
    if ctx.paused:
        paused = {"type": "Progressing", "status": "Unknown", "reason": "DeploymentPaused"}
        conds = _set_condition(conds, {**paused, "message": "Deployment is paused"}, stamp)
    elif created_new:
        created = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetCreated"}
        message = f'Created new replica set "{name_of(ctx.new_rs or {})}"'
        conds = _set_condition(conds, {**created, "message": message}, stamp, refresh=True)
    elif complete:
        done = {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}
        message = f'ReplicaSet "{rs_name}" has successfully progressed.'
        conds = _set_condition(conds, {**done, "message": message}, stamp)
    else:
        conds, requeue = _progressing(ctx, conds, st, rs_name, stamp)
    st["conditions"] = conds
    return _Status(st, complete, requeue)
