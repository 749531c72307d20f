"""The MatrixOneCluster controller: it creates and syncs the child sets, never pods.

Each reconcile computes every child the spec asks for (``children.py``) and
applies the ones that differ, deletes the CN groups the spec no longer
names, and reports the children's state as its own.

**Rolling changes go in dependency order.** A change that rolls pods
(image, version, config, resources...) reaches a child only once every
child before it (log → TN → CN groups → proxy) has *settled*: taken the
latest spec, rolled every pod to it, and become Ready. Until then the child
keeps its current pod-shaping fields, while changes that roll nothing
(replicas, labels, Service settings) apply at once. So an upgrade rolls the
log service first, and a new version that does not start halts there: the
log service's ``UpToDate`` condition names the pod and why, this cluster's
``UpToDate`` says the roll halted at which child, and nothing after it is
touched. Fixing the spec resumes from where it stopped.
"""

from __future__ import annotations

import base64
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.backup import Backup
from mo_operator.api.cluster import MatrixOneCluster, MatrixOneClusterSpec
from mo_operator.api.cnset import CNSetStatus
from mo_operator.api.dnset import DNSetStatus
from mo_operator.api.logset import LogSetStatus
from mo_operator.api.proxyset import ProxySetStatus
from mo_operator.api.webui import WebUIStatus
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.frozen import thaw
from mo_operator.kube.meta.objects import condition_of, mapping_at, meta_of, namespace_of
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.decision import Decision, Emit, SetCondition
from ..framework.desired import stamped, up_to_date
from ..framework.env import Env
from ..framework.meta import child_metadata, is_controlled_by, is_deleting, name_of, uid_of
from ..framework.writes import Apply, Create, Delete, Intent, Then, Writes
from ..steps import progress, volumes
from ..steps.status import UP_TO_DATE, not_fine
from .children import (
    RENDERINGS,
    ROLE_CN,
    ROLE_LOG,
    ROLE_PROXY,
    ROLE_TN,
    ROLE_WEBUI,
    Child,
    child_keys,
    cn_groups,
    held,
    with_finalizer,
)
from .drift import REVERTED, drifted_fields, reverted_message
from .restore import restore_gate, restore_job_name, restore_pending

Obj = dict[str, Any]

ROLE_ORDER = (ROLE_LOG, ROLE_TN, ROLE_CN, ROLE_PROXY, ROLE_WEBUI)
NOT_READY_REASONS = {
    ROLE_LOG: "LogServiceNotReady",
    ROLE_TN: "DNSetNotReady",
    ROLE_CN: "SomeCNSetsAreNotReady",
    ROLE_PROXY: "ProxySetNotReady",
    ROLE_WEBUI: "WebUINotReady",
}
CREDENTIAL_USER = "dump"
ChildStatus = LogSetStatus | DNSetStatus | CNSetStatus | ProxySetStatus | WebUIStatus
STATUS_MODELS: Mapping[str, type[ChildStatus]] = {
    "LogSet": LogSetStatus,
    "DNSet": DNSetStatus,
    "CNSet": CNSetStatus,
    "ProxySet": ProxySetStatus,
    "WebUI": WebUIStatus,
}
REMOVABLE: Mapping[str, Resource] = {"CNSet": r.CNSETS, "ProxySet": r.PROXYSETS, "WebUI": r.WEBUIS}
"""The children a cluster deletes once its spec drops them, by kind."""
PHASE_READY, PHASE_NOT_READY, PHASE_UPGRADING = "Ready", "NotReady", "Upgrading"


def child_status(kind: str, cached: Mapping[str, Any] | None) -> ChildStatus:
    """A child's status, typed (empty for a child not there)."""
    return typed.status_of(STATUS_MODELS[kind], cached)


def settled(cached: Mapping[str, Any] | None, took: bool) -> bool:
    """The child took the whole desired spec (``took``: ``up_to_date`` of it), rolled
    every pod to it, and is Ready."""
    if cached is None or not took:
        return False
    status = child_status(str(cached["kind"]), cached)
    if (status.observed_generation or 0) < meta_of(cached).generation:
        return False
    return status.is_true("Ready") and status.is_true(UP_TO_DATE)


def _describe(child: Child, cached: Mapping[str, Any] | None, ctype: str) -> str:
    if cached is None:
        return f"{child.label} is being created"
    condition = condition_of(cached, ctype)
    if condition is None:
        return f"{child.label} has not reported yet"
    return f"{child.label}: {condition.get('reason')}: {condition.get('message') or ''}".rstrip(": ")


