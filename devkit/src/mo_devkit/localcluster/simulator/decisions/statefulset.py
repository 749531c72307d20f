"""The StatefulSet controller's decision for one set
(pkg/controller/statefulset/stateful_set_control.go and
stateful_set_utils.go, Kubernetes 1.28+): ordinal pods, volume claims and
their retention policy, revisions, ordered or parallel management, rolling
updates with partition, and the status counters."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.times import parse_time

from ..core.actions import Action, Create, Delete, Patch, pod_delete
from ..core.kinds import CONTROLLER_REVISION, POD, PVC, STATEFULSET
from ..core.objects import (
    Obj,
    generation_of,
    has_owner_ref,
    is_deleting,
    labels_of,
    meta,
    name_of,
    namespace_of,
    new_controller_ref,
    spec_of,
    status_of,
    uid_of,
)
from ..core.pods import is_pod_available, is_running_and_ready, phase_of
from .ownership import claim_children
from .replicaset import BURST
from .revisions import (
    POD_REVISION_LABEL,
    new_revision,
    next_revision,
    sort_revisions,
    statefulset_revision_data,
    template_of_revision,
)

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    m = _ORDINAL.match(name_of(pod))
    if m is None:
        return "", -1
    return m.group(1), int(m.group(2))


def start_ordinal(sts: Obj) -> int:
    return int((spec_of(sts).get("ordinals") or {}).get("start") or 0)


def replicas_of(sts: Obj) -> int:
    r = spec_of(sts).get("replicas")
    return 1 if r is None else int(r)


def is_created(pod: Obj) -> bool:
    return phase_of(pod) != ""


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not is_deleting(pod)


def claim_name(template_name: str, sts: Obj, ordinal: int) -> str:
    return f"{template_name}-{name_of(sts)}-{ordinal}"


def _retention(sts: Obj) -> tuple[str, str]:
    p = spec_of(sts).get("persistentVolumeClaimRetentionPolicy") or {}
    return p.get("whenDeleted") or "Retain", p.get("whenScaled") or "Retain"


def _in_range(sts: Obj, ordinal: int) -> bool:
    return start_ordinal(sts) <= ordinal < start_ordinal(sts) + replicas_of(sts)


def _plain_ref(owner: Obj, api_version: str, kind: str) -> dict[str, Any]:
    """The non-controller reference the retention policy puts on claims (``setOwnerRef``)."""
    return {"apiVersion": api_version, "kind": kind, "name": name_of(owner), "uid": uid_of(owner)}


def desired_claim_refs(claim: Obj, sts: Obj, pod: Obj | None, ordinal: int) -> list[dict[str, Any]] | None:
    """The claim's owner references under the retention policy
    (``updateClaimOwnerRefForSetAndPod``), or None when they already match."""
    when_deleted, when_scaled = _retention(sts)
    scaled_down = not _in_range(sts, ordinal)
    want_set = when_deleted == "Delete" and not (when_scaled == "Delete" and scaled_down)
    want_pod = when_scaled == "Delete" and scaled_down and pod is not None
    refs = [dict(r) for r in meta(claim).get("ownerReferences") or []]
    changed = False
    if want_set and not has_owner_ref(claim, uid_of(sts)):
        refs.append(_plain_ref(sts, STATEFULSET.api_version, STATEFULSET.kind))
        changed = True
    if not want_set and has_owner_ref(claim, uid_of(sts)):
        refs = [r for r in refs if r.get("uid") != uid_of(sts)]
        changed = True
    if pod is not None:
        if want_pod and not has_owner_ref(claim, uid_of(pod)):
            refs.append(_plain_ref(pod, "v1", "Pod"))
            changed = True
        if not want_pod and has_owner_ref(claim, uid_of(pod)):
            refs = [r for r in refs if r.get("uid") != uid_of(pod)]
            changed = True
    return refs if changed else None


def new_claims(sts: Obj, ordinal: int) -> dict[str, Obj]:
    """The claims of one ordinal, by template name (``getPersistentVolumeClaims``)."""
    out = {}
    selector_labels = (spec_of(sts).get("selector") or {}).get("matchLabels") or {}
    for vct in spec_of(sts).get("volumeClaimTemplates") or []:
        tname = name_of(vct)
        m = meta(vct)
        claim: Obj = {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": claim_name(tname, sts, ordinal),
                "namespace": namespace_of(sts),
                "labels": {**(m.get("labels") or {}), **selector_labels},
            },
            "spec": copy.deepcopy(vct.get("spec") or {}),
        }
        if m.get("annotations"):
            claim["metadata"]["annotations"] = dict(m["annotations"])
        refs = desired_claim_refs(claim, sts, None, ordinal)
        if refs:
            claim["metadata"]["ownerReferences"] = refs
        out[tname] = claim
    return out


def new_pod(sts: Obj, template: Obj, revision: str, ordinal: int) -> Obj:
    """``newVersionedStatefulSetPod``: the template with the ordinal's identity and storage."""
    tmeta = template.get("metadata") or {}
    name = f"{name_of(sts)}-{ordinal}"
    labels = {**(tmeta.get("labels") or {}), POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal)}
    labels[POD_REVISION_LABEL] = revision
    pod_meta: Obj = {
        "name": name,
        "generateName": f"{name_of(sts)}-",
        "namespace": namespace_of(sts),
        "labels": labels,
        "ownerReferences": [new_controller_ref(sts, STATEFULSET)],
    }
    if tmeta.get("annotations"):
        pod_meta["annotations"] = dict(tmeta["annotations"])
    if tmeta.get("finalizers"):
        pod_meta["finalizers"] = list(tmeta["finalizers"])
    spec = copy.deepcopy(template.get("spec") or {})
    spec["hostname"] = name
    if spec_of(sts).get("serviceName"):
        spec["subdomain"] = spec_of(sts)["serviceName"]
    claims = new_claims(sts, ordinal)
    volumes = [
        {"name": tname, "persistentVolumeClaim": {"claimName": name_of(c)}} for tname, c in claims.items()
    ]
    volumes += [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
    if volumes:
        spec["volumes"] = volumes
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta, "spec": spec}


