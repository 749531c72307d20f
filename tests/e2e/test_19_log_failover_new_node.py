"""A log store lost with its node (MISSION scenario 11): the log volumes are local,
each pinned to the node it was made on; when a node goes away for good, its store's
pod comes back Pending (its volume cannot follow it), so after ``storeFailureTimeout``
failover replaces the store with a fresh volume on another node, and the log service
keeps its Raft quorum throughout. With failover off, or ``failedPodStrategy: Orphan``,
nothing is deleted and the LogSet says what a person must do. A zonal volume whose
zone has lost its nodes is replaced the same way, once HAKeeper has removed the
store's replicas: an empty disk never rejoins under a UUID HAKeeper lists."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shlex
from collections.abc import AsyncIterator
from typing import Any

from mo_devkit.localcluster.simulator.config import PROVISIONER
from mo_devkit.localcluster.simulator.decisions.volumes import TOPOLOGY_KEY_PARAMETER
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OPERATOR_SETTINGS, OperatorRunner, World, condition, eventually

Obj = dict[str, Any]
LOCAL_CLASS = "e2e-local-pinned"
"""Volumes made on the node their first pod is scheduled to, and usable only there."""
ZONAL_CLASS = "e2e-zonal"
"""Volumes made in the zone of the node their first pod is scheduled to, usable anywhere there."""
ZONE = "topology.kubernetes.io/zone"
LOST = "mo-log-1"
CLAIM = f"mo-data-{LOST}"


async def _cluster_on_local_volumes(world: World, storage_class: str = LOCAL_CLASS, **log_spec: Any) -> None:
    made: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": storage_class},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
    }
    if storage_class == ZONAL_CLASS:
        made["parameters"] = {TOPOLOGY_KEY_PARAMETER: ZONE}  # immutable: only ever this class's
    await world.client.apply(made, resource=r.STORAGECLASSES, force=True)
    manifest = world.cluster_manifest("mo")
    log = manifest["spec"]["logService"]
    log["volume"]["storageClassName"] = storage_class
    log["storeFailureTimeout"] = "3s"
    log["topologySpread"] = ["kubernetes.io/hostname"]  # one store per node
    log.update(log_spec)
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)


async def _node_of(world: World, pod: str) -> str:
    found = await world.get(r.PODS, pod)
    assert found is not None
    return str(found["spec"]["nodeName"])


async def _uid(world: World, res: Any, name: str) -> str | None:
    found = await world.get(res, name)
    return None if found is None else str(found["metadata"]["uid"])


async def _remove_node(world: World, node: str) -> None:
    """The machine is gone: its Node is deleted and its pods with it (what the pod
    garbage collector does, at once here instead of after its quarantine, and as it
    does without waiting: a pod already gone may be back under its name, which
    kubectl's wait would then wait on)."""
    simulator = world.cluster.simulator
    assert simulator is not None
    await simulator.remove_node(node)
    for pod in await world.list(r.PODS):
        if pod["spec"].get("nodeName") == node:
            await world.kubectl(
                "delete",
                "pod",
                pod["metadata"]["name"],
                "--force",
                "--grace-period=0",
                "--ignore-not-found",
                "--wait=false",
            )


async def _failover(world: World) -> dict[str, Any]:
    return dict(condition(await world.get(r.LOGSETS, "mo"), "Failover"))


@contextlib.asynccontextmanager
async def _quorum_samples(world: World) -> AsyncIterator[list[int]]:
    """How many members of the log service's Raft group serve, sampled until the block ends."""
    samples: list[int] = []
    mo = world.cluster.mo
    assert mo is not None

    async def sample() -> None:
        while True:
            hakeeper = mo.hakeeper(world.namespace, "mo")
            if hakeeper is not None and hakeeper.bootstrapped:
                samples.append(len(hakeeper.live_members))
            await asyncio.sleep(0.05)

    task = asyncio.create_task(sample())
    try:
        yield samples
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_store_lost_with_its_node_is_replaced_on_another_node(
    world: World, operator: OperatorRunner
) -> None:
    await _cluster_on_local_volumes(world)
    gone = await _node_of(world, LOST)
    old_claim = await _uid(world, r.PVCS, CLAIM)
    async with _quorum_samples(world) as quorum:
        await _remove_node(world, gone)

        async def replaced() -> bool:
            claim = await world.get(r.PVCS, CLAIM)
            return claim is not None and claim["metadata"]["uid"] != old_claim

        await eventually(replaced, timeout=60, message="the lost store gets a fresh volume")
        await world.wait_settled(r.LOGSETS, "mo", timeout=60)
        await eventually(
            lambda: _failover_is(world, "NoLostStores"), timeout=30, message="failover reports no lost store"
        )
        mo = world.cluster.mo
        assert mo is not None
        hakeeper = mo.hakeeper(world.namespace, "mo")
        assert hakeeper is not None

        async def three_members() -> bool:
            return len(hakeeper.members) == 3 and len(hakeeper.live_members) == 3

        await eventually(three_members, timeout=30, message="HAKeeper has three serving log stores again")
    assert await _node_of(world, LOST) != gone, "the replacement runs on another node"
    assert quorum and min(quorum) >= 2, f"the quorum never fell below 2 (lowest: {min(quorum or [0])})"
    events = await world.kubectl("get", "events", "--field-selector", "reason=StoreLost", "-o", "yaml")
    assert f"{LOST} gets a new volume" in events.stdout and gone in events.stdout
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)


