"""Scenario 13: MatrixOne misbehaves. Its RPC refuses connections, stalls past the
deadline, answers garbage frames or ``ErrNotSupported``; meanwhile a cluster comes up
and its CN group scales in.

In each case the cluster comes as far as the Go operator would bring it (LogSet, TN
and their readiness need no call of the operator's; CNs need HAKeeper to put them to
work) and further where our own client is at fault (CN readiness then follows the
pods); a condition on the LogSet and the CNSet says which of the three cases it is,
naming the address, with one Warning Event when it turns to trouble; the scale-in
completes, by the drain timeout where MatrixOne cannot say a CN is empty; once
MatrixOne answers properly again the cluster finishes: every CN put to work, Ready,
nothing lost or restarted; and the operator's log holds no traceback loop.

The attached run (``MO_TEST_KUBECONFIG`` without ``KUBEBUILDER_ASSETS``) skips these:
the embedded and the real control planes prove the same thing.
"""

from __future__ import annotations

import json
import logging
import os

import pytest
from lightkube.resources.core_v1 import Event

from mo_devkit.testing import Shape, cluster_manifest, condition
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import labels, names

from .harness import REAL_KUBECONFIG, OperatorRunner, World, eventually

pytestmark = pytest.mark.skipif(
    bool(REAL_KUBECONFIG) and not os.environ.get("KUBEBUILDER_ASSETS"),
    reason="MatrixOne faults: run on the embedded and the real control plane, not again attached",
)

EVENTS = Resource.of(Event)
DRAIN_TIMEOUT = "4s"
UNREACHABLE = "MatrixOneUnreachable"
CLIENT_FAULT = "MatrixOneClientFault"


async def _scale(world: World, replicas: int) -> None:
    patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": replicas}]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))


async def _cn_pods(world: World) -> list[str]:
    return sorted(p["metadata"]["name"] for p in await world.pods(**{labels.INSTANCE: "mo-tp"}))


async def _uids(world: World, instance: str) -> set[str]:
    return {p["metadata"]["uid"] for p in await world.pods(**{labels.INSTANCE: instance})}


async def _warnings(world: World, name: str, reason: str) -> int:
    """How many Warning Events the object ``name`` got with ``reason`` (counted as recorded)."""
    events = (await world.client.list(EVENTS, world.namespace)).items
    return sum(
        int(e.get("count") or 1)
        for e in events
        if (e.get("involvedObject") or {}).get("name") == name and e.get("reason") == reason
    )


async def _hakeeper_reason(world: World, res: object, name: str) -> str:
    return str(condition(await world.get(res, name), "HAKeeper").get("reason") or "")


@pytest.mark.parametrize(
    ("bring_up", "scale_in", "trouble"),
    [("refuse", "stall", UNREACHABLE), ("garbage", "not_supported", CLIENT_FAULT)],
    ids=["unreachable: refused, then stalled", "client at fault: garbage, then ErrNotSupported"],
)
async def test_matrixone_misbehaving_holds_back_only_what_it_must(
    world: World, operator_runner: OperatorRunner, caplog: pytest.LogCaptureFixture, bring_up: str,
    scale_in: str, trouble: str,
) -> None:  # fmt: skip
    mo = world.cluster.mo
    assert mo is not None
    operator_runner.rpc_timeout = 1.0  # a stall costs a second a call, not the product's ten
    mo.faults.set(bring_up)
    await operator_runner.start()
    caplog.set_level(logging.INFO, logger="mo_operator")
    group = {
        "name": "tp",
        "replicas": 2,
        "scalingConfig": {
            "storeDrainEnabled": True,
            "minDelaySeconds": 0,
            "storeDrainTimeout": DRAIN_TIMEOUT,
        },
    }
    await world.apply(world.for_cluster(cluster_manifest("mo", Shape(log=1, tn=1, cn=2), cnGroups=[group])))

    # As far as upstream goes without the operator's calls: the log service and the TN.
    await world.wait_ready(r.LOGSETS, "mo", timeout=60)
    await world.wait_ready(r.DNSETS, "mo", timeout=60)
    address = names.discovery_address("mo", world.namespace)

    async def reported() -> bool:
        cnset = await world.get(r.CNSETS, "mo-tp")
        hakeeper = condition(cnset, "HAKeeper")
        return hakeeper.get("reason") == trouble and address in str(hakeeper.get("message"))

    await eventually(reported, timeout=60, message=f"the CNSet reports {trouble} naming {address}")
    assert await _hakeeper_reason(world, r.LOGSETS, "mo") == trouble
    cnset = await world.get(r.CNSETS, "mo-tp")
    if trouble == CLIENT_FAULT:  # the operator's fault never keeps a working CN out
        await world.wait_ready(r.CNSETS, "mo-tp", timeout=60)
    else:  # without HAKeeper no CN is put to work, as upstream's cnstore controller waits
        assert condition(cnset, "Ready").get("status") == "False"
    assert len(await _cn_pods(world)) == 2

    # Scale in while MatrixOne still misbehaves, another way: the drain ends by its timeout.
    mo.faults.clear()
    mo.faults.set(scale_in)
    kept = await _uids(world, "mo")
    await _scale(world, 1)
    await eventually(lambda: _one_left(world), timeout=60, message="scale-in completes by the drain timeout")

    # MatrixOne answers again: the cluster finishes, with nothing restarted.
    mo.faults.clear()

    async def answered() -> bool:
        cnset, logset = (
            await _hakeeper_reason(world, r.CNSETS, "mo-tp"),
            await _hakeeper_reason(world, r.LOGSETS, "mo"),
        )
        return (cnset, logset) == ("Answering", "Running")

    await eventually(answered, timeout=60, message="the LogSet and the CNSet see HAKeeper answer again")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    assert await _uids(world, "mo") == kept, "no log store or TN restarted"
    survivor = (await _cn_pods(world))[0]
    uuid = mo.store_uuid(world.namespace, survivor)
    assert uuid is not None
    await eventually(
        lambda: mo.open_sessions(world.namespace, "mo", 1) == 1,
        timeout=30,
        message="the CN left was put to work in HAKeeper: it takes sessions",
    )

    for name in ("mo", "mo-tp"):
        assert await _warnings(world, name, trouble) == 1, f"{name}: one Warning for the one transition"
    tracebacks = [r for r in caplog.records if r.exc_info is not None]
    assert len(tracebacks) <= 1, [r.getMessage() for r in tracebacks]


async def _one_left(world: World) -> bool:
    return len(await _cn_pods(world)) == 1