@dataclass(frozen=True)
class ClusterView:
    """What a MatrixOneCluster's decision reads: the cluster, its admitted spec and its
    status as last known; its credential Secret and, only while that is to be made, a
    fresh password and what a restored cluster takes instead (the Backup it restores
    and the credential of the cluster the Backup was taken from); its RestoreJob while
    a restore decides; its children as cached (by kind and name: those the spec names,
    and those carrying its labels)."""

    cluster: Mapping[str, Any]
    spec: MatrixOneClusterSpec
    known: Mapping[str, Any]
    """The status draft: as last written, or as this reconcile found it."""
    credential: Mapping[str, Any] | None
    password: str = ""
    backup: Mapping[str, Any] | None = None
    source_credential: Mapping[str, Any] | None = None
    restore: Mapping[str, Any] | None = None
    named: Mapping[tuple[str, str], Mapping[str, Any] | None] = field(default_factory=dict)
    """The children the spec names, as cached (None: not there)."""
    labelled: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    """Every child carrying the cluster's labels, in the order log, TN, CN, proxy, web console."""


def source_of(backup: Mapping[str, Any] | None) -> tuple[str, str, str]:
    """What a Backup was taken from, as its ``sourceRef`` says: ``(ref, namespace, name)``
    of the MatrixOneCluster, the name empty when it was not a cluster."""
    record = typed.read(Backup, backup) if backup is not None else None
    source = record.meta.source_ref if record is not None else ""
    kind, _, rest = source.partition("/")
    namespace, _, name = rest.partition("/")
    return source, namespace, name if kind == "matrixonecluster" else ""


def decide(view: ClusterView) -> Decision:
    """The credential, the restore, every child in dependency order (a rolling change
    held until the children before it settled, drift set back), the children the spec
    dropped, and the status the children add up to. Pure: a function of ``view``."""
    intents: list[Intent] = []
    events: list[Emit] = []
    _credential(view, intents, events)
    gate = restore_gate(view.cluster, view.spec, view.restore, _known_reason(view.known, "Ready"))
    intents.extend(gate.decision.intents)
    events.extend(gate.decision.events)
    if not gate.open:  # restoreFrom: no child before the restore completed
        return Decision(tuple(intents), gate.decision.status, gate.decision.conditions, tuple(events))
    name, spec = name_of(view.cluster), view.spec
    rendering = RENDERINGS.of(view.cluster, spec, view.labelled)
    children, wants = rendering.children, rendering.wants
    unsettled_roles: list[str] = []
    held_children: list[Child] = []
    cached_children: dict[str, Mapping[str, Any] | None] = {}
    took: dict[str, bool] = {}
    for role in ROLE_ORDER:
        group = [c for c in children if c.role == role]
        for child in group:
            cached = view.named.get((child.resource.kind, child.name))
            cached_children[child.label] = cached
            want = wants[child.label]
            fresh = took[child.label] = up_to_date(cached, want)
            if cached is not None and unsettled_roles:
                applied = stamped(held(child.obj, cached))
                if applied != want:
                    held_children.append(child)
                    want, fresh = applied, up_to_date(cached, applied)
            if not fresh:
                drift = drifted_fields(want, cached)
                if drift:
                    events.append(Emit("Normal", REVERTED, reverted_message(child, name, spec, drift)))
                intents.append(Apply(child.resource, with_finalizer(want, cached)))
        if any(not settled(cached_children[c.label], took[c.label]) for c in group):
            unsettled_roles.append(role)
        if role == ROLE_LOG:
            intents.append(Then())  # the sets report waiting for their LogSet until they see it
    leaving = _delete_orphans(view, children, intents)
    status, conditions = _status(view, children, took, cached_children, held_children, leaving)
    return Decision(tuple(intents), status, conditions, tuple(events))


def _credential(view: ClusterView, intents: list[Intent], events: list[Emit]) -> None:
    """The initial SQL credential ``<mo>-credential``: made once, never rewritten
    (a new password would not reach the running cluster). A cluster restored
    from a backup holds the source cluster's database, passwords included, so it
    takes the source's credential when that still exists."""
    if view.credential is not None:
        return
    obj = view.cluster
    namespace, name = namespace_of(obj), name_of(obj)
    secret_name = names.credential_secret_name(name)
    obj_labels = {
        labels.NAMESPACE: namespace,
        labels.INSTANCE: name,
        labels.COMPONENT: "MatrixOneCluster",
        **labels.cluster_labels(name),
    }
    data = _restored_credential(view, events) if view.spec.restore_from else None
    if data is None:
        data = {
            "username": base64.b64encode(CREDENTIAL_USER.encode()).decode(),
            "password": base64.b64encode(view.password.encode()).decode(),
        }
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": child_metadata(obj, secret_name, obj_labels),
        "type": "Opaque",
        "data": data,
    }
    intents.append(Create(r.SECRETS, secret))