async def test_with_failover_off_a_lost_store_is_only_reported(
    world: World, operator_runner: OperatorRunner
) -> None:
    await operator_runner.start(settings=dataclasses.replace(OPERATOR_SETTINGS, failover=False))
    await _cluster_on_local_volumes(world)
    gone = await _node_of(world, LOST)
    old_claim = await _uid(world, r.PVCS, CLAIM)
    await _remove_node(world, gone)

    await eventually(
        lambda: _failover_is(world, "ActionRequired"), timeout=60, message="the lost store is reported"
    )
    events = await world.kubectl("get", "events", "--field-selector", "reason=StoreLost", "-o", "yaml")
    assert "--no-failover" in events.stdout, "a Warning Event says so too"
    message = (await _failover(world))["message"]
    assert "--no-failover" in message and f"delete pvc {CLAIM}" in message and f"delete pod {LOST}" in message
    assert await _uid(world, r.PVCS, CLAIM) == old_claim, "its volume is kept"
    pod = await world.get(r.PODS, LOST)
    assert pod is not None and not pod["metadata"].get("deletionTimestamp"), "its pod is kept"


async def test_orphan_says_what_to_do_and_doing_it_replaces_the_store(
    world: World, operator: OperatorRunner
) -> None:
    await _cluster_on_local_volumes(world, failedPodStrategy="Orphan")
    gone = await _node_of(world, LOST)
    old_claim = await _uid(world, r.PVCS, CLAIM)
    await _remove_node(world, gone)

    await eventually(
        lambda: _failover_is(world, "ActionRequired"), timeout=60, message="the lost store is reported"
    )
    message = (await _failover(world))["message"]
    assert "failedPodStrategy is Orphan" in message
    assert await _uid(world, r.PVCS, CLAIM) == old_claim, "nothing deleted automatically"
    pod = await world.get(r.PODS, LOST)
    assert pod is not None and pod["metadata"]["labels"].get(labels.ACTION_REQUIRED) == "True"
    events = await world.kubectl("get", "events", "--field-selector", "reason=StoreLost", "-o", "yaml")
    assert f"delete pvc {CLAIM}" in events.stdout

    # A person runs what the message says, and the store comes back on a fresh volume.
    for command in message.split("To replace them: ", 1)[1].split("; "):
        for step in command.split(" && "):
            words = shlex.split(step)
            assert words[0] == "kubectl"
            await world.kubectl(*words[1:])
    await world.wait_settled(r.LOGSETS, "mo", timeout=60)
    assert await _uid(world, r.PVCS, CLAIM) not in (None, old_claim)
    await eventually(
        lambda: _failover_is(world, "NoLostStores"), timeout=30, message="failover reports no lost store"
    )


