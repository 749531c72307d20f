"""Scenario 28: a BackupSchedule of every minute, with a retention of one backup.

While suspended, a scheduled time passes and no run starts; resumed (no starting
deadline), the missed run starts at once, as a CronJob's would: a BackupJob named after
its scheduled minute that completes and records a Backup. Retention then deletes the
older backup (made by a BackupJob labelled as the schedule's, so that one run is
enough) through the (simulated) backup tool, data first, then its Backup object. The
schedule's status says when it ran, when it last succeeded and when it runs next.

Once on the embedded and once on the real control plane; the attached run would prove
nothing more, and a schedule takes up to a minute to come due.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest

from mo_operator.controllers.backup.schedule_decisions import run_name
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.meta.times import format_time, parse_time
from mo_operator.matrixone import labels

from .harness import GROUP_VERSION, REAL_KUBECONFIG, OperatorRunner, World, condition, eventually
from .test_07_backup_restore import _on_simulated_nodes, _phase, backup_job

pytestmark = pytest.mark.skipif(
    bool(REAL_KUBECONFIG) and not os.environ.get("KUBEBUILDER_ASSETS"),
    reason="backup schedules: run on the embedded and the real control plane, not again attached",
)

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


async def test_a_resumed_schedule_catches_up_once_and_keeps_only_the_newest_backup(
    world: World, operator: OperatorRunner
) -> None:
    model = world.cluster.mo.model if world.cluster.mo else None
    assert model is not None
    await world.apply(world.cluster_manifest("src", proxy={"replicas": 1}))
    await world.wait_ready(r.MATRIXONE_CLUSTERS, "src")

    # Suspended: a scheduled time passes, nothing runs. Meanwhile an earlier backup,
    # labelled as the schedule's, is one its retention counts.
    await world.apply(_schedule(world, "src"))
    earlier = backup_job(world, "earlier", "src", "backups/every")
    earlier["metadata"]["labels"] = {labels.BACKUP_SCHEDULE: "every"}
    await world.apply(earlier)

    async def suspended() -> Obj | None:
        found = await world.get(r.BACKUPSCHEDULES, "every")
        return found if condition(found, "Scheduled").get("reason") == "Suspended" else None

    schedule = await eventually(suspended, 20, message="schedule Suspended")
    assert "nextScheduleTime" not in schedule["status"], schedule["status"]
    created = parse_time(schedule["metadata"]["creationTimestamp"])
    assert created is not None
    due = (created // 60 + 1) * 60
    older = (await _phase(world, r.BACKUPJOBS, "earlier", "Completed"))["status"]["backup"]
    older_id = (await world.client.get(r.BACKUPS, older))["meta"]["id"]
    # A schedule with nothing due writes nothing when reconciled again (as all else here).
    op, client = operator.operator, operator.client
    assert op is not None and client is not None
    await operator.quiet()
    before = sum(client.writes.values())
    op.resync()
    await op.wait_idle()
    assert sum(client.writes.values()) == before, dict(client.writes)
    # Proving that nothing starts takes letting the scheduled time pass.
    await asyncio.sleep(max(0.0, due + 2 - time.time()))
    assert [j["metadata"]["name"] for j in await world.list(r.BACKUPJOBS)] == ["earlier"]
    schedule = await world.get(r.BACKUPSCHEDULES, "every")
    assert schedule is not None and "lastScheduleTime" not in schedule["status"]
    assert older_id in model.backups.backups, "retention 1 keeps the only backup"

    # Resumed without a starting deadline: the missed run starts at once, named after its
    # minute, owned by the schedule; it records a Backup.
    await world.kubectl(
        "patch", "backupschedule", "every", "--type=merge", "-p", '{"spec":{"suspend":false}}'
    )
    job = await _phase(world, r.BACKUPJOBS, run_name("every", due), "Completed")
    assert job["metadata"]["labels"][labels.BACKUP_SCHEDULE] == "every"
    assert job["metadata"]["annotations"][labels.SCHEDULED_AT] == format_time(due)
    assert [ref["kind"] for ref in job["metadata"]["ownerReferences"]] == ["BackupSchedule"]
    newer = job["status"]["backup"]
    newer_backup = await world.client.get(r.BACKUPS, newer)
    assert newer_backup["metadata"]["labels"][labels.BACKUP_SCHEDULE] == "every"

    # Retention 1: the older backup's data goes through the backup tool, then its object.
    async def retained() -> bool:
        return (
            await world.client.get_or_none(r.BACKUPS, older) is None
            and older_id not in model.backups.backups
            and await world.get(r.JOBS, "earlier-rm") is None
        )

    await eventually(retained, 30, message=f"Backup {older} and its data deleted")
    assert newer_backup["meta"]["id"] in model.backups.backups
    assert await world.client.get_or_none(r.BACKUPS, newer) is not None

    async def recorded() -> Obj | None:
        found = await world.get(r.BACKUPSCHEDULES, "every")
        kept = condition(found, "RetentionApplied").get("message") == "1 Backup(s) kept"
        return found if kept and condition(found, "LastRunSucceeded").get("status") == "True" else None

    schedule = await eventually(recorded, 20, message="schedule status after its run")
    status = schedule["status"]
    assert parse_time(status["lastScheduleTime"]) == due, status
    assert parse_time(status["nextScheduleTime"]) > due, status
    assert parse_time(status["lastSuccessfulTime"]) > due, status
    assert condition(schedule, "Scheduled")["status"] == "True"
    table = (await world.kubectl("get", "backupschedule", "every")).stdout
    assert table.split()[:5] == ["NAME", "SCHEDULE", "SUSPEND", "LAST", "SCHEDULE"], table
    assert "* * * * *" in table and "false" in table, table
    print(f"\n{table}{condition(schedule, 'RetentionApplied')}\n{condition(schedule, 'LastRunSucceeded')}")
