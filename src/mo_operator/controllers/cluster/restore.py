"""A new cluster restored from a Backup (``spec.restoreFrom``), as upstream does it.

Before any child exists, the cluster creates the RestoreJob ``restore-<mo>`` (owned by
the cluster), which restores the Backup into the cluster's own shared storage
(``logService.sharedStorage``). Nothing else is created while it runs: the log service
must find the restored HAKeeper data when it bootstraps, and a HAKeeper cannot be
bootstrapped twice. Once the RestoreJob completed, the cluster records it in the
annotation ``matrixorigin.io/restore-complete`` (so the RestoreJob may go after its
ttl, and a cluster restored by upstream's operator is never restored again) and creates
its children, the LogSet bootstrapping from the restored data
(``initialConfig.restoreFrom: hk_data``). A failed restore leaves the cluster Ready=False
with reason RestoreFailed and the RestoreJob's message; it is not retried (the storage
may hold half a restore): delete and recreate the cluster to try again.

The RestoreJob's pod runs where, and as, the cluster's log service runs: same
tolerations, affinity, node selector (as node affinity), service account and image
pull secrets.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Final

from mo_operator.api.backup import RestoreJobStatus
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.controller.actor import Context
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.backup import HAKEEPER_DATA_PATH

from ..framework import resources as r
from ..framework.env import Env
from ..framework.meta import is_controlled_by, owner_reference
from ..framework.typed import status_of
from ..framework.writes import Writes

Obj = dict[str, Any]

RESTORE_COMPLETE_VALUE: Final = "True"
RESTORE_FAILED: Final = "RestoreFailed"
_PLACEMENT = ("tolerations", "affinity", "serviceAccountName", "imagePullSecrets")


def restore_job_name(cluster_name: str) -> str:
    """``restore-<mo>`` (upstream's name)."""
    return f"restore-{cluster_name}"


def restored_log_spec(log_spec: Mapping[str, Any]) -> Obj:
    """The LogSet spec of a restored cluster: HAKeeper bootstraps from the restored data."""
    out: Obj = copy.deepcopy(dict(log_spec))
    out["initialConfig"] = {**(out.get("initialConfig") or {}), "restoreFrom": HAKEEPER_DATA_PATH}
    return out


def _with_node_selector(affinity: Mapping[str, Any] | None, selector: Mapping[str, str]) -> Obj:
    """``affinity`` whose required node affinity also asks for ``selector``'s labels."""
    out: Obj = copy.deepcopy(dict(affinity or {}))
    node = out.setdefault("nodeAffinity", {})
    required = node.setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
    terms = required.get("nodeSelectorTerms") or [{}]
    wanted = [{"key": k, "operator": "In", "values": [v]} for k, v in sorted(selector.items())]
    required["nodeSelectorTerms"] = [
        {**term, "matchExpressions": [*(term.get("matchExpressions") or []), *wanted]} for term in terms
    ]
    return out


def placement(spec: MatrixOneClusterSpec) -> Obj:
    """The RestoreJob overlay that puts its pod where the cluster's log service runs."""
    log = spec.log_service
    overlay = dump(log.overlay) if log.overlay else {}
    out: Obj = {key: overlay[key] for key in _PLACEMENT if overlay.get(key)}
    selector = log.node_selector or spec.node_selector or {}
    if selector:
        out["affinity"] = _with_node_selector(out.get("affinity"), selector)
    return out


def restore_job(cluster: Mapping[str, Any], spec: MatrixOneClusterSpec) -> Obj:
    """The RestoreJob of a cluster: its Backup into its shared storage."""
    meta = cluster["metadata"]
    job: Obj = {
        "apiVersion": API_VERSION,
        "kind": "RestoreJob",
        "metadata": {
            "name": restore_job_name(meta["name"]),
            "namespace": meta.get("namespace") or "",
            "labels": labels.cluster_labels(meta["name"]),
            "ownerReferences": [owner_reference(cluster)],
        },
        "spec": {"backupName": spec.restore_from, "target": dump(spec.log_service.shared_storage)},
    }
    overlay = placement(spec)
    if overlay:
        job["overlay"] = overlay
    return job


def _hold(ctx: Context, reason: str, message: str) -> None:
    ctx.status["credentialRef"] = {"name": names.credential_secret_name(ctx.name)}
    ctx.status["phase"] = "NotReady"
    ctx.set_condition("Ready", False, reason, message)


def restore_gate(env: Env, ctx: Context, spec: MatrixOneClusterSpec, plan: Writes) -> bool:
    """Whether the cluster's children may be created: no restore asked for, or it completed.

    Otherwise the RestoreJob is created or followed, and the cluster's status says how
    the restore goes."""
    backup = spec.restore_from
    if not backup:
        return True
    annotations = ctx.obj["metadata"].get("annotations") or {}
    if annotations.get(labels.RESTORE_COMPLETE):
        return True
    name = restore_job_name(ctx.name)
    job = env.caches.get(r.RESTOREJOBS, ctx.namespace, name)
    if job is None:
        plan.create(restore_job(ctx.obj, spec), r.RESTOREJOBS)
        _hold(ctx, "Restoring", f"restoring Backup {backup}: creating RestoreJob {name}")
        ctx.event("Normal", "Restoring", f"restoring Backup {backup} with RestoreJob {name}")
        return False
    if not is_controlled_by(job, ctx.obj):
        _hold(ctx, "RestoreBlocked", f"RestoreJob {name} exists and does not belong to this cluster")
        return False
    status = status_of(RestoreJobStatus, job)
    phase = status.phase or "Pending"
    ended = status.condition("Ended")
    said = f": {ended.message}" if ended is not None and ended.message else ""
    if phase == "Failed":
        message = f"RestoreJob {name} failed{said}; delete and recreate the cluster to retry"
        before = ctx.condition("Ready")
        if before is None or before.get("reason") != RESTORE_FAILED:
            ctx.event("Warning", RESTORE_FAILED, message)
        _hold(ctx, RESTORE_FAILED, message)
        return False
    if phase == "Completed":
        plan.patch(
            r.MATRIXONE_CLUSTERS,
            ctx.namespace,
            ctx.name,
            {"metadata": {"annotations": {labels.RESTORE_COMPLETE: RESTORE_COMPLETE_VALUE}}},
            what="record that the restore completed",
        )
        ctx.event(
            "Normal", "Restored", f"Backup {backup} restored by RestoreJob {name}; creating the cluster"
        )
        return True
    _hold(ctx, "Restoring", f"restoring Backup {backup}: RestoreJob {name} is {phase}{said}")
    return False