async def _zone_of(world: World, claim: str) -> str:
    found = await world.get(r.PVCS, claim)
    assert found is not None
    pv = await world.client.get(r.PERSISTENT_VOLUMES, found["spec"]["volumeName"])
    [term] = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    [expression] = term["matchExpressions"]
    assert expression["key"] == ZONE
    return str(expression["values"][0])


async def test_a_store_whose_zone_lost_its_nodes_gets_a_new_volume_once_hakeeper_dropped_it(
    world: World, operator: OperatorRunner
) -> None:
    """One node a zone here: the zone of mo-log-1's volume goes with its node. HAKeeper
    removes the store's replicas well after it shows it down, so failover must wait
    for it: the simulated MatrixOne turns a listed member back on an empty disk into
    a store that never serves again (and a fault), which this test would see."""
    mo = world.cluster.mo
    assert mo is not None
    for node in sorted(mo_nodes(world)):
        await world.kubectl("label", "node", node, f"{ZONE}=zone-{node}")
    await _cluster_on_local_volumes(world, ZONAL_CLASS, storeFailureTimeout="2s")
    gone = await _node_of(world, LOST)
    zone = await _zone_of(world, CLAIM)
    assert zone == f"zone-{gone}"
    old_claim = await _uid(world, r.PVCS, CLAIM)
    mo.model.settings.removal_delay = 6.0  # HAKeeper drops the store's replicas 7s after it is gone
    reasons: list[str] = []
    async with _quorum_samples(world) as quorum:
        await _remove_node(world, gone)

        async def replaced() -> bool:
            reasons.append(str((await _failover(world)).get("reason")))
            claim = await world.get(r.PVCS, CLAIM)
            return claim is not None and claim["metadata"]["uid"] != old_claim

        await eventually(replaced, timeout=60, message="the lost store gets a fresh volume")
        hakeeper = mo.hakeeper(world.namespace, "mo")
        assert hakeeper is not None

        async def three_members() -> bool:
            return len(hakeeper.members) == 3 and len(hakeeper.live_members) == 3

        await eventually(three_members, timeout=30, message="HAKeeper has three serving log stores again")
        await world.wait_settled(r.LOGSETS, "mo", timeout=60)
    assert hakeeper.faults == [], "no store came back empty under a UUID HAKeeper listed"
    assert "WaitingForHAKeeper" in reasons, (
        f"failover waited for HAKeeper (reasons seen: {sorted(set(reasons))})"
    )
    assert await _zone_of(world, CLAIM) != zone, "the new volume is in a zone with nodes"
    assert quorum and min(quorum) >= 2, f"the quorum never fell below 2 (lowest: {min(quorum or [0])})"
    listed = await world.kubectl("get", "events", "--field-selector", "reason=StoreLost", "-o", "json")
    said = [e["message"] for e in json.loads(listed.stdout)["items"]]
    waited = f"{LOST} gets a new volume ({CLAIM} pinned to zone {zone}, which has no schedulable Ready node)"
    assert any(
        f"waiting for HAKeeper; {waited} once HAKeeper no longer lists its replicas" in m for m in said
    ), said
    assert any(m.endswith(f"replacing; {waited}") for m in said), said
    await eventually(
        lambda: _failover_is(world, "NoLostStores"), timeout=30, message="failover reports no lost store"
    )


def mo_nodes(world: World) -> set[str]:
    """The simulated nodes (on a real API server, the simulator's own)."""
    simulator = world.cluster.simulator
    assert simulator is not None
    return set(simulator.config.node_names())


async def _failover_is(world: World, reason: str) -> bool:
    return (await _failover(world)).get("reason") == reason
