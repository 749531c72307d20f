"""The BackupSchedule controller on hand-built snapshots: the BackupJob of a run due,
nothing written when nothing is due, and the deletion of an expired Backup's data
before its object."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.api.kinds import API_VERSION
from mo_operator.controllers.backup import BackupScheduleActor
from mo_operator.controllers.backup.backupschedule import backups_in_use
from mo_operator.controllers.backup.schedule_decisions import run_name
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.matrixone import labels

from .backup_fakes import NOW, S3_TARGET, backup_object, ended, env, meta, restorejob, terminated
from .controller_fakes import FakeCaches, context, events

Obj = dict[str, Any]
MINUTE = 60.0


def schedule(status: Obj | None = None, **spec: Any) -> Obj:
    body = {
        "schedule": "*/5 * * * *",
        "template": {"source": {"clusterRef": "mo"}, "target": copy.deepcopy(S3_TARGET)},
        **spec,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "BackupSchedule",
        "metadata": meta("nightly", creationTimestamp="2023-11-14T21:00:00Z"),
        "spec": body,
        "status": status or {},
    }


def run_of(scheduled: float, phase: str, uid: str = "uid-run") -> Obj:
    name = run_name("nightly", scheduled)
    status: Obj = {"phase": phase}
    if phase in ("Completed", "Failed"):
        status["conditions"] = [
            ended("True", "JobComplete" if phase == "Completed" else "BackupFailed", NOW - 30)
        ]
    return {
        "apiVersion": API_VERSION,
        "kind": "BackupJob",
        "metadata": {
            **meta(name, uid=uid),
            "labels": {labels.BACKUP_SCHEDULE: "nightly"},
            "annotations": {labels.SCHEDULED_AT: format_time(scheduled)},
            "ownerReferences": [
                {"kind": "BackupSchedule", "name": "nightly", "uid": "uid-nightly", "controller": True}
            ],
        },
        "spec": {},
        "status": status,
    }


def scheduled_backup(name: str, at: float, job: str) -> Obj:
    obj = backup_object(name, backup_id=f"{name}-id")
    obj["metadata"]["labels"] = {
        labels.BACKUP_SCHEDULE: "nightly",
        labels.NAMESPACE: "ns",
        labels.INSTANCE: job,
    }
    obj["meta"]["atTime"] = format_time(at)
    return obj


async def observe(obj: Obj, *objs: Obj, now: float = NOW) -> tuple[Any, Any, Any]:
    caches = FakeCaches(obj, *objs)
    e, client = env(caches, now)
    ctx = context(caches.objs[0])
    plan = await BackupScheduleActor(e).observe(ctx)
    if plan:
        await plan(ctx)
    return ctx, plan, client


def cond(ctx: Any, ctype: str) -> Obj:
    found = get_condition(ctx.status.get("conditions") or (), ctype)
    assert found is not None, ctx.status
    return dict(found)


DUE = NOW - NOW % (5 * MINUTE)
"""The scheduled time at or before NOW of a schedule every five minutes."""


async def test_a_due_run_creates_its_backupjob_owned_labelled_and_named_after_its_time() -> None:
    ctx, plan, client = await observe(schedule({"lastScheduleTime": format_time(DUE - 5 * MINUTE)}))
    assert plan
    ((verb, kind, job),) = client.calls
    assert (verb, kind) == ("create", "BackupJob")
    assert job["metadata"]["name"] == run_name("nightly", DUE)
    assert job["metadata"]["labels"][labels.BACKUP_SCHEDULE] == "nightly"
    assert job["metadata"]["annotations"][labels.SCHEDULED_AT] == format_time(DUE)
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-nightly"
    assert job["spec"]["source"] == {"clusterRef": "mo"}
    assert ctx.status["lastScheduleTime"] == format_time(DUE)
    assert ctx.status["nextScheduleTime"] == format_time(DUE + 5 * MINUTE)
    assert ctx.status["active"] == [run_name("nightly", DUE)]
    assert ctx.requeue_after == DUE + 5 * MINUTE - NOW
    assert any(e[1] == "RunStarted" for e in events(ctx))


async def test_nothing_due_writes_nothing_and_requeues_at_the_next_run() -> None:
    status = {
        "lastScheduleTime": format_time(DUE),
        "nextScheduleTime": format_time(DUE + 5 * MINUTE),
    }
    ctx, plan, client = await observe(schedule(status), run_of(DUE, "Running"))
    assert plan is None and client.calls == []
    assert ctx.requeue_after == DUE + 5 * MINUTE - NOW
    assert cond(ctx, "Scheduled")["status"] == "True"


async def test_a_failed_run_says_so_in_a_condition_with_the_jobs_message() -> None:
    failed = run_of(DUE, "Failed")
    failed["status"]["conditions"][0]["message"] = "mo_br exited with code 1"
    ctx, _, _ = await observe(schedule({"lastScheduleTime": format_time(DUE)}), failed)
    found = cond(ctx, "LastRunSucceeded")
    assert found["status"] == "False" and found["reason"] == "BackupFailed"
    assert "mo_br exited with code 1" in found["message"]


async def test_suspended_starts_nothing_and_says_so() -> None:
    ctx, _plan, client = await observe(
        schedule({"lastScheduleTime": format_time(DUE - 5 * MINUTE)}, suspend=True)
    )
    assert client.calls == [] and "nextScheduleTime" not in ctx.status
    assert cond(ctx, "Scheduled")["reason"] == "Suspended"


def deletion_job(job: str, state: Obj | None) -> list[Obj]:
    name = f"{job}-rm"
    owner = [{"kind": "BackupSchedule", "name": "nightly", "uid": "uid-nightly", "controller": True}]
    selector = {labels.COMPONENT: "BackupSchedule", labels.INSTANCE: "nightly"}
    out: list[Obj] = [
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {**meta(name, uid="uid-rm"), "labels": selector, "ownerReferences": owner},
            "spec": {},
            "status": {},
        }
    ]
    if state is not None:
        pod_owner = [{"kind": "Job", "name": name, "uid": "uid-rm", "controller": True}]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {**meta(f"{name}-abcde"), "labels": selector, "ownerReferences": pod_owner},
                "spec": {},
                "status": {"phase": "Succeeded", "containerStatuses": [{"name": "br", "state": state}]},
            }
        )
    return out


RETAIN_ONE = {"retention": {"count": 1}}
STATUS = {"lastScheduleTime": format_time(DUE), "nextScheduleTime": format_time(DUE + 5 * MINUTE)}


async def test_an_expired_backups_data_is_deleted_by_the_tool_first() -> None:
    old = scheduled_backup("old", NOW - 3600, "nightly-1")
    new = scheduled_backup("new", NOW - 60, "nightly-2")
    _ctx, _, client = await observe(schedule(STATUS, **RETAIN_ONE), old, new)
    ((verb, kind, job),) = client.calls
    assert (verb, kind, job["metadata"]["name"]) == ("create", "Job", "nightly-1-rm")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert "/mo_br delete old-id" in container["command"][2]
    assert {"name": "RAW_META", "value": old["meta"]["raw"]} in container["env"]


async def test_once_its_data_is_deleted_the_backup_object_goes_then_the_job() -> None:
    old = scheduled_backup("old", NOW - 3600, "nightly-1")
    new = scheduled_backup("new", NOW - 60, "nightly-2")
    _, _, client = await observe(
        schedule(STATUS, **RETAIN_ONE), old, new, *deletion_job("nightly-1", terminated(0))
    )
    assert [(v, k, c["name"]) for v, k, c in client.calls] == [("delete", "Backup", "old")]
    assert client.calls[0][2]["uid"] == "uid-old"
    _, _, client = await observe(
        schedule(STATUS, **RETAIN_ONE), new, *deletion_job("nightly-1", terminated(0))
    )
    assert [(v, k, c["name"]) for v, k, c in client.calls] == [("delete", "Job", "nightly-1-rm")]


async def test_a_failed_deletion_keeps_the_backup_and_says_why() -> None:
    old = scheduled_backup("old", NOW - 3600, "nightly-1")
    new = scheduled_backup("new", NOW - 60, "nightly-2")
    failing = deletion_job("nightly-1", terminated(1, "no such backup data"))
    ctx, _, client = await observe(schedule(STATUS, **RETAIN_ONE), old, new, *failing)
    assert client.calls == []
    found = cond(ctx, "RetentionApplied")
    assert found["reason"] == "DeletionFailed" and "no such backup data" in found["message"]


async def test_a_backup_an_unfinished_restore_reads_is_held() -> None:
    old = scheduled_backup("old", NOW - 3600, "nightly-1")
    new = scheduled_backup("new", NOW - 60, "nightly-2")
    restore = restorejob({"phase": "Running"}, backupName="old")
    ctx, _, client = await observe(schedule(STATUS, **RETAIN_ONE), old, new, restore)
    assert client.calls == []
    assert cond(ctx, "RetentionApplied")["reason"] == "BackupInUse"


def test_a_restore_that_ended_or_a_cluster_that_restored_holds_nothing() -> None:
    done = restorejob(
        {"phase": "Completed", "conditions": [ended("True", "JobComplete", NOW)]}, backupName="a"
    )
    running = restorejob({"phase": "Running"}, backupName="b")
    restoring = {"metadata": meta("mo"), "spec": {"restoreFrom": "c"}}
    restored = {
        "metadata": meta("mo2", annotations={labels.RESTORE_COMPLETE: "True"}),
        "spec": {"restoreFrom": "d"},
    }
    assert backups_in_use([done, running], [restoring, restored]) == {"b", "c"}


async def test_replace_deletes_the_running_backupjob_before_creating_the_new_one() -> None:
    running = run_of(DUE - 5 * MINUTE, "Running")
    status = {"lastScheduleTime": format_time(DUE - 5 * MINUTE)}
    ctx, _, client = await observe(schedule(status, concurrencyPolicy="Replace"), running)
    assert [(verb, kind) for verb, kind, _ in client.calls] == [
        ("delete", "BackupJob"),
        ("create", "BackupJob"),
    ]
    assert client.calls[0][2]["uid"] == "uid-run"
    assert ctx.status["active"] == [run_name("nightly", DUE)]


async def test_forbid_skips_the_run_while_one_runs_and_says_which() -> None:
    running = run_of(DUE - 5 * MINUTE, "Running")
    status = {"lastScheduleTime": format_time(DUE - 5 * MINUTE)}
    ctx, plan, client = await observe(schedule(status), running)
    assert plan is None and client.calls == []
    skipped = cond(ctx, "Scheduled")
    assert skipped["status"] == "False" and skipped["reason"] == "RunSkipped"
    assert run_name("nightly", DUE - 5 * MINUTE) in skipped["message"]
    assert ctx.status["lastScheduleTime"] == format_time(DUE - 5 * MINUTE)
