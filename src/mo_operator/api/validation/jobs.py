"""Backup and restore jobs, and Backups: a source to back up, an S3 target, a backup to restore."""

from __future__ import annotations

from typing import Any

from .errors import FieldError
from .podset import overlay_errors
from .resources import non_negative
from .storage import shared_storage_errors

__all__ = ["backup_errors", "backupjob_errors", "restorejob_errors"]


def backupjob_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj["spec"]
    source = spec["source"]
    errs = []
    if source.get("clusterRef") is None and source.get("cnSetRef") is None:
        errs.append(FieldError("spec.source", "one of clusterRef or cnSetRef must be set"))
    elif source.get("clusterRef") is not None and source.get("cnSetRef") is not None:
        errs.append(FieldError("spec.source", "only one of clusterRef or cnSetRef may be set"))
    errs += shared_storage_errors(spec["target"], "spec.target")
    if "fileSystem" in spec["target"]:
        errs.append(FieldError("spec.target.fileSystem", "backups can only be written to s3"))
    errs += overlay_errors(spec.get("overlay"), "spec.overlay")
    return errs


def restorejob_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj["spec"]
    errs = []
    has_name, has_source = bool(spec.get("backupName")), "externalSource" in spec
    if not has_name and not has_source:
        errs.append(FieldError("spec.backupName", "backupName must be set unless externalSource is set"))
    elif has_name and has_source:
        errs.append(FieldError("spec.externalSource", "only one of backupName or externalSource may be set"))
    if has_source:
        errs += shared_storage_errors(spec["externalSource"], "spec.externalSource")
    errs += shared_storage_errors(spec["target"], "spec.target")
    errs += overlay_errors(obj.get("overlay"), "overlay")
    return errs


def backup_errors(obj: dict[str, Any]) -> list[FieldError]:
    meta = obj["meta"]
    return shared_storage_errors(meta["location"], "meta.location") + non_negative(
        meta.get("size"), "meta.size"
    )
