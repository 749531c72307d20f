"""Log service failover: a log store that HAKeeper reports down and whose pod
has not been ready for ``storeFailureTimeout`` is replaced, exactly that one;
losing a majority of the shard's replicas is reported (condition and Event)
and never acted on, since that could split the Raft group."""

from __future__ import annotations

import asyncio

from mo_devkit.localcluster.simulator.rules import FailureRule, RuleSet
from mo_operator.controllers.framework import resources as r

from .harness import OperatorRunner, World, condition, eventually


def _manifest(world: World) -> dict[str, object]:
    manifest = world.cluster_manifest("mo")
    manifest["spec"]["logService"]["storeFailureTimeout"] = "3s"
    return manifest


async def _uids(world: World) -> dict[str, str]:
    return {
        p["metadata"]["name"]: p["metadata"]["uid"]
        for p in await world.pods(**{"matrixorigin.io/component": "LogSet"})
    }


async def _failover(world: World) -> dict[str, object]:
    return dict(condition(await world.get(r.LOGSETS, "mo"), "Failover"))


async def test_a_lost_store_is_replaced_and_only_that_one(world: World, operator: OperatorRunner) -> None:
    await world.apply(_manifest(world))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    before = await _uids(world)
    never_ready = FailureRule("NeverReady", name="mo-log-1", namespace=world.namespace)
    await world.set_simulator_rules(RuleSet(rules=[never_ready]))
    await world.kubectl("delete", "pod", "mo-log-1", "--wait=false")  # restart it under the rule

    await eventually(
        lambda: _failover_is(world, "StoresDown"), timeout=30, message="the store is reported down"
    )
    first = (await _uids(world)).get("mo-log-1")  # None: between its deletion and its next pod

    async def replaced() -> bool:
        return (await _uids(world)).get("mo-log-1") not in (None, first)

    await eventually(replaced, timeout=30, message="the lost store's pod is replaced")
    events = await world.kubectl("get", "events", "--field-selector", "reason=StoreLost", "-o", "yaml")
    assert "mo-log-1" in events.stdout, "a StoreLost event names the store"
    after = await _uids(world)
    assert after["mo-log-0"] == before["mo-log-0"] and after["mo-log-2"] == before["mo-log-2"], (
        "only the lost one"
    )
    failover = await _failover(world)
    assert failover.get("status") == "False", f"the replaced store is still down: {failover}"

    await world.set_simulator_rules(RuleSet())
    await eventually(
        lambda: _failover_is(world, "NoLostStores"), timeout=60, message="the replaced store is back and up"
    )
    await world.wait_settled(r.LOGSETS, "mo")


async def test_a_lost_majority_is_reported_not_acted_on(world: World, operator: OperatorRunner) -> None:
    await world.apply(_manifest(world))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    await world.set_simulator_rules(
        RuleSet(
            rules=[FailureRule("NeverReady", name=f"mo-log-{i}", namespace=world.namespace) for i in (1, 2)]
        )
    )
    for pod in ("mo-log-1", "mo-log-2"):
        await world.kubectl("delete", "pod", pod, "--wait=false")
    await asyncio.sleep(1)
    lost = await _uids(world)

    # HAKeeper has lost its quorum: it cannot even say which stores are down; the
    # LogSet reports that, and no pod is deleted however long it lasts.
    async def reported() -> bool:
        ls = await world.get(r.LOGSETS, "mo")
        hakeeper = condition(ls, "HAKeeper")
        return hakeeper.get("status") == "False" and (await _failover(world)).get("reason") == "NoQuorum"

    await eventually(reported, timeout=30, message="the LogSet reports HAKeeper without a quorum")
    await asyncio.sleep(5)  # longer than storeFailureTimeout
    assert await _uids(world) == lost, "no pod of a log service without a quorum is replaced"
    cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo")
    assert condition(cluster, "Ready")["reason"] == "LogServiceNotReady"


async def _failover_is(world: World, reason: str) -> bool:
    return (await _failover(world)).get("reason") == reason
