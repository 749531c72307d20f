"""Scenario 2: a CN group scales out and in; scale-in drains a CN through
MatrixOne's admin interface before removing it, and scaling back up while
it drains puts it back to work instead of starting a new CN."""

from __future__ import annotations

import json

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .harness import OperatorRunner, World, eventually


def _tp(replicas: int, min_delay: int = 0) -> list[dict[str, object]]:
    return [
        {
            "name": "tp",
            "replicas": replicas,
            "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": min_delay},
        }
    ]


async def _scale(world: World, replicas: int) -> None:
    patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": replicas}]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))


async def _cn_pods(world: World) -> dict[str, dict[str, object]]:
    return {p["metadata"]["name"]: p for p in await world.pods(**{labels.INSTANCE: "mo-tp"})}


def _uuid(pod: dict[str, object]) -> str:
    return str(pod["metadata"]["labels"][labels.CN_UUID])  # type: ignore[index]


async def test_scale_out_then_in_drains_before_removing(world: World, operator: OperatorRunner) -> None:
    await world.apply(world.cluster_manifest("mo", cnGroups=_tp(2)))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")

    await _scale(world, 3)
    await world.wait_settled(r.CNSETS, "mo-tp")
    await eventually(lambda: world.wait_settled(r.MATRIXONE_CLUSTERS, "mo"))
    pods = await _cn_pods(world)
    assert sorted(pods) == ["mo-tp-cn-0", "mo-tp-cn-1", "mo-tp-cn-2"]

    mo = world.cluster.mo
    assert mo is not None
    assert mo.open_sessions(world.namespace, "mo", 30) == 30
    loads = {name: mo.sessions(_uuid(p)) for name, p in pods.items()}
    assert sum(loads.values()) == 30 and all(v > 0 for v in loads.values())

    await _scale(world, 2)

    async def draining() -> str | None:
        for name, pod in (await _cn_pods(world)).items():
            if labels.STORE_DRAINING_START in (pod["metadata"].get("annotations") or {}):
                return name
        return None

    victim = await eventually(draining, message="a CN starts draining")
    victim_uuid = _uuid(pods[victim])
    await eventually(lambda: _gone(world, victim), timeout=30, message=f"drained CN {victim} is removed")
    survivors = await _cn_pods(world)
    assert len(survivors) == 2 and victim not in survivors
    # No session was lost: the drain moved them to the CNs that stay.
    assert sum(mo.sessions(_uuid(p)) for p in survivors.values()) == 30
    # HAKeeper was asked in the right order, over morpc: drained first, forgotten after.
    calls = [(c.method, c.work_state) for c in mo.calls if c.uuid == victim_uuid]
    assert ("PATCH_CN_STORE", WorkState.DRAINING) in calls
    assert calls.index(("PATCH_CN_STORE", WorkState.DRAINING)) < calls.index(("DELETE_CN_STORE", None))
    await world.wait_settled(r.CNSETS, "mo-tp")


async def _gone(world: World, name: str) -> bool:
    """The pod object is gone (not just terminating): its store was let go first."""
    return await world.get(r.PODS, name) is None


async def test_scaling_up_mid_drain_reuses_the_draining_cn(world: World, operator: OperatorRunner) -> None:
    await world.apply(world.cluster_manifest("mo", cnGroups=_tp(3, min_delay=600)))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    before = await _cn_pods(world)
    mo = world.cluster.mo
    assert mo is not None
    mo.open_sessions(world.namespace, "mo", 9)

    await _scale(world, 2)

    async def draining() -> str | None:
        for name, pod in (await _cn_pods(world)).items():
            if labels.STORE_DRAINING_START in (pod["metadata"].get("annotations") or {}):
                return name
        return None

    victim = await eventually(draining, message="a CN starts draining")
    # The annotation and the HAKeeper call are two steps of one plan: wait for the second.
    await eventually(
        lambda: _work_state(mo, world, _uuid(before[victim])) is WorkState.DRAINING,
        message="HAKeeper holds the CN Draining",
    )

    await _scale(world, 3)
    await eventually(
        lambda: _work_state(mo, world, _uuid(before[victim])) is WorkState.WORKING,
        message="the draining CN is back to work",
    )
    await world.wait_settled(r.CNSETS, "mo-tp")
    after = await _cn_pods(world)
    assert sorted(after) == sorted(before), "no new CN was started"
    assert after[victim]["metadata"]["uid"] == before[victim]["metadata"]["uid"]
    assert labels.STORE_DRAINING_START not in (after[victim]["metadata"].get("annotations") or {})


def _work_state(mo: object, world: World, uuid: str) -> WorkState | None:
    keeper = mo.hakeeper(world.namespace, "mo")  # type: ignore[attr-defined]
    if keeper is None:
        return None
    from mo_operator.matrixone.component import Component

    record = keeper.stores[Component.CN].get(uuid)
    return record.work_state if record is not None else None