@dataclass(frozen=True)
class Revisions:
    current: Obj
    update: Obj
    collision_count: int
    actions: list[Action] = field(default_factory=list)


def resolve_revisions(sts: Obj, owned: Sequence[Obj], taken: Mapping[str, Obj]) -> Revisions:
    """``getStatefulSetRevisions``: reuse an equal revision (renumbering it if
    it is not the latest), else create one, counting hash collisions."""
    revisions = sort_revisions(owned)
    collision = int(status_of(sts).get("collisionCount") or 0)
    data = statefulset_revision_data(sts)
    number = next_revision(revisions)
    equal = [r for r in revisions if r.get("data") == data]
    actions: list[Action] = []
    if equal and name_of(equal[-1]) == name_of(revisions[-1]):
        update = revisions[-1]
    elif equal:
        update = dict(equal[-1], revision=number)
        actions.append(Patch(CONTROLLER_REVISION, namespace_of(sts), name_of(update), {"revision": number}))
    else:
        update = new_revision(sts, STATEFULSET, data, number, collision)
        while name_of(update) in taken:
            collision += 1
            update = new_revision(sts, STATEFULSET, data, number, collision)
        actions.append(Create(CONTROLLER_REVISION, update, exists_ok=True))
    current_name = status_of(sts).get("currentRevision")
    current = next((r for r in revisions if name_of(r) == current_name), update)
    return Revisions(current, update, collision, actions)


