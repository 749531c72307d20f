"""The simulated object storage as far as backups go: which backups exist where, and
which paths hold data restored from one.

``mo_br backup`` (simulated in ``backuptool``) records a backup here; ``mo_br restore``
succeeds only for a backup recorded here and marks its target path as holding that
backup's data; a log service told to bootstrap from restored HAKeeper data (its
``restore.file-path``) bootstraps only if its path holds some (``state``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mo_operator.matrixone.backup import HAKEEPER_DATA_PATH


@dataclass(frozen=True)
class StorageLocation:
    """A path in object storage: endpoint, bucket and the key prefix (no slashes around)."""

    endpoint: str
    bucket: str
    path: str

    @classmethod
    def of(cls, endpoint: str, bucket: str, path: str) -> StorageLocation:
        return cls(endpoint.rstrip("/"), bucket.strip("/"), path.strip("/"))

    def __str__(self) -> str:
        return f"s3://{self.bucket}/{self.path}".rstrip("/")


@dataclass(frozen=True)
class RestorePoint:
    """Where a restoring log service reads HAKeeper's data from: a file under a location."""

    location: StorageLocation
    file: str


@dataclass(frozen=True)
class BackupRecord:
    """A backup the simulated ``mo_br`` made."""

    id: str
    location: StorageLocation
    source: tuple[str, str]
    """``(namespace, LogSet)`` of the cluster it was taken from."""
    size: int
    at: float


@dataclass
class BackupCatalog:
    backups: dict[str, BackupRecord] = field(default_factory=dict)
    restored: dict[StorageLocation, str] = field(default_factory=dict)
    """Paths that hold a restored backup, and which one."""

    def record(self, backup: BackupRecord) -> None:
        self.backups[backup.id] = backup

    def delete(self, backup_id: str) -> None:
        self.backups.pop(backup_id, None)

    def restore(self, backup_id: str, target: StorageLocation) -> None:
        self.restored[target] = backup_id

    def holding(self, point: RestorePoint) -> str | None:
        """The backup whose HAKeeper data ``point`` reads, None if there is none there."""
        if point.file.strip("/") != HAKEEPER_DATA_PATH:
            return None
        return self.restored.get(point.location)
