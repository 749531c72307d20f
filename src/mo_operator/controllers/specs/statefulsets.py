"""StatefulSets of the stateful sets (log service, TN), and how far their
rolls have got.

We let the StatefulSet controller roll pods: with ``RollingUpdate`` it
replaces one pod at a time, highest ordinal first, and waits for each new
pod to be Ready before the next. A MatrixOne pod is Ready only once it
serves (a TN once its store registered in HAKeeper), so the roll goes pod
by pod with the application in the loop, and a new pod that never becomes
ready stops it where it is. ``Parallel`` pod management (as upstream) lets
a fixed spec replace a broken pod: with ``OrderedReady`` a StatefulSet
waits forever on a pod that will never be ready (kubernetes#67250).

What the StatefulSet controller cannot do is tell anyone why a roll
stopped; ``rollout`` reads the pods for that. Nor does it always replace a
pod stuck on a revision the set no longer asks for (with ``OrderedReady`` it
never does: Kubernetes' "Forced rollback"); ``stuck_outdated`` finds those
pods so that the operator deletes them, as a person would, and the
StatefulSet recreates them from the current template.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.common import PodSet
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.errors import Conflict
from mo_operator.kube.meta.objects import labels_of, spec_of, status_of
from mo_operator.kube.meta.times import format_time

from ..framework import resources as r
from ..framework.meta import child_metadata, is_deleting, name_of, uid_of
from ..framework.writes import Call, Step
from . import pods as podutil

Obj = dict[str, Any]

REVISION_LABEL = "controller-revision-hash"


def statefulset(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    *,
    replicas: int,
    service_name: str,
    template: Mapping[str, Any],
    volume_claim_templates: Sequence[Obj] = (),
    pvc_retention: str = "Delete",
    first_ordinal: int = 0,
    partition: int = 0,
) -> Obj:
    """A StatefulSet rolling one pod at a time, in parallel pod management; its pods
    numbered from ``first_ordinal`` (``spec.ordinals.start``, set only when not 0);
    ``partition`` holds its roll (the pods before that index keep their revision)."""
    spec: Obj = {
        "replicas": replicas,
        "selector": {"matchLabels": dict(selector)},
        "serviceName": service_name,
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": partition}},
        "template": dict(template),
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": pvc_retention, "whenScaled": pvc_retention},
    }
    if first_ordinal:
        spec["ordinals"] = {"start": first_ordinal}
    if volume_claim_templates:
        spec["volumeClaimTemplates"] = [dict(v) for v in volume_claim_templates]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": child_metadata(owner, name, obj_labels),
        "spec": spec,
    }


def volume_claim_template(
    name: str, size: str, storage_class: str | None, obj_labels: Mapping[str, str]
) -> Obj:
    spec: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name, "labels": dict(obj_labels)},
        "spec": spec,
    }


def overlay_claims(spec: PodSet) -> list[Obj]:
    """The overlay's extra claim templates, copied (the admitted spec is shared)."""
    overlay = spec.overlay
    return copy.deepcopy(overlay.volume_claims) if overlay is not None and overlay.volume_claims else []


@dataclass(frozen=True)
class Rollout:
    """Where a StatefulSet's pods stand against its latest template."""

    replicas: int
    ready: int
    updated: int
    complete: bool
    """The StatefulSet controller saw the latest spec, and every pod runs its latest template
    and is ready (as the pods or the controller's counts say)."""
    stalled: str | None = None
    """Why the roll (or start) is stuck: a pod not ready for longer than the stall time, and why."""
    recheck_after: float | None = None
    """When a pod not ready yet would count as stalled: look again then."""
    stuck_outdated: tuple[tuple[str, str], ...] = ()
    """``(name, uid)`` of pods of an older revision, stalled: to be deleted (forced rollback)."""

    def summary(self) -> str:
        return f"{self.ready}/{self.replicas} ready, {self.updated}/{self.replicas} updated"