@dataclass(frozen=True)
class StatefulSetPlan:
    #: Revisions, claims and pods to write, in order.
    actions: list[Action]
    #: The status to write (None: already consistent).
    status: Obj | None
    #: Old revisions to delete (history limit).
    cleanup: list[Action]
    #: Look again after this long (minReadySeconds), if set.
    requeue_after: float | None = None


def _counters(pods: Sequence[Obj], min_ready: int, now: float, current: str, update: str) -> dict[str, int]:
    c = {
        "replicas": 0,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "currentReplicas": 0,
        "updatedReplicas": 0,
    }
    for p in pods:
        if is_created(p):
            c["replicas"] += 1
        if is_running_and_ready(p):
            c["readyReplicas"] += 1
            if is_pod_available(p, min_ready, now):
                c["availableReplicas"] += 1
        if is_created(p) and not is_deleting(p):
            rev = labels_of(p).get(POD_REVISION_LABEL)
            if rev == current:
                c["currentReplicas"] += 1
            if rev == update:
                c["updatedReplicas"] += 1
    return c


_STATUS_FIELDS = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
)


def _status_differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    def norm(v: Any) -> Any:
        return v if v not in (None, "") else 0

    return any(norm(old.get(f)) != norm(new.get(f)) for f in _STATUS_FIELDS)


@dataclass(frozen=True)
class _Sync:
    """What one sync knows before it acts: the set, its ordinal slots, the
    revisions pods are made from, and the management policy."""

    sts: Obj
    claims: Mapping[str, Obj]
    #: The in-range pods by slot (None: missing).
    replicas: list[Obj | None]
    #: The out-of-range pods, highest ordinal first.
    condemned: list[Obj]
    current_rev: Obj
    update_rev: Obj
    rolling: bool
    partition: int
    monotonic: bool
    min_ready: int
    now: float

    @property
    def start(self) -> int:
        return start_ordinal(self.sts)


@dataclass
class _Step:
    """The writes a phase decides, the waits it asks for, and whether a
    monotonic set must stop here (``OrderedReady`` processes one pod at a time)."""

    actions: list[Action] = field(default_factory=list)
    requeue: list[float] = field(default_factory=list)
    halt: bool = False


def _split_ordinals(sts: Obj, owned: Sequence[Obj]) -> tuple[list[Obj | None], list[Obj]]:
    """In-range pods by slot and out-of-range (condemned) ones, highest ordinal first."""
    n, start = replicas_of(sts), start_ordinal(sts)
    replicas: list[Obj | None] = [None] * n
    condemned: list[Obj] = []
    for p in owned:
        parent, ordinal = parent_and_ordinal(p)
        if parent != name_of(sts) or ordinal < 0:
            continue
        if start <= ordinal < start + n:
            replicas[ordinal - start] = p
        else:
            condemned.append(p)
    condemned.sort(key=lambda p: parent_and_ordinal(p)[1], reverse=True)
    return replicas, condemned


def _unavailable(pod: Obj, min_ready: int, now: float, step: _Step) -> bool:
    """Not available yet; a ready pod waiting out minReadySeconds asks for a look then."""
    if is_running_and_ready(pod) and not is_pod_available(pod, min_ready, now):
        ready: Obj = next((c for c in status_of(pod).get("conditions") or [] if c.get("type") == "Ready"), {})
        since = parse_time(ready.get("lastTransitionTime"))
        if since is not None:
            step.requeue.append(max(0.0, since + min_ready - now))
    return not is_pod_available(pod, min_ready, now)


def _claim_actions(ctx: _Sync, pod: Obj | None, ordinal: int) -> tuple[list[Action], bool]:
    """Create missing claims and fix retention refs; True when blocked."""
    out: list[Action] = []
    for claim in new_claims(ctx.sts, ordinal).values():
        have = ctx.claims.get(name_of(claim))
        if have is None:
            out.append(Create(PVC, claim, exists_ok=True))
            continue
        if is_deleting(have):
            return out, True  # "pvc ... is being deleted": wait for it to go
        if pod is None and any(r.get("kind") == "Pod" for r in meta(have).get("ownerReferences") or []):
            return out, True  # PodClaimIsStale: a condemned pod's claim awaits collection
        refs = desired_claim_refs(have, ctx.sts, pod, ordinal)
        if refs is not None:
            out.append(Patch(PVC, namespace_of(have), name_of(have), {"metadata": {"ownerReferences": refs}}))
    return out, False


