"""The simulated ``mo_br`` (backuptool.py) and a log service restoring from its backups.

Backups need a cluster that answers at ``--host``; restores need a backup the model
recorded; a log service whose bootstrap config restores HAKeeper data bootstraps only
once that data is at its restore path.
"""

from __future__ import annotations

from typing import Any

from mo_devkit.simulated.backups import RestorePoint, StorageLocation
from mo_devkit.simulated.backuptool import (
    BackupTool,
    ToolRun,
    resolve_sql_host,
    run_backup,
    run_delete,
    run_restore,
    run_tool,
    tool_run,
)
from mo_devkit.simulated.configfiles import read_config
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.admin import HAKeeperPhase
from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.config.fileservice import DEFAULT_S3_ENDPOINT

from .factories import NS, World, cluster, config_map, log_pod, logset_services, service

NOW = 1000.0
TARGET = br.S3Target.of(
    {
        "s3": {
            "path": "backups/daily",
            "type": "minio",
            "endpoint": "http://minio:9000",
            "secretRef": {"name": "k"},
        }
    }
)


def tool_pod(script: str, *, uid: str = "uid-tool", env: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "nightly-abcde", "namespace": NS, "uid": uid},
        "spec": {
            "containers": [
                {
                    "name": "br",
                    "image": br.DEFAULT_IMAGE,
                    "command": ["/bin/sh", "-c", script],
                    "env": [{"name": k, "value": v} for k, v in (env or {}).items()]
                    + [{"name": "MO_USER", "valueFrom": {"secretKeyRef": {"name": "s", "key": "username"}}}],
                }
            ],
            "restartPolicy": "Never",
        },
    }


def running_cluster() -> World:
    world = World()
    cluster(world)
    cn = labels.sub_resource_labels(Component.CN, "mo-tp", NS)
    world.services.append(service(names.client_service_name(Component.CN, "mo-tp"), cn, port=ports.CN_SQL))
    for _ in range(3):
        world.step()
    assert world.model.available((NS, "mo"))
    return world


def backup(world: World, host: str = f"mo-tp-cn.{NS}", uid: str = "uid-tool") -> Any:
    run = tool_run(tool_pod(br.backup_script(host, ports.CN_SQL, TARGET), uid=uid))
    assert run is not None
    instances = {i.key: i for i in world.instances.values()}
    return run_backup(run, uid, NS, world.snapshot(), instances, world.model, NOW)


def test_the_tool_is_found_in_a_shell_command_with_its_flags_and_literal_env() -> None:
    script = br.restore_script("id-1", TARGET, br.S3Target.of({"s3": {"path": "data/new"}}))
    run = tool_run(tool_pod(script, env={"RAW_META": "id-1,1"}))
    assert run is not None and run.container == "br" and run.action == "restore"
    assert run.positional == ("id-1",)
    assert run.flags["restore_dir"] == "s3" and run.flags["restore_bucket"] == "data"
    assert (
        run.flags["restore_filepath"] == "new" and run.flags["backup_access_key_id"] == "$AWS_ACCESS_KEY_ID"
    )
    assert run.env == {"RAW_META": "id-1,1"}
    backup_run = tool_run(tool_pod(br.backup_script("h", 6001, TARGET)))
    assert backup_run is not None and backup_run.flags["is_minio"] == "true"
    assert backup_run.flags["password"] == "$MO_PASSWORD" and backup_run.flags["filepath"] == "daily"
    assert tool_run(tool_pod("echo /mo_br backup is not run here")) is None
    assert tool_run({"spec": {"containers": [{"name": "main", "command": ["/mo-service"]}]}}) is None


def test_a_backup_of_a_running_cluster_is_recorded_and_reported_in_its_metadata() -> None:
    world = running_cluster()
    result = backup(world)
    assert result.exit_code == 0 and result.container == "br"
    meta = br.parse_metadata(result.message)
    record = world.model.backups.backups[meta.id]
    assert record.source == (NS, "mo")
    assert record.location == StorageLocation.of("http://minio:9000", "backups", "daily")
    assert meta.path == "backups/daily" and meta.size == record.size > 0
    again = backup(world)
    assert br.parse_metadata(again.message).id == meta.id, "the same pod makes the same backup"
    other = backup(world, uid="uid-other")
    assert br.parse_metadata(other.message).id != meta.id
    assert len(world.model.backups.backups) == 2


def test_a_backup_fails_when_nothing_answers_at_its_host() -> None:
    world = running_cluster()
    missing = backup(world, host=f"nowhere.{NS}")
    assert missing.exit_code == 1 and missing.message == ""
    assert f"cannot connect to MatrixOne at nowhere.{NS}:6001: Service {NS}/nowhere not found" in missing.log
    logs = names.discovery_service_name("mo")  # a Service, but of log pods
    wrong = resolve_sql_host(logs, ports.LOG_SERVICE, NS, world.snapshot(), {}, world.model)
    assert "selects no CN or proxy" in getattr(wrong, "reason", "")
    for i in range(3):  # the log service stops serving: HAKeeper loses its quorum
        world.edit(names.pod_name(Component.LOG, "mo", i))["status"]["conditions"][0]["status"] = "False"
    world.step()
    down = backup(world)
    assert down.exit_code == 1 and "serves with a running HAKeeper" in down.log
    assert not world.model.backups.backups


def restore_pod(backup_id: str, raw: str, target: str = "bucket/copy") -> dict[str, Any]:
    script = br.restore_script(backup_id, TARGET, br.S3Target.of({"s3": {"path": target}}))
    return tool_pod(script, env={"RAW_META": raw})


