"""The decisions of a BackupSchedule, with the clock as an argument: which run is due
(as a CronJob decides it), which ended BackupJobs go, which Backups expire."""

from __future__ import annotations

import datetime

from mo_operator.api.cron import Schedule
from mo_operator.controllers.backup.schedule_decisions import (
    MAX_MISSED_COUNTED,
    BackupRef,
    Retention,
    RunRef,
    ScheduleSpec,
    decide_history,
    decide_retention,
    decide_run,
    deletion_job_name,
    run_name,
)

HOUR = 3600.0
DAY = 24 * HOUR
T0 = datetime.datetime(2026, 3, 1, tzinfo=datetime.UTC).timestamp()
"""Midnight UTC, a scheduled time of a nightly schedule at 00:00."""
EVERY_MINUTE = ScheduleSpec(Schedule("* * * * *"))
NIGHTLY = ScheduleSpec(Schedule("0 0 * * *"))


def _decide(spec: ScheduleSpec, now: float, **kwargs: object):  # type: ignore[no-untyped-def]
    args: dict[str, object] = {
        "name": "nightly",
        "created": T0 - 10 * DAY,
        "last_schedule": None,
        "last_successful": None,
        "runs": (),
        "taken": (),
    }
    args.update(kwargs)
    return decide_run(spec, now=now, **args)  # type: ignore[arg-type]


def test_a_run_is_named_after_its_scheduled_minute_so_a_restarted_operator_finds_it() -> None:
    assert run_name("nightly", T0) == f"nightly-{int(T0 // 60)}"
    assert run_name("nightly", T0 + 59) == run_name("nightly", T0)
    assert deletion_job_name(run_name("nightly", T0)) == f"nightly-{int(T0 // 60)}-rm"


def test_nothing_is_due_before_the_first_scheduled_time_after_creation() -> None:
    decision = _decide(NIGHTLY, T0 + HOUR, created=T0 + 60)
    assert decision.start is None and decision.last_schedule is None
    assert decision.next_run == T0 + DAY


def test_the_run_due_starts_and_becomes_the_last_schedule_time() -> None:
    decision = _decide(NIGHTLY, T0 + 5, last_schedule=T0 - DAY)
    assert decision.start == T0 and decision.last_schedule == T0
    assert decision.active == (run_name("nightly", T0),)
    assert decision.next_run == T0 + DAY and decision.missed == 0


def test_a_run_already_started_is_not_started_again() -> None:
    decision = _decide(NIGHTLY, T0 + 5, last_schedule=T0)
    assert decision.start is None and decision.last_schedule == T0


def test_a_run_whose_status_write_was_lost_is_found_by_its_name_not_created_twice() -> None:
    run = RunRef(run_name("nightly", T0), T0, "Running")
    decision = _decide(NIGHTLY, T0 + 5, last_schedule=T0 - DAY, runs=(run,))
    assert decision.start is None and decision.last_schedule == T0


def test_a_name_held_by_a_backupjob_of_someone_else_is_reported_not_overwritten() -> None:
    decision = _decide(NIGHTLY, T0 + 5, last_schedule=T0 - DAY, taken=(run_name("nightly", T0),))
    assert decision.start is None
    assert decision.skipped is not None and "was not made by this schedule" in decision.skipped


def test_after_a_long_outage_only_the_most_recent_missed_run_starts() -> None:
    decision = _decide(NIGHTLY, T0 + 3 * DAY + HOUR, last_schedule=T0)
    assert decision.start == T0 + 3 * DAY
    assert decision.missed == 2


def test_missed_runs_are_counted_up_to_a_bound() -> None:
    decision = _decide(EVERY_MINUTE, T0 + 365 * DAY, last_schedule=T0)
    assert decision.start == T0 + 365 * DAY and decision.missed == MAX_MISSED_COUNTED


def test_a_run_later_than_its_starting_deadline_is_skipped() -> None:
    spec = ScheduleSpec(Schedule("0 0 * * *"), starting_deadline=600)
    late = _decide(spec, T0 + 601, last_schedule=T0 - DAY)
    assert late.start is None and late.last_schedule == T0 - DAY
    in_time = _decide(spec, T0 + 599, last_schedule=T0 - DAY)
    assert in_time.start == T0