def _sync_replicas(ctx: _Sync, step: _Step, counters: dict[str, int]) -> None:
    """Creates missing in-range pods, replaces finished ones and keeps their
    claims; a monotonic set stops at the first pod that is not yet available.
    A pod created is counted in the status at once (``replicas`` and its revision's
    count), as kube-controller-manager's ``processReplica`` counts it: a roll is not
    complete in the moment between its last old pod's deletion and its replacement.
    At most ``BURST`` pods are created in one sync (the ReplicaSet controller's
    bound; kube-controller-manager's StatefulSet has none, but a set of a hundred
    thousand replicas must not build them all at once here): the next sync, at
    once, goes on."""
    created = 0
    for i, pod in enumerate(ctx.replicas):
        ordinal = ctx.start + i
        if pod is None and created == BURST:
            step.requeue.append(0.0)
            return
        if pod is None:
            created += 1
            use_current = ctx.rolling and ordinal < ctx.start + ctx.partition
            rev = ctx.current_rev if use_current else ctx.update_rev
            made, blocked = _claim_actions(ctx, None, ordinal)
            step.actions += made
            if not blocked:
                step.actions.append(
                    Create(POD, new_pod(ctx.sts, template_of_revision(rev), name_of(rev), ordinal))
                )
                counters["replicas"] += 1
                if name_of(rev) == name_of(ctx.current_rev):
                    counters["currentReplicas"] += 1
                if name_of(rev) == name_of(ctx.update_rev):
                    counters["updatedReplicas"] += 1
        elif phase_of(pod) in ("Failed", "Succeeded"):
            if not is_deleting(pod):
                step.actions.append(pod_delete(pod))
        else:
            step.actions += _claim_actions(ctx, pod, ordinal)[0]
            if not ctx.monotonic or not (
                is_deleting(pod)
                or not is_running_and_ready(pod)
                or _unavailable(pod, ctx.min_ready, ctx.now, step)
            ):
                continue
        if ctx.monotonic:
            step.halt = True
            return


def _scale_down(ctx: _Sync, step: _Step) -> None:
    """Keeps condemned pods' claims, then deletes condemned pods highest
    ordinal first (one at a time, and only over healthy ones, when monotonic)."""
    for pod in ctx.condemned:
        step.actions += _claim_actions(ctx, pod, parent_and_ordinal(pod)[1])[0]
    first_unhealthy = next((p for p in ctx.replicas if p is None or not is_healthy(p)), None)
    if first_unhealthy is None:
        first_unhealthy = next((p for p in reversed(ctx.condemned) if not is_healthy(p)), None)
    for pod in ctx.condemned:
        if is_deleting(pod):
            if ctx.monotonic:
                step.halt = True
                return
            continue
        if (
            ctx.monotonic
            and pod is not first_unhealthy
            and (not is_running_and_ready(pod) or _unavailable(pod, ctx.min_ready, ctx.now, step))
        ):
            step.halt = True
            return
        step.actions.append(pod_delete(pod))
        if ctx.monotonic:
            step.halt = True
            return


def _roll(ctx: _Sync, step: _Step) -> bool:
    """The rolling update: deletes the highest-ordinal pod above the partition
    still on an old revision, once all above it are healthy; True when it did."""
    for pod in reversed(ctx.replicas[ctx.partition :]):
        if pod is None:
            return False
        if labels_of(pod).get(POD_REVISION_LABEL) != name_of(ctx.update_rev) and not is_deleting(pod):
            step.actions.append(pod_delete(pod))
            return True
        if not is_healthy(pod):
            return False
    return False


