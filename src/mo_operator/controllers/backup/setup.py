"""The wiring of the BackupJob, RestoreJob and BackupSchedule controllers, and the
trouble each warns of."""

from __future__ import annotations

from ..framework import resources as r
from ..mappers import set_of_pod
from ..wiring import Wiring
from .backupjob import BackupJobActor
from .backupschedule import BackupScheduleActor, schedules_of_backup, schedules_of_restore
from .jobs import FAILED
from .restorejob import RestoreJobActor

JOB_WARNING_REASONS = frozenset({"InvalidSpec", "JobConflict", "JobMissing", FAILED})
"""What a job kind warns of besides its own failure: a spec refused, a Job that is not
ours or went missing, a failed run."""
BACKUP_JOB_WARNING_REASONS = JOB_WARNING_REASONS | {BackupJobActor.failed_reason}
RESTORE_JOB_WARNING_REASONS = JOB_WARNING_REASONS | {RestoreJobActor.failed_reason}
SCHEDULE_WARNING_REASONS = JOB_WARNING_REASONS | {"BackupFailed", "DeletionFailed", "RunSkipped"}
"""A run that failed or was skipped, an expired Backup that could not be deleted."""


def setup(wiring: Wiring) -> None:
    """BackupJobs and RestoreJobs, each running one Job (woken by its pods), and
    BackupSchedules, which make BackupJobs and are woken by the Backups those leave and
    by restores that hold them back."""
    env, caches = wiring.env, wiring.caches
    for name, res, job_actor, job_reads, warnings in (
        (
            "backupjob",
            r.BACKUPJOBS,
            BackupJobActor(env),
            (r.BACKUPS, r.CNSETS, r.MATRIXONE_CLUSTERS),
            BACKUP_JOB_WARNING_REASONS,
        ),
        ("restorejob", r.RESTOREJOBS, RestoreJobActor(env), (r.BACKUPS,), RESTORE_JOB_WARNING_REASONS),
    ):
        jobs = wiring.actor_controller(
            name, res, job_actor, (r.JOBS,), reads=job_reads, warning_reasons=warnings
        )
        wiring.watch(jobs, r.PODS, set_of_pod(res.kind))
    # no finalizer: what a schedule makes is owned by it, and its Backups outlive it
    schedules = wiring.actor_controller(
        "backupschedule",
        r.BACKUPSCHEDULES,
        BackupScheduleActor(env),
        (r.BACKUPJOBS, r.JOBS),
        reads=(r.BACKUPS, r.RESTOREJOBS, r.MATRIXONE_CLUSTERS),
        adds_finalizer=False,
        warning_reasons=SCHEDULE_WARNING_REASONS,
    )
    wiring.watch(schedules, r.PODS, set_of_pod(r.BACKUPSCHEDULES.kind))
    wiring.watch(schedules, r.BACKUPS, schedules_of_backup)
    wiring.watch(schedules, r.RESTOREJOBS, schedules_of_restore(caches))
    wiring.watch(schedules, r.MATRIXONE_CLUSTERS, schedules_of_restore(caches))
