"""Backup and restore jobs, and Backups: a source to back up, an S3 target, a backup to restore."""

from __future__ import annotations

from typing import Any

from ..cron import schedule_error, time_zone_error
from .errors import FieldError
from .podset import overlay_errors
from .resources import non_negative
from .storage import shared_storage_errors

__all__ = ["backup_errors", "backupjob_errors", "backupschedule_errors", "restorejob_errors"]


def _backupjob_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    source = spec["source"]
    errs = []
    if source.get("clusterRef") is None and source.get("cnSetRef") is None:
        errs.append(FieldError(f"{path}.source", "one of clusterRef or cnSetRef must be set"))
    elif source.get("clusterRef") is not None and source.get("cnSetRef") is not None:
        errs.append(FieldError(f"{path}.source", "only one of clusterRef or cnSetRef may be set"))
    errs += shared_storage_errors(spec["target"], f"{path}.target")
    if "fileSystem" in spec["target"]:
        errs.append(FieldError(f"{path}.target.fileSystem", "backups can only be written to s3"))
    errs += overlay_errors(spec.get("overlay"), f"{path}.overlay")
    return errs


def backupjob_errors(obj: dict[str, Any]) -> list[FieldError]:
    return _backupjob_spec_errors(obj["spec"], "spec")


def backupschedule_errors(obj: dict[str, Any]) -> list[FieldError]:
    """A schedule a CronJob would take, a time zone that exists, and a valid BackupJob template."""
    spec = obj["spec"]
    errs = []
    if (why := schedule_error(str(spec["schedule"]))) is not None:
        errs.append(FieldError("spec.schedule", f'Invalid value: "{spec["schedule"]}": {why}'))
    zone = spec.get("timeZone")
    if zone is not None and (why := time_zone_error(str(zone))) is not None:
        errs.append(FieldError("spec.timeZone", f'Invalid value: "{zone}": {why}'))
    return errs + _backupjob_spec_errors(spec["template"], "spec.template")


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