def _restored_credential(view: ClusterView, events: list[Emit]) -> dict[str, str] | None:
    """The credential of the cluster the backup was taken from, if it still exists."""
    source, _, source_name = source_of(view.backup)
    if source_name:
        data = mapping_at(view.source_credential, "data")
        if data.get("username") and data.get("password"):
            return {"username": str(data["username"]), "password": str(data["password"])}
    events.append(
        Emit(
            "Warning",
            "CredentialNotRestored",
            f"the restored database keeps the passwords of {source or 'the backup source'}, whose "
            f"credential is not available here: set them in Secret "
            f"{names.credential_secret_name(name_of(view.cluster))} by hand",
        )
    )
    return None


def _delete_orphans(view: ClusterView, children: Sequence[Child], intents: list[Intent]) -> list[str]:
    """Delete the children the spec no longer asks for (CN groups it no longer
    names, the proxy or web console it dropped; only those this cluster
    controls), and name those still there.

    They go in the foreground: a removed CN group stays, being deleted, until
    the garbage collector has removed its pods (each drained first), so the
    cluster reports the removal as under way until nothing of the group runs,
    on a real API server whose collector acts seconds later as on one that
    acts at once."""
    obj = view.cluster
    wanted = {(c.resource.kind, c.name) for c in children}
    leaving: list[str] = []
    for (kind, name), child in view.labelled.items():
        res = REMOVABLE.get(kind)
        if res is None or (kind, name) in wanted or not is_controlled_by(child, obj):
            continue
        leaving.append(f"{kind} {name}")
        if not is_deleting(child):
            intents.append(
                Delete(res, namespace_of(obj), name, uid=uid_of(child), propagation_policy="Foreground")
            )
    return leaving


# -------------------------------------------------------------------- status
def _status(
    view: ClusterView,
    children: Sequence[Child],
    took: Mapping[str, bool],
    cached: Mapping[str, Mapping[str, Any] | None],
    held_children: Sequence[Child],
    leaving: Sequence[str],
) -> tuple[Obj, tuple[SetCondition, ...]]:
    namespace, name = namespace_of(view.cluster), name_of(view.cluster)
    by_role = {role: [c for c in children if c.role == role] for role in ROLE_ORDER}
    serving = _known_phase(view.known) in (PHASE_READY, PHASE_UPGRADING)

    def child_status(child: Child) -> Obj:
        copied: Obj = thaw(dict(mapping_at(cached[child.label], "status")))
        return copied

    status: Obj = {"credentialRef": {"name": names.credential_secret_name(name)}}
    status["logService"] = child_status(by_role[ROLE_LOG][0])
    if by_role[ROLE_TN]:
        status["dn"] = child_status(by_role[ROLE_TN][0])
    status["proxy"] = child_status(by_role[ROLE_PROXY][0]) if by_role[ROLE_PROXY] else None
    status["webui"] = child_status(by_role[ROLE_WEBUI][0]) if by_role[ROLE_WEBUI] else None
    groups: list[Obj] = []
    ready_groups = 0
    for (group, _), child in zip(cn_groups(view.spec), by_role[ROLE_CN], strict=True):
        found = cached[child.label]
        ready = _is_ready(found)
        synced = condition_of(found, "Synced")
        ready_groups += ready
        groups.append(
            {
                "name": group,
                "host": names.service_host(Component.CN, child.name, namespace),
                "ready": ready,
                "synced": bool(synced and synced["status"] == "True"),
            }
        )
    status["cnGroups"] = {
        "desiredGroups": len(groups),
        "readyGroups": ready_groups,
        "syncedGroups": sum(g["synced"] for g in groups),
        "groups": groups,
    }
    if by_role[ROLE_PROXY]:
        status["host"] = names.service_host(Component.PROXY, by_role[ROLE_PROXY][0].name, namespace)
    elif groups:
        status["host"] = groups[0]["host"]
    status["port"] = ports.CN_SQL
    status["readable"] = {
        "log": _summary(cached[by_role[ROLE_LOG][0].label]),
        "dn": _summary(cached[by_role[ROLE_TN][0].label]) if by_role[ROLE_TN] else "none",
        "cn": f"{ready_groups}/{len(groups)} groups ready",
    }
    ready_sets = sum(_is_ready(cached[c.label]) for c in children)
    status["readiness"] = f"{ready_sets}/{len(children)}"
    status["version"] = ",".join(_versions(children, cached))
    current = _up_to_date(children, took, cached, held_children, leaving)
    conditions = [_ready(by_role, cached), current]
    expansion = _volume_expansion(children, cached)
    if expansion is not None:
        conditions.append(expansion)
    status["phase"] = phase_of({"conditions": _merged(view.known, conditions)}, serving)
    conditions.extend(_planned_work(children, cached, current, upgrading=status["phase"] == PHASE_UPGRADING))
    status["message"] = not_fine({"conditions": _merged(view.known, conditions)})
    return status, tuple(conditions)


