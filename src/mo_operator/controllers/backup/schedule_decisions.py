"""What a BackupSchedule does now, decided from what it sees and the time: pure, so every
case is a unit test with an injected clock.

**Runs**, as kube-controller-manager's CronJob controller (v2, ``syncCronJob`` and
``mostRecentScheduleTime``) runs Jobs: the earliest time a run may be for is the last
scheduled time (``status.lastScheduleTime``), else the schedule's creation, moved up to
``now - startingDeadlineSeconds`` when a deadline is set; of the scheduled times between
that and now only the most recent starts (at most one catch-up run, never a pile-up),
the others are reported as missed. A run's BackupJob is named ``<schedule>-<scheduled
time in minutes since the epoch>`` (CronJob's ``getJobName``), so a run already created
by an operator killed before it wrote ``lastScheduleTime`` is found, not created twice.
``concurrencyPolicy`` Forbid skips a due run while a BackupJob of the schedule is still
active (the run starts when it ends, if still within its deadline), Replace deletes the
active ones first, Allow runs them side by side.

**History**: ended BackupJobs beyond ``successfulJobsHistoryLimit`` and
``failedJobsHistoryLimit`` go, oldest first (their Backups stay: retention decides those).

**Retention**: the schedule's Backups, newest first (by ``meta.atTime``), beyond
``retention.count`` or started before ``now - retention.maxAge`` expire, but never the
newest one (a schedule whose runs all fail keeps its last good backup), and never one
that a RestoreJob that has not ended names (it is held until the restore ends).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Final, Literal

from mo_operator.api.cron import Schedule

__all__ = [
    "BackupRef",
    "Retention",
    "RetentionPlan",
    "RunDecision",
    "RunRef",
    "ScheduleSpec",
    "decide_history",
    "decide_retention",
    "decide_run",
    "deletion_job_name",
    "run_name",
]

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
MAX_MISSED_COUNTED: Final = 100
"""Missed runs are counted up to this many (CronJob's ``tooManyMissed``), so a schedule
of every minute left alone for a year costs no more than one of every day."""


def run_name(schedule: str, scheduled: float) -> str:
    """The BackupJob of the run scheduled at ``scheduled``: ``<schedule>-<minutes>``."""
    return f"{schedule}-{int(scheduled // 60)}"


def deletion_job_name(backup_job: str) -> str:
    """The Job that deletes the data of the Backup a run's BackupJob recorded."""
    return f"{backup_job}-rm"


@dataclass(frozen=True)
class ScheduleSpec:
    """A BackupSchedule's spec as the decisions read it (defaults applied)."""

    schedule: Schedule
    suspend: bool = False
    concurrency: ConcurrencyPolicy = "Forbid"
    starting_deadline: float | None = None
    successful_history: int = 3
    failed_history: int = 1


@dataclass(frozen=True)
class RunRef:
    """A BackupJob the schedule owns."""

    name: str
    scheduled: float
    """The run's scheduled time (its annotation, else its creation)."""
    phase: str
    """Pending, Running, Completed or Failed."""
    ended_at: float | None = None
    deleting: bool = False

    @property
    def ended(self) -> bool:
        return self.phase in ("Completed", "Failed")


@dataclass(frozen=True)
class RunDecision:
    """Whether a run starts now, and what the status says of the schedule."""

    start: float | None = None
    """Scheduled time of the run to create now."""
    replace: tuple[str, ...] = ()
    """Active BackupJobs to delete first (Replace)."""
    skipped: str | None = None
    """Why a due run does not start, for the condition and an Event."""
    missed: int = 0
    """Scheduled times passed over (at most ``MAX_MISSED_COUNTED``), the started one excluded."""
    last_schedule: float | None = None
    next_run: float | None = None
    active: tuple[str, ...] = ()
    last_successful: float | None = None


def _missed(schedule: Schedule, earliest: float, latest: float) -> int:
    """Scheduled times after ``earliest`` and before ``latest``."""
    count, when = 0, schedule.next_after(earliest)
    while when < latest and count < MAX_MISSED_COUNTED:
        count += 1
        when = schedule.next_after(when)
    return count


def decide_run(
    spec: ScheduleSpec,
    *,
    name: str,
    created: float,
    last_schedule: float | None,
    last_successful: float | None,
    runs: Sequence[RunRef],
    taken: Collection[str],
    now: float,
) -> RunDecision:
    """The run of schedule ``name`` due at ``now``, if any, and the schedule's status fields.

    ``runs`` are the BackupJobs the schedule owns; ``taken`` the names of the other
    BackupJobs of its namespace (a run's name held by one of those is reported, never
    overwritten)."""
    active = tuple(sorted(r.name for r in runs if not r.ended and not r.deleting))
    succeeded = [r.ended_at for r in runs if r.phase == "Completed" and r.ended_at is not None]
    if last_successful is not None:
        succeeded.append(last_successful)
    status = RunDecision(
        last_schedule=last_schedule, active=active, last_successful=max(succeeded, default=None)
    )
    if spec.suspend:
        return status
    status = replace(status, next_run=spec.schedule.next_after(now))
    earliest = last_schedule if last_schedule is not None else created
    if spec.starting_deadline is not None:
        earliest = max(earliest, now - spec.starting_deadline)
    due = spec.schedule.latest_at_or_before(now)
    if due <= earliest:
        return status
    missed = _missed(spec.schedule, earliest, due)
    job = run_name(name, due)
    if job in {r.name for r in runs}:
        # created by an earlier reconcile whose status write was lost
        return replace(status, last_schedule=due, missed=missed)
    if job in taken:
        return replace(
            status, skipped=f"BackupJob {job} exists and was not made by this schedule", missed=missed
        )
    if active and spec.concurrency == "Forbid":
        running = ", ".join(active)
        return replace(
            status, skipped=f"BackupJob {running} still runs (concurrencyPolicy Forbid)", missed=missed
        )
    replaced = active if spec.concurrency == "Replace" else ()
    return replace(
        status,
        start=due,
        replace=replaced,
        missed=missed,
        last_schedule=due,
        active=tuple(sorted({*(a for a in active if a not in replaced), job})),
    )


def decide_history(spec: ScheduleSpec, runs: Sequence[RunRef]) -> tuple[str, ...]:
    """Ended BackupJobs beyond the history limits, oldest first."""
    out: list[str] = []
    for phase, limit in (("Completed", spec.successful_history), ("Failed", spec.failed_history)):
        ended = sorted(
            (r for r in runs if r.phase == phase and not r.deleting), key=lambda r: (r.scheduled, r.name)
        )
        out += [r.name for r in ended[: max(0, len(ended) - limit)]]
    return tuple(out)


@dataclass(frozen=True)
class Retention:
    """``spec.retention``: how many Backups and how old; None keeps any."""

    count: int | None = None
    max_age: float | None = None


@dataclass(frozen=True)
class BackupRef:
    """A Backup of the schedule."""

    name: str
    at: float
    """When it started (``meta.atTime``)."""


@dataclass(frozen=True)
class RetentionPlan:
    """Backups to delete now, and those that would go but a restore uses."""

    expired: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    kept: int = 0


def decide_retention(
    retention: Retention, backups: Sequence[BackupRef], in_use: Collection[str], now: float
) -> RetentionPlan:
    """Which of ``backups`` expire at ``now``; ``in_use`` are names that unfinished restores use."""
    newest_first = sorted(backups, key=lambda b: (b.at, b.name), reverse=True)
    expired: list[str] = []
    held: list[str] = []
    for index, backup in enumerate(newest_first):
        if index == 0:
            continue
        too_many = retention.count is not None and index >= retention.count
        too_old = retention.max_age is not None and backup.at < now - retention.max_age
        if not (too_many or too_old):
            continue
        (held if backup.name in in_use else expired).append(backup.name)
    return RetentionPlan(tuple(expired), tuple(held), len(newest_first) - len(expired) - len(held))
