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
from typing import Any

from mo_operator.api.cluster import MatrixOneCluster, MatrixOneClusterSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.frozen import thaw
from mo_operator.kube.meta.objects import condition_of, mapping_at, view
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.desired import stamped, up_to_date
from ..framework.env import Env
from ..framework.meta import child_metadata, is_controlled_by, is_deleting, name_of
from ..framework.writes import Writes
from ..steps import progress, volumes
from ..steps.status import UP_TO_DATE, not_fine, summarise
from .children import (
    ROLE_CN,
    ROLE_LOG,
    ROLE_PROXY,
    ROLE_TN,
    ROLE_WEBUI,
    Child,
    cn_groups,
    desired_children,
    held,
    with_finalizer,
)
from .drift import REVERTED, drifted_fields, reverted_message
from .restore import restore_gate

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
PHASE_READY, PHASE_NOT_READY, PHASE_UPGRADING = "Ready", "NotReady", "Upgrading"


def settled(cached: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> bool:
    """The child took the whole desired spec, rolled every pod to it, and is Ready."""
    if cached is None or not up_to_date(cached, desired):
        return False
    body = view(cached)
    if int(body.status.get("observedGeneration") or 0) < body.meta.generation:
        return False
    ready, current = body.condition("Ready"), body.condition(UP_TO_DATE)
    return bool(ready and ready["status"] == "True" and current and current["status"] == "True")


def _describe(child: Child, cached: Mapping[str, Any] | None, ctype: str) -> str:
    if cached is None:
        return f"{child.label} is being created"
    condition = condition_of(cached, ctype)
    if condition is None:
        return f"{child.label} has not reported yet"
    return f"{child.label}: {condition.get('reason')}: {condition.get('message') or ''}".rstrip(": ")


class MatrixOneClusterActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admit(MatrixOneCluster, obj).spec
        namespace, name = ctx.namespace, ctx.name
        plan = Writes(self.env.client)
        self._credential(ctx, spec, plan)
        if not restore_gate(self.env, ctx, spec, plan):
            return plan or None  # restoreFrom: no child before the restore completed
        stored = {
            (res.kind, name_of(o)): o
            for res in (r.LOGSETS, r.DNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS)
            for o in self.env.caches.list(res, namespace, labels.cluster_labels(name))
        }
        children = desired_children(obj, spec, stored)
        wants = {child.label: stamped(child.obj) for child in children}
        unsettled_roles: list[str] = []
        held_children: list[Child] = []
        cached_children: dict[str, Mapping[str, Any] | None] = {}
        for role in ROLE_ORDER:
            group = [c for c in children if c.role == role]
            for child in group:
                cached = self.env.caches.get(child.resource, namespace, child.name)
                cached_children[child.label] = cached
                want = wants[child.label]
                if cached is not None and unsettled_roles:
                    applied = stamped(held(child.obj, cached))
                    if applied != want:
                        held_children.append(child)
                    want = applied
                if not up_to_date(cached, want):
                    drift = drifted_fields(want, cached)
                    if drift:
                        ctx.event("Normal", REVERTED, reverted_message(child, name, spec, drift))
                    plan.apply(with_finalizer(want, cached), child.resource)
            if any(not settled(cached_children[c.label], wants[c.label]) for c in group):
                unsettled_roles.append(role)
            if role == ROLE_LOG:
                plan.then()  # the sets find their LogSet there when they first look
        leaving = self._delete_orphans(obj, children, plan)
        self._status(ctx, spec, children, wants, cached_children, held_children, leaving)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Children go by owner reference, each by its own policy (the LogSet's
        volumes by its retention policy); nothing here to wait for."""
        return True

    # ---------------------------------------------------------------- writes
    def _credential(self, ctx: Context, spec: MatrixOneClusterSpec, plan: Writes) -> None:
        """The initial SQL credential ``<mo>-credential``: made once, never rewritten
        (a new password would not reach the running cluster). A cluster restored
        from a backup holds the source cluster's database, passwords included, so it
        takes the source's credential when that still exists."""
        obj = ctx.obj
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        secret_name = names.credential_secret_name(name)
        if self.env.caches.get(r.SECRETS, namespace, secret_name) is not None:
            return
        obj_labels = {
            labels.NAMESPACE: namespace,
            labels.INSTANCE: name,
            labels.COMPONENT: "MatrixOneCluster",
            **labels.cluster_labels(name),
        }
        data = self._restored_credential(ctx, spec.restore_from) if spec.restore_from else None
        if data is None:
            data = {
                "username": base64.b64encode(CREDENTIAL_USER.encode()).decode(),
                "password": base64.b64encode(secrets.token_urlsafe(18).encode()).decode(),
            }
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": child_metadata(obj, secret_name, obj_labels),
            "type": "Opaque",
            "data": data,
        }
        plan.create(secret, r.SECRETS)

    def _restored_credential(self, ctx: Context, backup_name: str) -> dict[str, str] | None:
        """The credential of the cluster the backup was taken from, if it still exists."""
        backup = self.env.caches.get(r.BACKUPS, "", backup_name)
        source = str(mapping_at(backup, "meta").get("sourceRef") or "")
        kind, _, rest = source.partition("/")
        source_ns, _, source_name = rest.partition("/")
        if kind == "matrixonecluster" and source_name:
            found = self.env.caches.get(r.SECRETS, source_ns, names.credential_secret_name(source_name))
            data = mapping_at(found, "data")
            if data.get("username") and data.get("password"):
                return {"username": str(data["username"]), "password": str(data["password"])}
        ctx.event(
            "Warning",
            "CredentialNotRestored",
            f"the restored database keeps the passwords of {source or 'the backup source'}, whose credential "
            f"is not available here: set them in Secret {names.credential_secret_name(ctx.name)} by hand",
        )
        return None

    def _delete_orphans(self, obj: Mapping[str, Any], children: Sequence[Child], plan: Writes) -> list[str]:
        """Delete the children the spec no longer asks for (CN groups it no longer
        names, the proxy or web console it dropped; only those this cluster
        controls), and name those still there.

        They go in the foreground: a removed CN group stays, being deleted, until
        the garbage collector has removed its pods (each drained first), so the
        cluster reports the removal as under way until nothing of the group runs,
        on a real API server whose collector acts seconds later as on one that
        acts at once."""
        namespace = obj["metadata"].get("namespace") or ""
        wanted = {(c.resource.kind, c.name) for c in children}
        leaving: list[str] = []
        for res in (r.CNSETS, r.PROXYSETS, r.WEBUIS):
            for child in self.env.caches.list(res, namespace, labels.cluster_labels(obj["metadata"]["name"])):
                if (res.kind, name_of(child)) in wanted or not is_controlled_by(child, obj):
                    continue
                leaving.append(f"{res.kind} {name_of(child)}")
                if not is_deleting(child):
                    plan.delete(
                        res,
                        namespace,
                        name_of(child),
                        uid=child["metadata"]["uid"],
                        propagation_policy="Foreground",
                    )
        return leaving

    # ---------------------------------------------------------------- status
    def _status(
        self,
        ctx: Context,
        spec: MatrixOneClusterSpec,
        children: Sequence[Child],
        wants: Mapping[str, Mapping[str, Any]],
        cached: Mapping[str, Mapping[str, Any] | None],
        held_children: Sequence[Child],
        leaving: Sequence[str],
    ) -> None:
        status = ctx.status
        namespace, name = ctx.namespace, ctx.name
        by_role = {role: [c for c in children if c.role == role] for role in ROLE_ORDER}
        serving = status.get("phase") in (PHASE_READY, PHASE_UPGRADING)

        def child_status(child: Child) -> Obj:
            found = cached[child.label]
            copied: Obj = thaw(dict(mapping_at(found, "status")))
            return copied

        status["credentialRef"] = {"name": names.credential_secret_name(name)}
        status["logService"] = child_status(by_role[ROLE_LOG][0])
        if by_role[ROLE_TN]:
            status["dn"] = child_status(by_role[ROLE_TN][0])
        if by_role[ROLE_PROXY]:
            status["proxy"] = child_status(by_role[ROLE_PROXY][0])
        else:
            status.pop("proxy", None)
        if by_role[ROLE_WEBUI]:
            status["webui"] = child_status(by_role[ROLE_WEBUI][0])
        else:
            status.pop("webui", None)
        groups: list[Obj] = []
        ready_groups = 0
        for (group, _), child in zip(cn_groups(spec), by_role[ROLE_CN], strict=True):
            found = cached[child.label]
            ready = condition_of(found, "Ready")
            synced = condition_of(found, "Synced")
            ready_groups += bool(ready and ready["status"] == "True")
            groups.append(
                {
                    "name": group,
                    "host": names.service_host(Component.CN, child.name, namespace),
                    "ready": bool(ready and ready["status"] == "True"),
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
        self._ready(ctx, by_role, cached)
        self._up_to_date(ctx, children, wants, cached, held_children, leaving)
        _volume_expansion(ctx, children, cached)
        ready_sets = sum(_is_ready(cached[c.label]) for c in children)
        summarise(ctx, f"{ready_sets}/{len(children)}", _versions(children, cached))
        status["phase"] = phase_of(status, serving)
        _planned_work(ctx, children, cached, upgrading=status["phase"] == PHASE_UPGRADING)
        status["message"] = not_fine(status)

    def _ready(
        self,
        ctx: Context,
        by_role: Mapping[str, Sequence[Child]],
        cached: Mapping[str, Mapping[str, Any] | None],
    ) -> None:
        for role in ROLE_ORDER:
            not_ready = [c for c in by_role[role] if not _is_ready(cached[c.label])]
            if not_ready:
                message = "; ".join(_describe(c, cached[c.label], "Ready") for c in not_ready)
                ctx.set_condition("Ready", False, NOT_READY_REASONS[role], message)
                return
        ctx.set_condition("Ready", True, "AllSetsReady", "every set of the cluster is Ready")

    def _up_to_date(
        self,
        ctx: Context,
        children: Sequence[Child],
        wants: Mapping[str, Mapping[str, Any]],
        cached: Mapping[str, Mapping[str, Any] | None],
        held_children: Sequence[Child],
        leaving: Sequence[str],
    ) -> None:
        for child in children:
            found = cached[child.label]
            if settled(found, wants[child.label]):
                continue
            waiting = f"; waiting: {', '.join(c.label for c in held_children)}" if held_children else ""
            condition = condition_of(found, UP_TO_DATE)
            if condition is not None and condition.get("reason") == "RolloutStalled":
                ctx.set_condition(
                    UP_TO_DATE, False, "RolloutHalted", f"{_describe(child, found, UP_TO_DATE)}{waiting}"
                )
            else:
                ctx.set_condition(
                    UP_TO_DATE, False, "Rolling", f"{_describe(child, found, UP_TO_DATE)}{waiting}"
                )
            return
        if leaving:
            ctx.set_condition(
                UP_TO_DATE, False, "RemovingSets", f"{', '.join(leaving)}: being removed, pods first"
            )
            return
        ctx.set_condition(UP_TO_DATE, True, "RolloutComplete", "every set runs the current spec")


def _volume_expansion(
    ctx: Context, children: Sequence[Child], cached: Mapping[str, Mapping[str, Any] | None]
) -> None:
    """The sets' ``VolumeExpansion`` conditions as one: not True while some set's volumes
    grow or cannot (a StorageClass that cannot expand first), True once all grew."""
    found = [
        (child, condition)
        for child in children
        if (condition := condition_of(cached[child.label], volumes.CONDITION))
    ]
    if not found:
        return
    pending = sorted(
        ((c, cond) for c, cond in found if cond["status"] != "True"),
        key=lambda item: item[1].get("reason") != volumes.BLOCKED,
    )
    if pending:
        message = "; ".join(f"{c.label}: {cond.get('message') or ''}" for c, cond in pending)
        ctx.set_condition(volumes.CONDITION, False, str(pending[0][1].get("reason")), message)
    else:
        ctx.set_condition(
            volumes.CONDITION, True, volumes.EXPANDED, "every set's volumes have the size asked"
        )


def _planned_work(
    ctx: Context,
    children: Sequence[Child],
    cached: Mapping[str, Mapping[str, Any] | None],
    *,
    upgrading: bool,
) -> None:
    """The cluster's ``Upgrading`` (while its phase is, from one change's first set to its
    last, so not False between two sets) and ``Scaling``, each naming the first set at
    the work with its progress (see :mod:`..steps.progress`)."""

    def first(ctype: str) -> tuple[Child, Mapping[str, Any]] | None:
        for child in children:
            found = condition_of(cached[child.label], ctype)
            if found is not None and found.get("status") == "True":
                return child, found
        return None

    rolling = first(progress.UPGRADING)
    if upgrading:
        at = f"{rolling[0].label}: {rolling[1].get('message')}" if rolling else None
        ctx.set_condition(progress.UPGRADING, True, progress.ROLLING, at or _message(ctx, UP_TO_DATE))
    elif (ctx.condition(UP_TO_DATE) or {}).get("status") == "True":
        ctx.set_condition(progress.UPGRADING, False, progress.UP_TO_DATE, "every set runs the current spec")
    else:
        ctx.set_condition(progress.UPGRADING, False, progress.NO_ROLLOUT, "no planned rollout running")
    scaled = first(progress.SCALING)
    if scaled is not None:
        child, found = scaled
        grows = found.get("reason") == progress.SCALING_UP
        ctx.set_condition(
            progress.SCALING,
            True,
            progress.SCALING_UP if grows else progress.SCALING_DOWN,
            f"{child.label}: {found.get('message')}",
        )
    else:
        ctx.set_condition(
            progress.SCALING, False, progress.AT_DESIRED, "every set has the replicas its spec asks for"
        )


def _message(ctx: Context, ctype: str) -> str:
    return str((ctx.condition(ctype) or {}).get("message") or "")


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
        reported = str(mapping_at(cached[child.label], "status").get("version") or "")
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