def test_forbid_skips_a_due_run_while_one_is_active_and_starts_it_once_that_ended() -> None:
    spec = ScheduleSpec(Schedule("0 0 * * *"), concurrency="Forbid")
    running = RunRef(run_name("nightly", T0 - DAY), T0 - DAY, "Running")
    skipped = _decide(spec, T0 + 5, last_schedule=T0 - DAY, runs=(running,))
    assert skipped.start is None and skipped.skipped is not None
    assert "still runs (concurrencyPolicy Forbid)" in skipped.skipped
    assert skipped.last_schedule == T0 - DAY
    ended = RunRef(running.name, running.scheduled, "Completed", ended_at=T0 + 30)
    later = _decide(spec, T0 + 60, last_schedule=T0 - DAY, runs=(ended,))
    assert later.start == T0 and later.last_successful == T0 + 30


def test_replace_deletes_the_active_run_and_allow_runs_both() -> None:
    running = RunRef(run_name("nightly", T0 - DAY), T0 - DAY, "Running")
    replaced = _decide(
        ScheduleSpec(Schedule("0 0 * * *"), concurrency="Replace"),
        T0 + 5,
        last_schedule=T0 - DAY,
        runs=(running,),
    )
    assert replaced.start == T0 and replaced.replace == (running.name,)
    assert replaced.active == (run_name("nightly", T0),)
    allowed = _decide(
        ScheduleSpec(Schedule("0 0 * * *"), concurrency="Allow"),
        T0 + 5,
        last_schedule=T0 - DAY,
        runs=(running,),
    )
    assert allowed.start == T0 and allowed.replace == ()
    assert allowed.active == tuple(sorted((running.name, run_name("nightly", T0))))


def test_a_suspended_schedule_starts_nothing_and_has_no_next_run() -> None:
    spec = ScheduleSpec(Schedule("0 0 * * *"), suspend=True)
    decision = _decide(spec, T0 + 5, last_schedule=T0 - DAY)
    assert decision.start is None and decision.next_run is None


def test_the_schedule_is_read_in_its_time_zone() -> None:
    paris = ScheduleSpec(Schedule("0 3 * * *", "Europe/Paris"))
    decision = _decide(paris, T0, last_schedule=T0 - DAY)
    assert decision.next_run == T0 + 2 * HOUR  # 03:00 in Paris is 02:00 UTC in March


def test_the_last_successful_time_never_goes_back() -> None:
    done = RunRef("nightly-1", T0 - DAY, "Completed", ended_at=T0 - DAY + 60)
    decision = _decide(NIGHTLY, T0 - 5, last_schedule=T0 - DAY, last_successful=T0 - 10, runs=(done,))
    assert decision.last_successful == T0 - 10


def test_history_keeps_the_newest_ended_jobs_within_their_limits() -> None:
    spec = ScheduleSpec(Schedule("0 0 * * *"), successful_history=2, failed_history=1)
    runs = [RunRef(f"ok-{i}", T0 + i * DAY, "Completed") for i in range(4)]
    runs += [RunRef(f"bad-{i}", T0 + i * DAY, "Failed") for i in range(2)]
    runs.append(RunRef("running", T0 + 9 * DAY, "Running"))
    assert decide_history(spec, runs) == ("ok-0", "ok-1", "bad-0")


def _backups(n: int) -> list[BackupRef]:
    return [BackupRef(f"b{i}", T0 + i * DAY) for i in range(n)]


def test_retention_by_count_deletes_the_oldest() -> None:
    plan = decide_retention(Retention(count=2), _backups(4), (), T0 + 4 * DAY)
    assert sorted(plan.expired) == ["b0", "b1"] and plan.kept == 2


def test_retention_by_age_deletes_the_old_but_always_keeps_the_newest() -> None:
    plan = decide_retention(Retention(max_age=2.5 * DAY), _backups(4), (), T0 + 4 * DAY)
    assert sorted(plan.expired) == ["b0", "b1"]
    stale = decide_retention(Retention(max_age=HOUR), _backups(3), (), T0 + 30 * DAY)
    assert sorted(stale.expired) == ["b0", "b1"] and stale.kept == 1


def test_a_backup_a_restore_uses_is_held_not_deleted() -> None:
    plan = decide_retention(Retention(count=1), _backups(3), {"b0"}, T0 + 3 * DAY)
    assert plan.expired == ("b1",) and plan.held == ("b0",)


def test_without_retention_every_backup_is_kept() -> None:
    plan = decide_retention(Retention(), _backups(5), (), T0 + 100 * DAY)
    assert plan.expired == () and plan.kept == 5
