"""Scenario 12, a Go-operator cluster whose log failover ran: the Go operator
replaced log store 0 by store 3 and keeps ordinal 0 in its Advanced
StatefulSet's ``reserveOrdinals``, so the stores are ``mo-log-1..3``.

``mo-operator adopt`` takes it over with the client probe of test_23 (every
100 ms: a ready proxy endpoint, a Working CN, a log quorum, never more than one
log or TN pod down), and keeps the stores where they are: no pod is ever made
at the reserved ordinal, every store keeps its name (its identity) and its
claim, our StatefulSet runs ordinals from 1, and the stores find each other
without the reserved one.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from mo_operator.cli.adopt import adopt
from mo_operator.controllers.common import resources as r
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component

from .adoption_probe import Probe, assert_claims_kept_and_resync_quiet, claim_uids, sample_forever
from .harness import OperatorRunner, World
from .upstream_cluster import KRUISE_STATEFULSETS, build

STORES = ("mo-log-1", "mo-log-2", "mo-log-3")


@dataclass
class LogPods:
    """The names of the log pods seen, every 100 ms."""

    world: World
    seen: set[str] = field(default_factory=set)

    async def run(self) -> None:
        await sample_forever(self.sample)

    async def sample(self) -> None:
        pods = await self.world.pods(**labels.sub_resource_labels(Component.LOG, "mo", self.world.namespace))
        self.seen.update(p["metadata"]["name"] for p in pods)


async def test_a_failed_over_log_set_is_taken_over_with_its_reserved_ordinal_kept(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner, reserved=(0,))
    kruise = await world.get(KRUISE_STATEFULSETS, "mo-log")
    assert kruise is not None and kruise["spec"]["reserveOrdinals"] == [0]
    claims = await claim_uids(world)
    assert {f"mo-data-{s}" for s in STORES} <= claims.keys(), sorted(claims)

    lines: list[str] = []
    assert await adopt(world.client, world.namespace, dry_run=True, echo=lines.append) == 0, lines
    assert any("ordinals [0] stay reserved" in line for line in lines), lines

    await operator_runner.start()
    probe, log_pods = Probe(world), LogPods(world)
    tasks = [asyncio.create_task(probe.run()), asyncio.create_task(log_pods.run())]
    try:
        lines.clear()
        assert await adopt(world.client, world.namespace, timeout=120, echo=print) == 0
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert probe.samples >= 20, f"the probe looked only {probe.samples} times"
    assert probe.failures == [], probe.failures[:10]
    assert not probe.went_undrained, f"CNs removed without a drain: {probe.went_undrained}"
    assert log_pods.seen == set(STORES), f"log pods seen during the takeover: {sorted(log_pods.seen)}"

    logset = await world.wait_settled(r.LOGSETS, "mo")
    assert logset["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] == "[0]"
    assert await world.get(KRUISE_STATEFULSETS, "mo-log") is None
    sts = await world.get(r.STATEFULSETS, "mo-log")
    assert sts is not None and sts["spec"].get("ordinals") == {"start": 1}, sts["spec"]
    pods = await world.pods(**labels.sub_resource_labels(Component.LOG, "mo", world.namespace))
    assert sorted(p["metadata"]["name"] for p in pods) == list(STORES)
    assert all(ref["kind"] == "StatefulSet" for p in pods for ref in p["metadata"]["ownerReferences"])
    gossip = await world.get(r.CONFIGMAPS, names.log_gossip_config_map_name("mo"))
    assert gossip is not None
    seeds = gossip["data"]["gossip.toml"]
    assert all(f"{s}.mo-log-headless" in seeds for s in STORES) and "mo-log-0." not in seeds, seeds
    await assert_claims_kept_and_resync_quiet(world, operator_runner, claims)