def _known_phase(known: Mapping[str, Any]) -> str:
    return str(known.get("phase") or "")


def _known_reason(known: Mapping[str, Any], ctype: str) -> str | None:
    found = condition_of({"status": known}, ctype)
    return str(found.get("reason")) if found is not None else None


def _merged(known: Mapping[str, Any], conditions: Sequence[SetCondition]) -> list[Obj]:
    """The status draft's conditions with ``conditions`` set, as the framework sets them."""
    out: list[Obj] = [dict(c) for c in known.get("conditions") or ()]
    for condition in conditions:
        entry = {
            "type": condition.type,
            "status": "True" if condition.status else "False",
            "reason": condition.reason,
            "message": condition.message,
        }
        at = next((i for i, c in enumerate(out) if c.get("type") == condition.type), None)
        if at is None:
            out.append(entry)
        else:
            out[at] = entry
    return out


def _ready(
    by_role: Mapping[str, Sequence[Child]], cached: Mapping[str, Mapping[str, Any] | None]
) -> SetCondition:
    for role in ROLE_ORDER:
        not_ready = [c for c in by_role[role] if not _is_ready(cached[c.label])]
        if not_ready:
            message = "; ".join(_describe(c, cached[c.label], "Ready") for c in not_ready)
            return SetCondition("Ready", False, NOT_READY_REASONS[role], message)
    return SetCondition("Ready", True, "AllSetsReady", "every set of the cluster is Ready")


def _up_to_date(
    children: Sequence[Child],
    took: Mapping[str, bool],
    cached: Mapping[str, Mapping[str, Any] | None],
    held_children: Sequence[Child],
    leaving: Sequence[str],
) -> SetCondition:
    for child in children:
        found = cached[child.label]
        if settled(found, took[child.label]):
            continue
        waiting = f"; waiting: {', '.join(c.label for c in held_children)}" if held_children else ""
        condition = condition_of(found, UP_TO_DATE)
        if condition is not None and condition.get("reason") == "RolloutStalled":
            return SetCondition(
                UP_TO_DATE, False, "RolloutHalted", f"{_describe(child, found, UP_TO_DATE)}{waiting}"
            )
        return SetCondition(UP_TO_DATE, False, "Rolling", f"{_describe(child, found, UP_TO_DATE)}{waiting}")
    if leaving:
        return SetCondition(
            UP_TO_DATE, False, "RemovingSets", f"{', '.join(leaving)}: being removed, pods first"
        )
    return SetCondition(UP_TO_DATE, True, "RolloutComplete", "every set runs the current spec")


def _volume_expansion(
    children: Sequence[Child], cached: Mapping[str, Mapping[str, Any] | None]
) -> SetCondition | None:
    """The sets' ``VolumeExpansion`` conditions as one: not True while some set's volumes
    grow or cannot (a StorageClass that cannot expand first), True once all grew."""
    found = [
        (child, condition)
        for child in children
        if (condition := condition_of(cached[child.label], volumes.CONDITION))
    ]
    if not found:
        return None
    pending = sorted(
        ((c, cond) for c, cond in found if cond["status"] != "True"),
        key=lambda item: item[1].get("reason") != volumes.BLOCKED,
    )
    if pending:
        message = "; ".join(f"{c.label}: {cond.get('message') or ''}" for c, cond in pending)
        return SetCondition(volumes.CONDITION, False, str(pending[0][1].get("reason")), message)
    return SetCondition(volumes.CONDITION, True, volumes.EXPANDED, "every set's volumes have the size asked")


