"""A BackupSchedule's ``decide``: the run due, the history, the status and retention,
as data (intents, status, conditions, Events, when to look again), with no client
and no event loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from mo_operator.api.backupschedule import BackupSchedule, BackupScheduleStatus
from mo_operator.controllers.backup.backupschedule import ScheduleView, decide
from mo_operator.controllers.backup.jobs import Outcome
from mo_operator.controllers.backup.schedule_decisions import run_name
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Emit, SetCondition
from mo_operator.controllers.framework.writes import Create, Delete
from mo_operator.kube.controller.outcome import Requeue
from mo_operator.kube.meta.frozen import freeze

from .backup_fakes import NOW
from .test_backup_schedule_actor import MINUTE, run_of, schedule, scheduled_backup

Obj = dict[str, Any]
DUE = 1_699_999_800.0
"""The last */5 time before NOW (22:10:00)."""


@dataclass
class Case:
    spec: dict[str, Any] = field(default_factory=dict)
    jobs: list[Obj] = field(default_factory=list)
    backups: list[Obj] = field(default_factory=list)
    deletions: dict[str, Outcome] = field(default_factory=dict)
    last_schedule: float | None = None
    creates: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    conditions: dict[str, tuple[bool, str]] = field(default_factory=dict)
    later: bool = True
    """Whether it looks again for the next run."""


CASES = {
    "the run due starts as a BackupJob": Case(
        last_schedule=DUE - 5 * MINUTE,
        creates=[run_name("nightly", DUE)],
        events=["RunStarted"],
        conditions={"Scheduled": (True, "Scheduled")},
    ),
    "a suspended schedule starts nothing, nor looks again for a run": Case(
        spec={"suspend": True}, conditions={"Scheduled": (False, "Suspended")}, later=False
    ),
    "a run missed since the last is started late, once": Case(
        creates=[run_name("nightly", DUE)],
        events=["RunStarted"],
        conditions={"Scheduled": (True, "Scheduled")},
    ),
    "a run already started for its time is not started twice": Case(
        jobs=[run_of(DUE, "Running")], last_schedule=DUE, conditions={"Scheduled": (True, "Scheduled")}
    ),
    "Forbid skips the run due while the last one runs": Case(
        jobs=[run_of(DUE - 5 * MINUTE, "Running")],
        last_schedule=DUE - 5 * MINUTE,
        conditions={"Scheduled": (False, "RunSkipped")},
    ),
    "Replace deletes the running one and starts the new run": Case(
        spec={"concurrencyPolicy": "Replace"},
        jobs=[run_of(DUE - 5 * MINUTE, "Running", uid="uid-old")],
        last_schedule=DUE - 5 * MINUTE,
        creates=[run_name("nightly", DUE)],
        deletes=[run_name("nightly", DUE - 5 * MINUTE)],
        events=["RunStarted"],
        conditions={"Scheduled": (True, "Scheduled")},
    ),
    "a failed last run says why": Case(
        jobs=[run_of(DUE, "Failed")],
        last_schedule=DUE,
        conditions={"Scheduled": (True, "Scheduled"), "LastRunSucceeded": (False, "BackupFailed")},
    ),
    "an expired Backup's data is deleted by a Job first": Case(
        spec={"retention": {"count": 1}},
        backups=[
            scheduled_backup("old", NOW - 3600, "nightly-1"),
            scheduled_backup("new", NOW - 60, "nightly-2"),
        ],
        last_schedule=DUE,
        jobs=[run_of(DUE, "Completed")],
        creates=["nightly-1-rm"],
        events=["DeletingBackup"],
        conditions={
            "Scheduled": (True, "Scheduled"),
            "LastRunSucceeded": (True, "BackupCompleted"),
            "RetentionApplied": (True, "Applied"),
        },
    ),
    "then the Backup object, once its Job succeeded": Case(
        spec={"retention": {"count": 1}},
        backups=[
            scheduled_backup("old", NOW - 3600, "nightly-1"),
            scheduled_backup("new", NOW - 60, "nightly-2"),
        ],
        deletions={"nightly-1-rm": Outcome("succeeded", "")},
        last_schedule=DUE,
        jobs=[run_of(DUE, "Completed")],
        deletes=["old"],
        events=["BackupDeleted"],
        conditions={
            "Scheduled": (True, "Scheduled"),
            "LastRunSucceeded": (True, "BackupCompleted"),
            "RetentionApplied": (True, "Applied"),
        },
    ),
    "a failed deletion is reported, the Backup kept": Case(
        spec={"retention": {"count": 1}},
        backups=[
            scheduled_backup("old", NOW - 3600, "nightly-1"),
            scheduled_backup("new", NOW - 60, "nightly-2"),
        ],
        deletions={"nightly-1-rm": Outcome("failed", "no such backup data")},
        last_schedule=DUE,
        jobs=[run_of(DUE, "Completed")],
        conditions={
            "Scheduled": (True, "Scheduled"),
            "LastRunSucceeded": (True, "BackupCompleted"),
            "RetentionApplied": (False, "DeletionFailed"),
        },
    ),
}


def view(case: Case) -> ScheduleView:
    obj = freeze(schedule(**case.spec))
    deletions = {name: freeze({"metadata": {"name": name, "uid": f"uid-{name}"}}) for name in case.deletions}
    return ScheduleView(
        schedule=obj,
        spec=admit(BackupSchedule, obj).spec,
        now=NOW,
        last_schedule=case.last_schedule,
        last_successful=None,
        jobs=tuple(freeze(j) for j in case.jobs),
        taken=frozenset(),
        backups=tuple(freeze(b) for b in case.backups),
        deletions=deletions,
        deletion_outcomes=case.deletions,
        in_use=frozenset(),
        backup_image="mobr:1",
    )


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    decision = decide(view(case))
    creates = [i.obj["metadata"]["name"] for i in decision.intents if isinstance(i, Create)]
    deletes = [i.name for i in decision.intents if isinstance(i, Delete)]
    assert (creates, deletes) == (case.creates, case.deletes)
    assert all(i.uid for i in decision.intents if isinstance(i, Delete)), "deletes are conditional"
    assert [e.reason for e in decision.events] == case.events
    assert {c.type: (c.status, c.reason) for c in decision.conditions} == case.conditions
    if case.later:
        assert isinstance(decision.later, Requeue) and decision.later.reason == "the next scheduled run"
    else:
        assert decision.later is None


def test_the_run_started_names_its_time_and_the_status_the_next() -> None:
    decision = decide(view(CASES["the run due starts as a BackupJob"]))
    (job,) = [i for i in decision.intents if isinstance(i, Create)]
    assert job.obj["spec"]["source"] == {"clusterRef": "mo"}
    assert decision.events == (
        Emit(
            "Normal",
            "RunStarted",
            f"created BackupJob {run_name('nightly', DUE)} for the run at 2023-11-14T22:10:00Z",
        ),
    )
    assert decision.status == BackupScheduleStatus(
        last_schedule_time="2023-11-14T22:10:00Z",
        last_successful_time=None,
        next_schedule_time="2023-11-14T22:15:00Z",
        active=[run_name("nightly", DUE)],
    ), "the run just started is active"
    assert decision.later == Requeue(DUE + 5 * MINUTE - NOW, "the next scheduled run")
    assert (
        SetCondition("Scheduled", True, "Scheduled", "next run at 2023-11-14T22:15:00Z")
        in decision.conditions
    )
