"""Scenario 7: back up a cluster, then restore the backup into a new cluster.

A BackupJob runs MatrixOne's backup tool against a Ready cluster and records the result
as a (cluster-scoped) Backup; the Job goes once the backup is recorded, the BackupJob
after its ttl. A new cluster with ``restoreFrom`` restores the Backup into its own
storage before its log service exists, and its HAKeeper bootstraps from the restored
data. A restore of a backup whose data is not there, and a backup of a cluster that is
down, fail with the tool's reason in their conditions.
"""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.config import SIMULATED_LABEL
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule, RuleSet
from mo_devkit.simulated.backups import StorageLocation
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.config.fileservice import DEFAULT_S3_ENDPOINT

from .harness import GROUP_VERSION, OperatorRunner, World, condition, eventually

Obj = dict[str, Any]


def _on_simulated_nodes(world: World) -> Obj:
    """A job overlay that puts its pod on the simulator's nodes of a real API server."""
    if not world.real:
        return {}
    return {
        "tolerations": [
            {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": SIMULATED_LABEL, "operator": "In", "values": ["true"]}]}
                    ]
                }
            }
        },
    }


def backup_job(world: World, name: str, cluster: str, path: str, **spec: Any) -> Obj:
    body: Obj = {
        "source": {"clusterRef": cluster},
        "target": {"s3": {"path": path, "type": "minio", "endpoint": "http://minio.storage:9000"}},
        **spec,
    }
    overlay = _on_simulated_nodes(world)
    if overlay:
        body["overlay"] = overlay
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "BackupJob",
        "metadata": {"name": name, "namespace": world.namespace},
        "spec": body,
    }


async def _phase(world: World, res: Any, name: str, phase: str, timeout: float = 30.0) -> Obj:
    async def check() -> Obj | None:
        found = await world.get(res, name)
        return found if found is not None and (found.get("status") or {}).get("phase") == phase else None

    found: Obj = await eventually(check, timeout, message=f"{res.kind} {name} {phase}")
    return found


async def test_a_backup_restores_into_a_new_cluster_and_a_cluster_that_is_down_cannot_be_backed_up(
    world: World, operator: OperatorRunner
) -> None:
    ns, model = world.namespace, world.cluster.mo.model if world.cluster.mo else None
    assert model is not None
    await world.apply(world.cluster_manifest("src", proxy={"replicas": 1}))
    await world.wait_ready(r.MATRIXONE_CLUSTERS, "src")

    # A backup: the Job runs mo_br against the cluster's proxy, the result becomes a Backup.
    await world.apply(backup_job(world, "nightly", "src", "backups/nightly", ttl="3s"))
    job = await _phase(world, r.BACKUPJOBS, "nightly", "Completed")
    ended = condition(job, "Ended")
    assert ended["status"] == "True" and ended["reason"] == "JobComplete", ended
    name = job["status"]["backup"]
    backup = await world.client.get(r.BACKUPS, name)
    try:
        meta = backup["meta"]
        recorded = model.backups.backups[meta["id"]]
        assert name == f"nightly-{meta['id'][:5]}"
        assert recorded.source == (ns, "src")
        assert recorded.location == StorageLocation.of("http://minio.storage:9000", "backups", "nightly")
        assert meta["location"]["s3"]["path"] == "backups/nightly"
        assert meta["sourceRef"] == f"matrixonecluster/{ns}/src"
        assert meta["raw"].startswith(meta["id"]) and int(meta["size"]) == recorded.size
        assert meta["atTime"] and meta["completeTime"]
        assert backup["metadata"]["labels"][labels.INSTANCE] == "nightly"
        assert len(model.backups.backups) == 1

        # The recorded Job goes at once, the BackupJob after its ttl; the Backup stays.
        await eventually(lambda: _gone(world, r.JOBS, "nightly"), 20, message="Job nightly deleted")
        await eventually(
            lambda: _gone(world, r.BACKUPJOBS, "nightly"), 20, message="BackupJob deleted by ttl"
        )
        assert await world.client.get_or_none(r.BACKUPS, name) is not None

        # A new cluster from the Backup: restored first, then created, HAKeeper bootstrapped from it.
        await world.apply(world.cluster_manifest("copy", restoreFrom=name))
        restore = await eventually(lambda: world.get(r.RESTOREJOBS, "restore-copy"), 20)
        owner = await world.get(r.MATRIXONE_CLUSTERS, "copy")
        assert owner is not None
        assert [ref["uid"] for ref in restore["metadata"]["ownerReferences"]] == [owner["metadata"]["uid"]]
        cluster = await world.wait_ready(r.MATRIXONE_CLUSTERS, "copy", timeout=60)
        assert cluster["metadata"]["annotations"][labels.RESTORE_COMPLETE] == "True"
        restore = await world.get(r.RESTOREJOBS, "restore-copy")
        assert restore is not None and restore["status"]["phase"] == "Completed"
        logset = await world.get(r.LOGSETS, "copy")
        assert logset is not None and logset["spec"]["initialConfig"]["restoreFrom"] == "hk_data"
        bootstrap = await world.get(r.CONFIGMAPS, "copy-log-bootstrap")
        assert (
            bootstrap is not None and 'file-path = "BACKUP://hk_data"' in bootstrap["data"]["bootstrap.toml"]
        )
        target = StorageLocation.of(DEFAULT_S3_ENDPOINT, "bucket", "copy")
        assert model.backups.restored[target] == meta["id"]
        hakeeper = model.hakeepers[(ns, "copy")]
        assert hakeeper.bootstrapped and hakeeper.restored_from == meta["id"]
        assert model.hakeepers[(ns, "src")].restored_from is None
        # The restored database keeps the source's passwords: so does its credential.
        source_credential = await world.get(r.SECRETS, "src-credential")
        copy_credential = await world.get(r.SECRETS, "copy-credential")
        assert source_credential is not None and copy_credential is not None
        assert copy_credential["data"] == source_credential["data"]

        # The source goes down (its log stores stop serving): a backup fails, saying why.
        rules = RuleSet()
        rules.add(
            FailureRule(
                effect=Effect.NEVER_READY,
                namespace=ns,
                labels={labels.COMPONENT: "LogSet", labels.CLUSTER: "src"},
            )
        )
        await world.set_simulator_rules(rules)
        await eventually(lambda: not model.available((ns, "src")), 30, message="src HAKeeper down")
        await world.apply(backup_job(world, "adhoc", "src", "backups/adhoc"))
        failed = await _phase(world, r.BACKUPJOBS, "adhoc", "Failed")
        ended = condition(failed, "Ended")
        assert ended["status"] == "True" and ended["reason"] == "BackupFailed", ended
        assert "mo_br exited with code 1" in ended["message"], ended
        assert f"cannot connect to MatrixOne at src-proxy.{ns}:6001" in ended["message"], ended
        assert failed["status"].get("backup") is None
        assert await world.get(r.JOBS, "adhoc") is not None, "a failed backup's Job is kept to troubleshoot"
        assert len(model.backups.backups) == 1
    finally:
        await world.client.delete(r.BACKUPS, name, missing_ok=True)


