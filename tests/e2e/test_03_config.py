"""Scenario 3: a configuration change makes a new ConfigMap named by its
content, the pods roll to it, and the old ConfigMap goes once no pod uses it."""

from __future__ import annotations

import tomllib

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually


def _config_of(pod: dict[str, object]) -> str:
    volumes = pod["spec"]["volumes"]  # type: ignore[index]
    return next(v["configMap"]["name"] for v in volumes if v["name"] == "config")


async def _configs(world: World, instance: str) -> set[str]:
    return {_config_of(p) for p in await world.pods(**{labels.INSTANCE: instance})}


async def test_a_config_change_rolls_pods_to_a_new_hashed_config_map(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo")
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    old_log = await _configs(world, "mo")  # log and TN pods share the instance name "mo"
    old_cn = await _configs(world, "mo-tp")
    assert len(old_cn) == 1

    manifest["spec"]["logService"]["config"] = '[log]\nlevel = "debug"\n'
    manifest["spec"]["cnGroups"][0]["config"] = '[cn.txn]\nmode = "pessimistic"\n'
    await world.apply(manifest)

    async def rolled() -> bool:
        cn = await _configs(world, "mo-tp")
        log = {c for c in await _configs(world, "mo") if c.startswith("mo-log-config")}
        return len(cn) == 1 and cn != old_cn and len(log) == 1 and not (log & old_log)

    await eventually(rolled, timeout=60, message="every pod runs the new config")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    new_cn = (await _configs(world, "mo-tp")).pop()
    data = (await world.get(r.CONFIGMAPS, new_cn))["data"]  # type: ignore[index]
    assert tomllib.loads(data["config.toml"])["cn"]["txn"]["mode"] == "pessimistic"
    new_log = next(c for c in await _configs(world, "mo") if c.startswith("mo-log-config"))
    log_data = (await world.get(r.CONFIGMAPS, new_log))["data"]  # type: ignore[index]
    assert tomllib.loads(log_data["logservice.toml"])["log"]["level"] == "debug"
    assert (await world.get(r.CONFIGMAPS, new_cn))["immutable"] is True  # type: ignore[index]

    async def old_gone() -> bool:
        names = {c["metadata"]["name"] for c in await world.list(r.CONFIGMAPS)}
        return not (names & (old_cn | {c for c in old_log if c.startswith("mo-log-config")}))

    await eventually(old_gone, timeout=30, message="the old ConfigMaps are deleted after the roll")