def test_a_restore_needs_a_recorded_backup_at_the_path_its_metadata_names() -> None:
    world = running_cluster()
    meta = br.parse_metadata(backup(world).message)

    def restore(backup_id: str, raw: str) -> Any:
        run = tool_run(restore_pod(backup_id, raw))
        assert run is not None
        return run_restore(run, world.model)

    unknown = restore("0badc0de", "0badc0de,1,backups/daily")
    assert unknown.exit_code == 1 and "backup 0badc0de not found at backups/daily" in unknown.log
    assert restore(meta.id, "someone-else,1").exit_code == 1
    moved = restore(meta.id, meta.raw.replace("backups/daily", "backups/elsewhere"))
    assert moved.exit_code == 1 and "its data is at backups/daily" in moved.log
    assert not world.model.backups.restored
    done = restore(meta.id, meta.raw)
    assert done.exit_code == 0
    assert world.model.backups.restored == {
        StorageLocation.of(DEFAULT_S3_ENDPOINT, "bucket", "copy"): meta.id
    }


def test_a_delete_removes_a_recorded_backup_so_it_can_no_longer_be_restored() -> None:
    world = running_cluster()
    meta = br.parse_metadata(backup(world).message)

    def delete(backup_id: str, raw: str) -> Any:
        run = tool_run(tool_pod(br.delete_script(backup_id), uid="uid-rm", env={"RAW_META": raw}))
        assert run is not None and run.action == "delete"
        return run_delete(run, world.model)

    assert delete(meta.id, "someone-else,1").exit_code == 1
    assert meta.id in world.model.backups.backups
    assert delete(meta.id, meta.raw).exit_code == 0
    assert meta.id not in world.model.backups.backups
    again = delete(meta.id, meta.raw)
    assert again.exit_code == 1 and "no such backup data" in again.log
    run = tool_run(restore_pod(meta.id, meta.raw))
    assert run is not None and run_restore(run, world.model).exit_code == 1


def _restoring_log_service(world: World, logset: str = "copy") -> None:
    spec = {
        "replicas": 3,
        "image": "matrixorigin/matrixone:2.0.0",
        "sharedStorage": {"s3": {"path": "bucket/copy"}},
    }
    spec["initialConfig"] = {"restoreFrom": br.HAKEEPER_DATA_PATH}
    world.configmaps += [
        config_map(
            names.config_map_base_name(Component.LOG, logset),
            log_config.config_map_data(name=logset, namespace=NS, spec=spec),
        ),
        config_map(
            names.log_bootstrap_config_map_name(logset),
            log_config.bootstrap_config_map_data(spec=spec, replicas=plan_bootstrap(3)),
        ),
        config_map(
            names.log_gossip_config_map_name(logset),
            log_config.gossip_config_map_data(name=logset, namespace=NS, ordinals=range(3)),
        ),
    ]
    world.services += logset_services(logset)
    world.add(*(log_pod(i, logset) for i in range(3)))


def test_a_restoring_log_service_reads_only_the_backup_and_bootstraps_once_the_data_is_there() -> None:
    world = World()
    _restoring_log_service(world)
    pod = world.pods[names.pod_name(Component.LOG, "copy", 0)]
    read = read_config(Component.LOG, pod, NS, world.snapshot())
    assert not hasattr(read, "reason"), read  # BACKUP-only fileservices are a valid log config
    assert read.bootstrap is not None  # type: ignore[union-attr]
    point = read.bootstrap.restore  # type: ignore[union-attr]
    assert point == RestorePoint(StorageLocation.of(DEFAULT_S3_ENDPOINT, "bucket", "copy"), "hk_data")
    for _ in range(3):
        world.step()
    hakeeper = world.model.hakeepers[(NS, "copy")]
    assert hakeeper.phase is HAKeeperPhase.BOOTSTRAPPING and not world.model.available((NS, "copy"))
    world.model.backups.restore("backup-1", StorageLocation.of(DEFAULT_S3_ENDPOINT, "bucket", "elsewhere"))
    world.step()
    assert not hakeeper.bootstrapped, "data restored elsewhere does not count"
    world.model.backups.restore("backup-1", point.location)
    world.step()
    assert hakeeper.bootstrapped and hakeeper.restored_from == "backup-1"


def test_a_log_service_that_does_not_restore_ignores_backups() -> None:
    world = World()
    cluster(world)
    world.step()
    assert world.model.hakeepers[(NS, "mo")].bootstrapped
    assert world.model.hakeepers[(NS, "mo")].restored_from is None


def test_the_behaviour_decides_once_per_pod_and_leaves_other_pods_alone() -> None:
    world = running_cluster()
    calls: list[str] = []
    instances = {i.key: i for i in world.instances.values()}

    def decide(pod: dict[str, Any], run: ToolRun) -> Any:
        calls.append(pod["metadata"]["uid"])
        return run_tool(pod, run, world.snapshot(), instances, world.model, NOW)

    tool = BackupTool(decide)
    pod = tool_pod(br.backup_script(f"mo-tp-cn.{NS}", 6001, TARGET))
    first = tool.judge(pod, None)
    assert first is not None and first.completion is not None and first.completion.exit_code == 0
    assert tool.judge(pod, None) is first and calls == ["uid-tool"]
    other = log_pod(0)
    assert tool.judge(other, None) is None and tool.judge(other, None) is None
    assert calls == ["uid-tool"]
    tool.forget_except({"uid-else"})
    tool.judge(pod, None)
    assert calls == ["uid-tool", "uid-tool"]
    tool.enabled = False
    assert tool.judge(pod, None) is None
