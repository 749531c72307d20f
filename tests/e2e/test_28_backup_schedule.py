"""Scenario 28: a BackupSchedule of every minute, with a retention of one backup.

While suspended, a scheduled time passes and no run starts; resumed (no starting
deadline), the missed run starts at once, as a CronJob's would. Each run is a BackupJob
named after its scheduled minute that completes and records a Backup; once the next
run's Backup exists, retention deletes the older backup's data through the (simulated)
backup tool, then its Backup object. The schedule's status says when it ran, when it
last succeeded and when it runs next.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mo_operator.controllers.backup.schedule_decisions import run_name
from mo_operator.controllers.common import resources as r
from mo_operator.kube.times import format_time, parse_time
from mo_operator.matrixone import labels

from .harness import GROUP_VERSION, OperatorRunner, World, condition, eventually
from .test_07_backup_restore import _on_simulated_nodes

Obj = dict[str, Any]


def _schedule(world: World, cluster: str) -> Obj:
    template: Obj = {
        "source": {"clusterRef": cluster},
        "target": {"s3": {"path": "backups/every", "type": "minio", "endpoint": "http://minio.storage:9000"}},
    }
    overlay = _on_simulated_nodes(world)
    if overlay:
        template["overlay"] = overlay
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "BackupSchedule",
        "metadata": {"name": "every", "namespace": world.namespace},
        "spec": {"schedule": "* * * * *", "suspend": True, "retention": {"count": 1}, "template": template},
    }


async def _completed_run(world: World, scheduled: float, timeout: float) -> Obj:
    name = run_name("every", scheduled)

    async def check() -> Obj | None:
        found = await world.get(r.BACKUPJOBS, name)
        return found if found is not None and found.get("status", {}).get("phase") == "Completed" else None

    found: Obj = await eventually(check, timeout, message=f"BackupJob {name} Completed")
    return found


async def test_a_schedule_runs_on_time_catches_up_once_and_keeps_only_the_newest_backup(
    world: World, operator: OperatorRunner
) -> None:
    model = world.cluster.mo.model if world.cluster.mo else None
    assert model is not None
    await world.apply(world.cluster_manifest("src", proxy={"replicas": 1}))
    await world.wait_ready(r.MATRIXONE_CLUSTERS, "src")

    # Suspended: a scheduled time passes, nothing runs.
    await world.apply(_schedule(world, "src"))

    async def suspended() -> Obj | None:
        found = await world.get(r.BACKUPSCHEDULES, "every")
        return found if condition(found, "Scheduled").get("reason") == "Suspended" else None

    schedule = await eventually(suspended, 20, message="schedule Suspended")
    assert "nextScheduleTime" not in schedule["status"], schedule["status"]
    created = parse_time(schedule["metadata"]["creationTimestamp"])
    assert created is not None
    first = (created // 60 + 1) * 60
    # Proving that nothing starts takes letting the scheduled time pass.
    await asyncio.sleep(max(0.0, first + 2 - time.time()))
    assert await world.list(r.BACKUPJOBS) == []
    schedule = await world.get(r.BACKUPSCHEDULES, "every")
    assert schedule is not None and "lastScheduleTime" not in schedule["status"]

    # Resumed: the missed run starts at once, named after its minute; it records a Backup.
    await world.kubectl(
        "patch", "backupschedule", "every", "--type=merge", "-p", '{"spec":{"suspend":false}}'
    )
    job = await _completed_run(world, first, 30)
    assert job["metadata"]["labels"][labels.BACKUP_SCHEDULE] == "every"
    assert job["metadata"]["annotations"][labels.SCHEDULED_AT] == format_time(first)
    assert [ref["kind"] for ref in job["metadata"]["ownerReferences"]] == ["BackupSchedule"]
    older = job["status"]["backup"]
    older_backup = await world.client.get(r.BACKUPS, older)
    assert older_backup["metadata"]["labels"][labels.BACKUP_SCHEDULE] == "every"
    older_id = older_backup["meta"]["id"]
    assert older_id in model.backups.backups

    # The next minute's run: a second Backup, and the first one's data and object go.
    second = max(first + 60, (time.time() // 60) * 60 + 60)
    job = await _completed_run(world, second, 90)
    newer = job["status"]["backup"]
    newer_id = (await world.client.get(r.BACKUPS, newer))["meta"]["id"]

    async def retained() -> bool:
        return (
            await world.client.get_or_none(r.BACKUPS, older) is None
            and older_id not in model.backups.backups
            and await world.get(r.JOBS, f"{run_name('every', first)}-rm") is None
        )

    await eventually(retained, 30, message=f"Backup {older} and its data deleted")
    assert newer_id in model.backups.backups
    assert await world.client.get_or_none(r.BACKUPS, newer) is not None

    async def recorded() -> Obj | None:
        found = await world.get(r.BACKUPSCHEDULES, "every")
        kept = condition(found, "RetentionApplied").get("message") == "1 Backup(s) kept"
        return found if kept and condition(found, "LastRunSucceeded").get("status") == "True" else None

    schedule = await eventually(recorded, 20, message="schedule status after two runs")
    status = schedule["status"]
    assert parse_time(status["lastScheduleTime"]) >= second, status
    assert parse_time(status["nextScheduleTime"]) > parse_time(status["lastScheduleTime"]), status
    assert parse_time(status["lastSuccessfulTime"]) >= second, status
    assert condition(schedule, "Scheduled")["status"] == "True"
    table = (await world.kubectl("get", "backupschedule", "every")).stdout
    assert table.split()[:5] == ["NAME", "SCHEDULE", "SUSPEND", "LAST", "SCHEDULE"], table
    assert "* * * * *" in table and "false" in table, table
    print(f"\n{table}{condition(schedule, 'RetentionApplied')}")