def rollout(
    sts: Mapping[str, Any] | None,
    pods: Iterable[Mapping[str, Any]],
    *,
    now: float,
    stall_seconds: float,
) -> Rollout:
    """The roll state of ``sts`` (as cached) and its ``pods``."""
    if sts is None:  # not made yet, or being replaced: its pods still serve meanwhile
        return Rollout(0, sum(1 for p in pods if not is_deleting(p) and podutil.is_ready(p)), 0, False)
    spec, status = spec_of(sts), status_of(sts)
    replicas = int(spec.get("replicas") or 0)
    observed = int(status.get("observedGeneration") or 0) >= int(sts["metadata"].get("generation") or 0)
    update_revision = status.get("updateRevision")
    members = [p for p in pods if not is_deleting(p)]
    ready = sum(1 for p in members if podutil.is_ready(p))
    updated = sum(1 for p in members if labels_of(p).get(REVISION_LABEL) == update_revision)
    # The pods say it as soon as the StatefulSet controller's counts would: its status
    # follows them, and a set whose pods turned ready before it did would otherwise
    # report Ready and, a status write later, its roll complete.
    complete = observed and (
        (len(members) == ready == updated == replicas)
        or (
            int(status.get("replicas") or 0) == replicas
            and int(status.get("readyReplicas") or 0) == replicas
            and int(status.get("updatedReplicas") or 0) == replicas
            and (replicas == 0 or status.get("currentRevision") == update_revision)
        )
    )
    stalled, recheck = stall(members, now, stall_seconds)
    stuck = stuck_outdated(members, update_revision, now, stall_seconds) if observed else ()
    return Rollout(replicas, ready, updated, complete, stalled, recheck, stuck)


def stuck_outdated(
    members: Sequence[Mapping[str, Any]], update_revision: str | None, now: float, stall_seconds: float
) -> tuple[tuple[str, str], ...]:
    """Pods of a revision other than the one the StatefulSet (having seen its latest
    spec) now rolls to, not ready for ``stall_seconds``: nothing will make them
    ready, and the StatefulSet controller may wait on them forever."""
    if not update_revision:
        return ()
    stuck = []
    for pod in members:
        if labels_of(pod).get(REVISION_LABEL) in (None, update_revision):
            continue
        since = podutil.not_ready_since(pod)
        if since is not None and now - since >= stall_seconds:
            stuck.append((name_of(pod), uid_of(pod)))
    return tuple(sorted(stuck))


def rollbacks(roll: Rollout, step: Callable[[str, str], Step]) -> list[Call]:
    """The replacement of each pod ``roll`` found stuck on an older revision: ``step``
    makes it from the pod's name and uid (``rollback_step``: deleted only while it is
    still the pod judged, and an Event once it is done)."""
    return [
        Call(step(name, uid), f"replace pod {name}, stuck on an outdated revision")
        for name, uid in roll.stuck_outdated
    ]


def rollback_step(ctx: Context, client: Client, name: str, uid: str) -> Step:
    """Delete pod ``name`` while it is the one of ``uid``; an Event once it went."""

    async def step() -> None:
        try:
            deleted = await client.delete(r.PODS, name, ctx.namespace or None, uid=uid, missing_ok=True)
        except Conflict:
            return  # already replaced (by the StatefulSet controller): nothing to do
        if deleted is not None:
            ctx.event(
                "Normal",
                "ForcedRollback",
                f"deleted pod {name}: it is not ready on a revision the StatefulSet no longer rolls "
                "to, and is recreated from the current template",
            )

    return step


def stall(
    members: Sequence[Mapping[str, Any]], now: float, stall_seconds: float
) -> tuple[str | None, float | None]:
    """The first pod (by name) not ready for ``stall_seconds`` and why; else in how
    many seconds the soonest not-ready pod would reach that.

    The message names when the pod stopped being ready, not for how long: a
    condition that changes on every reconcile would rewrite the status each time."""
    recheck: float | None = None
    for pod in sorted(members, key=lambda p: p["metadata"]["name"]):
        since = podutil.not_ready_since(pod)
        if since is None:
            continue
        waited = now - since
        if waited >= stall_seconds:
            return (
                f"pod {pod['metadata']['name']} is not ready since {format_time(since)}, over "
                f"{int(stall_seconds)}s: {podutil.problem(pod)}",
                None,
            )
        left = stall_seconds - waited
        recheck = left if recheck is None else min(recheck, left)
    return None, recheck
