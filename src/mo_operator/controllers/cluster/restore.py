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
from dataclasses import dataclass, field
from typing import Any, Final

from mo_operator.api.backup import RestoreJobStatus
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.meta.objects import meta_of, namespace_of
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.backup import HAKEEPER_DATA_PATH

from ..framework import resources as r
from ..framework.decision import Decision, Emit, SetCondition
from ..framework.meta import is_controlled_by, name_of, owner_reference
from ..framework.typed import status_of
from ..framework.writes import Create, Intent, Patch

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


@dataclass(frozen=True)
class Gate:
    """Whether the cluster's children may be made, and what the restore does meanwhile."""

    open: bool
    decision: Decision = field(default_factory=Decision)


def restore_pending(cluster: Mapping[str, Any], spec: MatrixOneClusterSpec) -> bool:
    """A restore is asked for and not yet recorded as complete: the RestoreJob decides."""
    return bool(spec.restore_from) and not meta_of(cluster).annotations.get(labels.RESTORE_COMPLETE)


def _hold(
    cluster: Mapping[str, Any],
    reason: str,
    message: str,
    events: tuple[Emit, ...] = (),
    intents: tuple[Intent, ...] = (),
) -> Gate:
    """Closed: the cluster is NotReady and says why; its credential is already named."""
    status = {"credentialRef": {"name": names.credential_secret_name(name_of(cluster))}, "phase": "NotReady"}
    ready = SetCondition("Ready", False, reason, message)
    return Gate(False, Decision(intents, status, (ready,), events))


def restore_gate(
    cluster: Mapping[str, Any],
    spec: MatrixOneClusterSpec,
    job: Mapping[str, Any] | None,
    ready_reason: str | None,
) -> Gate:
    """Whether the cluster's children may be created: no restore asked for, or it
    completed (``job``: the RestoreJob ``restore-<mo>``; ``ready_reason``: the reason of
    the cluster's ``Ready`` as last known). Otherwise the RestoreJob is created or followed, and the cluster's status
    says how the restore goes. Pure."""
    backup = spec.restore_from
    if not restore_pending(cluster, spec):
        return Gate(True)
    name = restore_job_name(name_of(cluster))
    if job is None:
        return _hold(
            cluster,
            "Restoring",
            f"restoring Backup {backup}: creating RestoreJob {name}",
            (Emit("Normal", "Restoring", f"restoring Backup {backup} with RestoreJob {name}"),),
            (Create(r.RESTOREJOBS, restore_job(cluster, spec)),),
        )
    if not is_controlled_by(job, cluster):
        return _hold(
            cluster, "RestoreBlocked", f"RestoreJob {name} exists and does not belong to this cluster"
        )
    status = status_of(RestoreJobStatus, job)
    phase = status.phase or "Pending"
    ended = status.condition("Ended")
    said = f": {ended.message}" if ended is not None and ended.message else ""
    if phase == "Failed":
        message = f"RestoreJob {name} failed{said}; delete and recreate the cluster to retry"
        told = ready_reason == RESTORE_FAILED
        return _hold(
            cluster, RESTORE_FAILED, message, () if told else (Emit("Warning", RESTORE_FAILED, message),)
        )
    if phase == "Completed":
        recorded = Patch(
            r.MATRIXONE_CLUSTERS,
            namespace_of(cluster),
            name_of(cluster),
            {"metadata": {"annotations": {labels.RESTORE_COMPLETE: RESTORE_COMPLETE_VALUE}}},
            what="record that the restore completed",
        )
        restored = Emit(
            "Normal", "Restored", f"Backup {backup} restored by RestoreJob {name}; creating the cluster"
        )
        return Gate(True, Decision((recorded,), events=(restored,)))
    return _hold(cluster, "Restoring", f"restoring Backup {backup}: RestoreJob {name} is {phase}{said}")