def _planned_work(
    children: Sequence[Child],
    cached: Mapping[str, Mapping[str, Any] | None],
    current: SetCondition,
    *,
    upgrading: bool,
) -> tuple[SetCondition, SetCondition]:
    """The cluster's ``Upgrading`` (while its phase is, from one change's first set to its
    last, so not False between two sets) and ``Scaling``, each naming the first set at
    the work with its progress (see :mod:`..steps.progress`); ``current``: the cluster's
    ``UpToDate``."""

    def first(ctype: str) -> tuple[Child, Mapping[str, Any]] | None:
        for child in children:
            found = condition_of(cached[child.label], ctype)
            if found is not None and found.get("status") == "True":
                return child, found
        return None

    rolling = first(progress.UPGRADING)
    if upgrading:
        at = f"{rolling[0].label}: {rolling[1].get('message')}" if rolling else None
        upgrade = SetCondition(progress.UPGRADING, True, progress.ROLLING, at or current.message)
    elif current.status:
        upgrade = SetCondition(
            progress.UPGRADING, False, progress.UP_TO_DATE, "every set runs the current spec"
        )
    else:
        upgrade = SetCondition(progress.UPGRADING, False, progress.NO_ROLLOUT, "no planned rollout running")
    scaled = first(progress.SCALING)
    if scaled is not None:
        child, found = scaled
        grows = found.get("reason") == progress.SCALING_UP
        return upgrade, SetCondition(
            progress.SCALING,
            True,
            progress.SCALING_UP if grows else progress.SCALING_DOWN,
            f"{child.label}: {found.get('message')}",
        )
    return upgrade, SetCondition(
        progress.SCALING, False, progress.AT_DESIRED, "every set has the replicas its spec asks for"
    )


class MatrixOneClusterActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def read(self, ctx: Context) -> ClusterView:
        """Every read ``decide`` needs, once: what a credential is made of only while it
        is to be made, the RestoreJob only while a restore decides."""
        caches, obj = self.env.caches, ctx.obj
        spec = admit(MatrixOneCluster, obj).spec
        namespace, name = ctx.namespace, ctx.name
        credential = caches.get(r.SECRETS, namespace, names.credential_secret_name(name))
        password, backup, source_credential = "", None, None
        if credential is None:
            password = secrets.token_urlsafe(18)
            if spec.restore_from:
                backup = caches.get(r.BACKUPS, "", spec.restore_from)
                _, source_ns, source_name = source_of(backup)
                if source_name:
                    wanted = names.credential_secret_name(source_name)
                    source_credential = caches.get(r.SECRETS, source_ns, wanted)
        pending = restore_pending(obj, spec)
        restore = caches.get(r.RESTOREJOBS, namespace, restore_job_name(name)) if pending else None
        named = {(res.kind, n): caches.get(res, namespace, n) for res, n in child_keys(name, spec)}
        labelled = {
            (res.kind, name_of(o)): o
            for res in (r.LOGSETS, r.DNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS)
            for o in caches.list(res, namespace, labels.cluster_labels(name))
        }
        return ClusterView(
            cluster=obj,
            spec=spec,
            known=ctx.status,
            credential=credential,
            password=password,
            backup=backup,
            source_credential=source_credential,
            restore=restore,
            named=named,
            labelled=labelled,
        )

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)

    async def finalize(self, ctx: Context) -> bool:
        """Children go by owner reference, each by its own policy (the LogSet's
        volumes by its retention policy); nothing here to wait for."""
        return True


def phase_of(status: Mapping[str, Any], serving: bool) -> str:
    """``Upgrading`` while a change rolls through a cluster that was serving (``Ready``
    or already ``Upgrading``), whatever its sets' readiness meanwhile: a planned
    change shows one phase from start to end, not ``NotReady`` each time a pod is
    replaced. A cluster that was not serving (being created, or broken) is ``Ready``
    only once Ready with every set on the current spec, so that its first ``Ready``
    is not followed by an ``Upgrading`` while its last set settles."""
    current = condition_of({"status": status}, UP_TO_DATE)
    rolling = current is not None and current.get("status") != "True"
    if serving and rolling:
        return PHASE_UPGRADING
    ready = condition_of({"status": status}, "Ready")
    if ready is not None and ready.get("status") == "True" and (serving or not rolling):
        return PHASE_READY
    return PHASE_NOT_READY


def _versions(children: Sequence[Child], cached: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The versions the MatrixOne sets run (not the web console's), in the order the
    sets report them, each once."""
    found: list[str] = []
    for child in children:
        if child.role == ROLE_WEBUI:
            continue
        reported = child_status(child.resource.kind, cached[child.label]).version or ""
        found.extend(v for v in reported.split(",") if v and v not in found)
    return found


def _is_ready(obj: Mapping[str, Any] | None) -> bool:
    ready = condition_of(obj, "Ready")
    return bool(ready and ready["status"] == "True")


def _summary(obj: Mapping[str, Any] | None) -> str:
    if obj is None:
        return "creating"
    ready = condition_of(obj, "Ready") or {}
    state = "ready" if ready.get("status") == "True" else "not ready"
    return f"{state}: {ready.get('message') or ''}".rstrip(": ")
