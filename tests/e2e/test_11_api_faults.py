"""Issue 8's API faults during the scenarios: dropped watches, a forced 410
(the watch history expired), a silently stalled watch, a 429 storm and an
API server restarted from its data directory, injected at seeded random
moments while a cluster is created, scaled and reconfigured; everything
still converges, to the same end state as an undisturbed run.

The fault hooks exist only on the embedded API server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random

import pytest

from mo_operator.controllers.framework import resources as r

from .harness import REAL_KUBECONFIG, OperatorRunner, World, eventually
from .test_09_operator_kill import assert_clean_end_state

pytestmark = pytest.mark.skipif(
    REAL_KUBECONFIG is not None, reason="fault hooks exist only on the embedded API server"
)

SEED = int(os.environ.get("MO_TEST_CHAOS_SEED", "20261123"))
STALL_SECONDS = 3.0
"""The operator's stall bound here: a stalled watch must be noticed within the test.
It is only safe because this server then sends bookmarks far more often (below);
against kube-apiserver's one a minute it would restart every quiet watch."""


async def _inject(world: World, rng: random.Random, stop: asyncio.Event, done: list[str]) -> None:
    server = lambda: world.cluster.control_plane.server  # noqa: E731  (the restart replaces it)
    faults = ["drop", "expire", "stall", "storm", "restart"]
    order = [faults[i % len(faults)] for i in range(len(faults) * 3)]
    rng.shuffle(order)
    for fault in order:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), rng.uniform(0.5, 2.0))
        if stop.is_set():
            return
        if fault == "drop":
            server().store.drop_watchers()
        elif fault == "expire":
            server().store.expire_history()
            server().store.drop_watchers()
        elif fault == "stall":
            server().watch_settings.stalled = True
            await asyncio.sleep(rng.uniform(STALL_SECONDS + 0.5, STALL_SECONDS + 2.0))  # past the stall bound
            server().watch_settings.stalled = False
        elif fault == "storm":
            server().faults.fail_next(40, 429, retry_after=1)
        else:
            await world.restart_api_server()
        done.append(fault)


@pytest.mark.timeout(300)  # fifteen faults, API server restarts among them, and five waits to settle
async def test_api_faults_during_a_scenario_lose_nothing(
    world: World, operator_runner: OperatorRunner
) -> None:
    assert world.cluster.control_plane is not None
    world.cluster.control_plane.server.watch_settings.bookmark_interval = STALL_SECONDS / 6  # kept on restart
    await operator_runner.start(watch_stall_seconds=STALL_SECONDS)
    stop = asyncio.Event()
    done: list[str] = []
    injector = asyncio.create_task(_inject(world, random.Random(SEED), stop, done))
    try:
        tp = {"name": "tp", "replicas": 2, "scalingConfig": {"minDelaySeconds": 0}}
        await world.apply(world.cluster_manifest("mo", cnGroups=[tp], proxy={"replicas": 1}))
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
        for replicas in (3, 1, 2):
            patch = f'[{{"op":"replace","path":"/spec/cnGroups/0/replicas","value":{replicas}}}]'
            await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", patch)
            await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
        await world.kubectl("patch", "mo", "mo", "--type", "merge", "-p", '{"spec":{"version":"2.1.0"}}')
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
        await asyncio.wait_for(injector, 120)  # every fault happened while the cluster lived
    finally:
        stop.set()
        await asyncio.gather(injector, return_exceptions=True)
    assert sorted(set(done)) == ["drop", "expire", "restart", "stall", "storm"], done
    await assert_clean_end_state(world, {"tp": 2}, "2.1.0")


async def test_a_write_the_api_server_refuses_is_reported_then_cleared(
    world: World, operator: OperatorRunner
) -> None:
    """Every reconcile failure is visible: a write the API server refuses (here every
    Service, as an admission policy might) sets Synced=False, reason ReconcileError,
    with the server's message, and one Warning Event however often the retry fails
    the same way; once the writes go through, the cluster converges and Synced is
    True. (A set whose Services were refused on every retry said nothing, or even
    Synced=True.)"""
    assert world.cluster.control_plane is not None
    faults = world.cluster.control_plane.server.faults
    faults.refuse_writes("services", "Service is invalid: refused by policy")
    try:
        await world.apply(world.cluster_manifest("mo"))

        async def failing() -> dict[str, object] | None:
            logset = await world.get(r.LOGSETS, "mo")
            synced = next(
                (c for c in (logset or {}).get("status", {}).get("conditions", []) if c["type"] == "Synced"),
                {},
            )
            return synced if synced.get("reason") == "ReconcileError" else None

        synced = await eventually(failing, message="the LogSet says its reconciles fail")
        assert synced["status"] == "False" and "refused by policy" in synced["message"], synced
        await asyncio.sleep(3)  # several retries, each refused the same way
        events = await world.kubectl(
            "get",
            "events",
            "--field-selector",
            "reason=ReconcileError,involvedObject.kind=LogSet,involvedObject.name=mo",
            "-o",
            "json",
        )
        items = json.loads(events.stdout)["items"]
        assert len(items) == 1 and items[0]["type"] == "Warning" and items[0].get("count", 1) == 1, items
    finally:
        faults.refuse_writes("services", None)
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    logset = await world.get(r.LOGSETS, "mo")
    synced = next(c for c in logset["status"]["conditions"] if c["type"] == "Synced")
    assert synced["status"] == "True", synced
    assert cluster["status"]["phase"] == "Ready"
