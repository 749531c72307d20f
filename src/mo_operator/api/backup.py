"""Backup, BackupJob and RestoreJob: physical backups to object storage and restores from them."""

from __future__ import annotations

from .base import APIModel, opt, req
from .common import ConditionalStatus, JobOverlay, SharedStorageProvider
from .fields import DateTime, Duration, Quantity
from .k8s import Resource

__all__ = [
    "Backup",
    "BackupJob",
    "BackupJobSpec",
    "BackupJobStatus",
    "BackupMeta",
    "BackupSource",
    "BackupStatus",
    "RestoreJob",
    "RestoreJobSpec",
    "RestoreJobStatus",
]


class BackupSource(APIModel):
    """What a backup job backs up."""

    cluster_ref: str | None = opt(
        "Name of the MatrixOneCluster to back up; mutually exclusive with cnSetRef."
    )
    cn_set_ref: str | None = opt("Name of the CNSet to back up through; mutually exclusive with clusterRef.")
    secret_ref: str | None = opt(
        "Name of a Secret with the database credentials; the cluster's own credential is used if unset."
    )


class BackupJobSpec(APIModel):
    """Desired state of a BackupJob."""

    ttl: Duration | None = opt("How long the job is kept after it ends; 1h by default.")
    source: BackupSource = req("What to back up.")
    target: SharedStorageProvider = req("Where the backup is written; only s3 is supported.")
    overlay: JobOverlay | None = opt("Customisation of the job's pod.")


class BackupJobStatus(ConditionalStatus):
    """Observed state of a BackupJob."""

    phase: str | None = opt("Pending, Running, Completed or Failed.")
    backup: str | None = opt("Name of the Backup the job produced.")


class BackupJob(Resource):
    """A BackupJob runs one physical backup of a MatrixOne cluster to object storage."""

    spec: BackupJobSpec = req("Desired state of the job.")
    status: BackupJobStatus | None = opt("Observed state of the job.")


class BackupMeta(APIModel):
    """What a backup is and where its data is."""

    location: SharedStorageProvider = req("Where the backup's data is.")
    id: str = req("Identifier of the backup.")
    size: Quantity | None = opt("Size of the backup's data.")
    at_time: DateTime = req("When the backup started.")
    complete_time: DateTime = req("When the backup completed.")
    source_ref: str = req('What was backed up: "matrixonecluster/<ns>/<name>" or "cnset/<ns>/<name>".')
    raw: str = req("The backup tool's own metadata, passed back to it on restore.")


class BackupStatus(ConditionalStatus):
    """Observed state of a Backup."""


class Backup(Resource):
    """A Backup is a completed physical backup of a MatrixOne cluster (cluster-scoped)."""

    meta: BackupMeta = req("The backup's metadata.")
    status: BackupStatus | None = opt("Observed state of the backup.")


class RestoreJobSpec(APIModel):
    """Desired state of a RestoreJob."""

    ttl: Duration | None = opt("How long the job is kept after it ends; 1h by default.")
    backup_name: str | None = opt("Name of the Backup to restore; required unless externalSource is set.")
    external_source: SharedStorageProvider | None = opt(
        "A backup location outside any Backup object; mutually exclusive with backupName."
    )
    target: SharedStorageProvider = req("Where the restored data is written.")


class RestoreJobStatus(ConditionalStatus):
    """Observed state of a RestoreJob."""

    phase: str | None = opt("Pending, Running, Completed or Failed.")


class RestoreJob(Resource):
    """A RestoreJob restores a Backup into object storage for a new cluster to start from."""

    spec: RestoreJobSpec = req("Desired state of the job.")
    status: RestoreJobStatus | None = opt("Observed state of the job.")
    overlay: JobOverlay | None = opt("Customisation of the job's pod (at the top level, as upstream has it).")