def _status(sts: Obj, ctx: _Sync, counters: dict[str, int], collision_count: int) -> Obj:
    status: Obj = {
        "observedGeneration": generation_of(sts),
        **counters,
        "currentRevision": name_of(ctx.current_rev),
        "updateRevision": name_of(ctx.update_rev),
        "collisionCount": collision_count,
    }
    if ctx.rolling and status["updatedReplicas"] == status["replicas"] == status["readyReplicas"]:
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]
    return status


def _history_cleanup(sts: Obj, owned_revisions: Sequence[Obj], live: set[str]) -> list[Action]:
    """Deletes the oldest revisions no pod or status names, beyond revisionHistoryLimit."""
    history = [r for r in sort_revisions(owned_revisions) if name_of(r) not in live]
    limit = spec_of(sts).get("revisionHistoryLimit")
    limit = 10 if limit is None else int(limit)
    return [
        Delete(CONTROLLER_REVISION, namespace_of(r), name_of(r), uid=uid_of(r))
        for r in history[: max(0, len(history) - limit)]
    ]


def plan_statefulset(
    sts: Obj,
    pods: Sequence[Obj],
    claims: Mapping[str, Obj],
    revisions: Sequence[Obj],
    now: float,
) -> StatefulSetPlan:
    """One sync of one StatefulSet.

    ``pods`` are the namespace's pods (the set adopts and releases as the
    controller ref manager does), ``claims`` the namespace's claims by name,
    ``revisions`` the namespace's ControllerRevisions.
    """
    spec = spec_of(sts)
    # ``ListRevisions`` claims revisions as pods are claimed: orphans matching the
    # selector are adopted (a StatefulSet deleted with propagation Orphan and
    # recreated finds its revisions again, and its pods stay on their revision).
    owned_revisions, revision_adoption = claim_children(
        sts, STATEFULSET, CONTROLLER_REVISION, spec.get("selector"), revisions
    )
    revs = resolve_revisions(sts, owned_revisions, {name_of(r): r for r in revisions})
    owned, adoption = claim_children(
        sts, STATEFULSET, POD, spec.get("selector"), pods, lambda p: parent_and_ordinal(p)[0] == name_of(sts)
    )
    replicas, condemned = _split_ordinals(sts, owned)
    strategy = spec.get("updateStrategy") or {}
    rolling = (strategy.get("type") or "RollingUpdate") == "RollingUpdate"
    ctx = _Sync(
        sts=sts,
        claims=claims,
        replicas=replicas,
        condemned=condemned,
        current_rev=revs.current,
        update_rev=revs.update,
        rolling=rolling,
        partition=int((strategy.get("rollingUpdate") or {}).get("partition") or 0) if rolling else 0,
        monotonic=spec.get("podManagementPolicy") != "Parallel",
        min_ready=int(spec.get("minReadySeconds") or 0),
        now=now,
    )
    existing = [p for p in replicas if p is not None] + condemned
    counters = _counters(existing, ctx.min_ready, now, name_of(revs.current), name_of(revs.update))

    step = _Step(actions=revision_adoption + list(revs.actions) + adoption)
    if not is_deleting(sts):
        _sync_replicas(ctx, step, counters)
        if not step.halt:
            _scale_down(ctx, step)
        if not step.halt and rolling and _roll(ctx, step):
            counters["currentReplicas"] -= 1

    status = _status(sts, ctx, counters, revs.collision_count)
    live = {name_of(revs.current), name_of(revs.update), status["currentRevision"]}
    live |= {labels_of(p).get(POD_REVISION_LABEL, "") for p in owned}
    return StatefulSetPlan(
        step.actions,
        status if _status_differs(status_of(sts), status) else None,
        _history_cleanup(sts, owned_revisions, live),
        min(step.requeue) if step.requeue else None,
    )
