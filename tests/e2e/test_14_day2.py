"""Day-2 operations not covered elsewhere: pausing reconciliation (no write at
all while paused, the change applied on resume) and a vertical resource change
(pods roll to the new requests)."""

from __future__ import annotations

import asyncio
import json

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually


async def test_a_paused_cluster_gets_no_write_until_it_is_resumed(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    op, client = operator.operator, operator.client
    assert op is not None and client is not None
    await world.kubectl("annotate", "mo", "mo", f"{labels.SKIP_SYNC}=true")
    await operator.quiet()
    before = sum(client.writes.values())
    patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": 3}]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))
    await asyncio.sleep(2)
    await op.wait_idle()
    assert sum(client.writes.values()) == before, dict(client.writes)
    cnset = await world.get(r.CNSETS, "mo-tp")
    assert cnset is not None and cnset["spec"]["replicas"] == 2, "a paused cluster's children are left alone"

    await world.kubectl("annotate", "mo", "mo", f"{labels.SKIP_SYNC}-")
    await eventually(lambda: _cn_pods(world, 3), timeout=60, message="the change is applied on resume")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")


async def test_new_resources_roll_the_pods_to_them(world: World, operator: OperatorRunner) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    resources = {"requests": {"cpu": "0.5", "memory": "1024Mi"}, "limits": {"memory": "2Gi"}}
    patch = [{"op": "add", "path": "/spec/cnGroups/0/resources", "value": resources}]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))

    async def rolled() -> bool:
        pods = await world.pods(**{labels.INSTANCE: "mo-tp"})
        want = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}}
        return len(pods) == 2 and all(p["spec"]["containers"][0].get("resources") == want for p in pods)

    await eventually(rolled, timeout=60, message="every CN runs with the new resources")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")


async def _cn_pods(world: World, count: int) -> bool:
    return len(await world.pods(**{labels.INSTANCE: "mo-tp"})) == count
