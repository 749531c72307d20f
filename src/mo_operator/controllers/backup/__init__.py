"""Backup and restore: the BackupJob, RestoreJob and BackupSchedule controllers (``jobs`` holds what they share), and BackupSchedules."""

from .backupjob import BackupJobActor
from .backupschedule import BackupScheduleActor, schedules_of_backup, schedules_of_restore
from .restorejob import RestoreJobActor

__all__ = [
    "BackupJobActor",
    "BackupScheduleActor",
    "RestoreJobActor",
    "schedules_of_backup",
    "schedules_of_restore",
]
