"""Backup and restore: the BackupJob and RestoreJob controllers (``jobs`` holds what they share)."""

from .backupjob import BackupJobActor
from .restorejob import RestoreJobActor

__all__ = ["BackupJobActor", "RestoreJobActor"]
