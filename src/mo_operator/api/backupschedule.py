"""BackupSchedule: BackupJobs on a cron schedule, and the retention of their Backups."""

from __future__ import annotations

from typing import Annotated, Literal

from .backup import BackupJobSpec
from .base import APIModel, opt, req
from .common import ConditionalStatus
from .fields import CRDHint, DateTime, Duration, Int32, Int64
from .k8s import Resource

__all__ = [
    "BackupRetention",
    "BackupSchedule",
    "BackupScheduleSpec",
    "BackupScheduleStatus",
    "ConcurrencyPolicy",
]

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]


class BackupRetention(APIModel):
    """Which of the schedule's Backups are kept; the others have their data deleted by the
    backup tool, then their Backup object. The newest Backup is always kept."""

    count: Int32 | None = opt("Keep at most this many Backups of the schedule, newest first.", ge=1)
    max_age: Duration | None = opt(
        "Delete Backups that started longer ago than this (e.g. 168h); the newest is kept whatever its age."
    )


class BackupScheduleSpec(APIModel):
    """Desired state of a BackupSchedule."""

    schedule: str = req(
        'When to back up, in cron syntax as a CronJob takes it: five fields ("0 3 * * *") or a macro '
        "(@hourly, @daily, @weekly, @monthly, @yearly).",
        min_length=1,
        max_length=256,
    )
    time_zone: str | None = opt(
        "IANA time zone the schedule is read in (e.g. Europe/Paris); UTC if unset.",
        min_length=1,
        max_length=64,
    )
    starting_deadline_seconds: Int64 | None = opt(
        "A run that could not start within this many seconds of its time is skipped; "
        "without it a missed run starts late, whatever the delay. At most one missed run is caught up.",
        ge=0,
    )
    concurrency_policy: Annotated[ConcurrencyPolicy | None, CRDHint(default="Forbid")] = opt(
        "What a run does while an earlier BackupJob still runs: Forbid (skip the new run, the default), "
        "Allow (run both) or Replace (delete the running one)."
    )
    suspend: Annotated[bool | None, CRDHint(default=False)] = opt(
        "Start no new run while true; running BackupJobs and retention go on."
    )
    successful_jobs_history_limit: Annotated[Int32 | None, CRDHint(default=3)] = opt(
        "Completed BackupJobs kept (their Backups are kept by retention, not by this); 3 by default.", ge=0
    )
    failed_jobs_history_limit: Annotated[Int32 | None, CRDHint(default=1)] = opt(
        "Failed BackupJobs kept for troubleshooting; 1 by default.", ge=0
    )
    retention: BackupRetention | None = opt("Which Backups of the schedule are kept; all if unset.")
    template: BackupJobSpec = req("The spec of each BackupJob the schedule creates.")


class BackupScheduleStatus(ConditionalStatus):
    """Observed state of a BackupSchedule."""

    last_schedule_time: DateTime | None = opt("The scheduled time of the last run started.")
    last_successful_time: DateTime | None = opt("When the last BackupJob of the schedule completed.")
    next_schedule_time: DateTime | None = opt("The next scheduled run; unset while suspended.")
    active: list[str] | None = opt("BackupJobs of the schedule that have not ended.")


class BackupSchedule(Resource):
    """A BackupSchedule creates BackupJobs on a cron schedule and deletes the Backups its
    retention no longer keeps, data first (as a CronJob creates Jobs)."""

    spec: BackupScheduleSpec = req("Desired state of the schedule.")
    status: BackupScheduleStatus | None = opt("Observed state of the schedule.")
