"""docs/troubleshooting.md's catalogue of condition and Event reasons is what
tools/gen_reasons.py harvests from the code today."""

from __future__ import annotations

from types import ModuleType

from controllers.test_backup_job_decide import BACKUP_CASES, RESTORE_CASES, decide_backup, decide_restore

from .tools import load_tool


def _tool() -> ModuleType:
    return load_tool("gen_reasons")


def test_the_catalogue_in_the_troubleshooting_guide_is_current() -> None:
    tool = _tool()
    text = tool.DOC.read_text()
    assert tool.updated(text) == text, "the reason catalogue is stale: run python tools/gen_reasons.py"


def test_the_harvest_finds_reasons_of_every_kind_of_site() -> None:
    reasons = _tool().Harvest().run()
    assert reasons["RolloutStalled"].conditions >= {"Ready", "UpToDate"}  # set_condition
    assert reasons["NotStarted"].conditions == {"UpToDate"}  # a (reason, message) pair spread
    assert "Warning" in reasons["DrainTimeout"].events  # ctx.event
    assert reasons["LogServiceNotReady"].conditions == {"Ready"}  # a *_REASONS table
    assert "Synced" in reasons["InvalidSpec"].conditions  # TerminalError
    assert reasons["AllStoresReady"].conditions == {"Ready"}  # Readiness(all_ready=...)
    assert reasons["BackupNameTaken"].conditions == {"Ended"}  # a helper's reason parameter
    assert "Warning" in reasons["BackupNameTaken"].events  # ... which the helper announces
    assert reasons["Unsupported"].conditions == {"Ended"}  # a field of a class in CARRIED


BACKUP_JOB_REASONS = {
    "WaitingForSource": "Pending",
    "JobConflict": "Pending",
    "BackupNotFound": "Warning",
    "JobRunning": "Running",
    "JobComplete": "Completed",
    "BackupFailed": "Warning",
    "RestoreFailed": "Warning",
    "JobMissing": "Warning",
    "InvalidSpec": "Warning",
    "InvalidMetadata": "Warning",
    "BackupNameTaken": "Warning",
    "InvalidBackup": "Warning",
    "Unsupported": "Warning",
}
"""Every reason of the ``Ended`` condition a BackupJob or RestoreJob gives, with how it
is told: Pending or Running (no Event of its own), Completed, or a failure (a Warning)."""


def test_the_catalogue_has_every_reason_the_backup_jobs_give() -> None:
    reasons = _tool().Harvest().run()
    missing = sorted(
        r for r in BACKUP_JOB_REASONS if r not in reasons or "Ended" not in reasons[r].conditions
    )
    assert not missing, f"not catalogued as reasons of Ended: {missing}"
    unwarned = [
        r for r, how in BACKUP_JOB_REASONS.items() if how == "Warning" and "Warning" not in reasons[r].events
    ]
    assert not unwarned, f"failures catalogued without their Warning Event: {unwarned}"


def test_every_reason_the_job_decisions_give_is_in_the_catalogue_and_its_list_here() -> None:
    """What the decisions of the job tables actually give (conditions and Events), so a
    reason added to a job and its table but neither to the harvest nor to the list above
    fails here."""
    given: set[str] = set()
    for decision in (
        *(decide_backup(c) for c in BACKUP_CASES.values()),
        *(decide_restore(c) for c in RESTORE_CASES.values()),
    ):
        given.update(c.reason for c in decision.conditions)
        given.update(e.reason for e in decision.events if e.type == "Warning")
    assert given - set(_tool().Harvest().run()) == set()
    assert given - set(BACKUP_JOB_REASONS) == set()