async def _gone(world: World, res: Any, name: str) -> bool:
    return await world.get(res, name) is None


async def test_a_restore_of_a_backup_whose_data_is_missing_fails_the_new_cluster(
    world: World, operator: OperatorRunner
) -> None:
    ghost = f"ghost-{world.namespace}"
    backup = {
        "apiVersion": GROUP_VERSION,
        "kind": "Backup",
        "metadata": {"name": ghost},
        "meta": {
            "id": "0badc0de-0000-4000-8000-000000000000",
            "location": {"s3": {"path": "backups/ghost"}},
            "atTime": "2024-05-13T04:00:12Z",
            "completeTime": "2024-05-13T04:00:13Z",
            "sourceRef": "matrixonecluster/elsewhere/gone",
            "raw": "0badc0de-0000-4000-8000-000000000000,1024,backups/ghost,2024-05-13T04:00:12Z,1s,"
            "2024-05-13T04:00:13Z",
        },
    }
    await world.apply(backup)
    try:
        await world.apply(world.cluster_manifest("phoenix", restoreFrom=ghost))

        async def restore_failed() -> Obj | None:
            found = await world.get(r.MATRIXONE_CLUSTERS, "phoenix")
            return found if condition(found, "Ready").get("reason") == "RestoreFailed" else None

        cluster = await eventually(restore_failed, 30, message="phoenix RestoreFailed")
        ready = condition(cluster, "Ready")
        assert ready["status"] == "False" and cluster["status"]["phase"] == "NotReady"
        assert "RestoreJob restore-phoenix failed" in ready["message"], ready
        assert "backup 0badc0de-0000-4000-8000-000000000000 not found at backups/ghost" in ready["message"]
        assert "delete and recreate the cluster to retry" in ready["message"]
        restore = await world.get(r.RESTOREJOBS, "restore-phoenix")
        assert restore is not None and restore["status"]["phase"] == "Failed"
        assert condition(restore, "Ended")["reason"] == "RestoreFailed"
        assert await world.get(r.LOGSETS, "phoenix") is None, "nothing is created from a failed restore"
        assert world.cluster.mo is not None and not world.cluster.mo.model.backups.restored
    finally:
        await world.client.delete(r.BACKUPS, ghost, missing_ok=True)
