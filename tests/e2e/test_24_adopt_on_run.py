"""Scenario 12, by the running operator: a cluster the Go operator built
(OpenKruise workloads) is taken over by ``mo-operator run`` itself once opted
in, with no loss of quorum, no lost data and no client outage; not opted in,
nothing is taken over and each set says how to opt in.

The client probe of test_23 samples every 100 ms; beside it, the sets'
order is watched: the Kruise workloads go log service, TN, CN, proxy, and
never two sets are under way at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from dataclasses import dataclass, field

import pytest
from lightkube.resources.core_v1 import Event

from mo_operator.controllers.adoption.guard import CONDITION as ADOPTED
from mo_operator.controllers.adoption.guard import REFUSED
from mo_operator.controllers.adoption.optin import ADOPT_ANNOTATION
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource

from .adoption_probe import (
    SET_OBJECTS,
    OperatorChaos,
    Probe,
    assert_claims_kept_and_resync_quiet,
    assert_ours,
    claim_uids,
    sample_forever,
    set_states,
)
from .harness import OperatorRunner, World, condition, eventually
from .upstream_cluster import CLONESETS, KRUISE_STATEFULSETS, build

EVENTS = Resource.of(Event)
SEED = int(os.environ.get("MO_TEST_CHAOS_SEED", "20261126"))
WORKLOADS: tuple[tuple[Resource, str], ...] = (
    (KRUISE_STATEFULSETS, "mo-log"),
    (KRUISE_STATEFULSETS, "mo-dn"),
    (CLONESETS, "mo-tp-cn"),
    (CLONESETS, "mo-proxy"),
)
"""The Go operator's workloads of SET_OBJECTS, in the same order."""


@dataclass
class Order:
    """Which sets are under way (Kruise workload gone, not yet ``Adopted=True``), every 100 ms."""

    world: World
    released: list[str] = field(default_factory=list)
    """Kruise workloads, in the order they were seen gone."""
    overlaps: list[str] = field(default_factory=list)

    async def run(self) -> None:
        await sample_forever(self.sample)

    async def sample(self) -> None:
        under_way = []
        for (res, name), (workload_res, workload) in zip(SET_OBJECTS, WORKLOADS, strict=True):
            if await self.world.get(workload_res, workload) is not None:
                continue
            if workload not in self.released:
                self.released.append(workload)
            obj = await self.world.get(res, name)
            if condition(obj, ADOPTED).get("status") != "True":
                under_way.append(f"{res.kind} {name}")
        if len(under_way) > 1:
            self.overlaps.append(", ".join(under_way))


async def _annotate_cluster(world: World) -> None:
    await world.client.patch(
        r.MATRIXONE_CLUSTERS,
        "mo",
        {"metadata": {"annotations": {ADOPT_ANNOTATION: "kruise"}}},
        world.namespace,
    )


async def _taken_over(world: World) -> bool:
    for res, name in SET_OBJECTS:
        found = condition(await world.get(res, name), ADOPTED)
        if (found.get("status"), found.get("reason")) != ("True", "TakenOver"):
            return False
    return all([await world.get(res, name) is None for res, name in WORKLOADS])


async def test_without_opt_in_nothing_is_taken_over_and_each_set_says_how(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner)
    await operator_runner.start()

    async def all_held() -> list[dict[str, object]] | None:
        found = [condition(await world.get(res, name), ADOPTED) for res, name in SET_OBJECTS]
        return found if all(c.get("reason") == "HeldByKruise" for c in found) else None

    held = await eventually(all_held, timeout=60, message="every set says Kruise holds it")
    for found in held:
        message = str(found["message"])
        assert f'{ADOPT_ANNOTATION}="kruise"' in message and "--adopt-kruise" in message, message
        assert "mo-operator adopt" in message, message
    await operator_runner.quiet()
    for res, name in WORKLOADS:
        assert await world.get(res, name) is not None, f"{name} was taken over without an opt-in"
    assert await world.get(r.STATEFULSETS, "mo-log") is None
    assert await world.get(r.DEPLOYMENTS, "mo-proxy") is None


async def test_an_unsafe_set_is_refused_with_a_warning_and_released_once_safe(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner)
    # A reserved ordinal where a store runs (mo-log-1): Kruise would run 0, 2, 3, so the pods are not where it says.
    await world.client.patch(
        KRUISE_STATEFULSETS, "mo-log", {"spec": {"reserveOrdinals": [1]}}, world.namespace
    )
    await _annotate_cluster(world)
    await operator_runner.start()

    async def refused() -> dict[str, object] | None:
        found = condition(await world.get(r.LOGSETS, "mo"), ADOPTED)
        return dict(found) if found.get("reason") == REFUSED else None

    found = await eventually(refused, timeout=60, message="the LogSet says why it is not taken over")
    assert "reserveOrdinals [1]" in str(found["message"]), found

    async def warned() -> list[dict[str, object]]:
        events = (await world.client.list(EVENTS, world.namespace)).items
        return [
            e
            for e in events
            if e.get("reason") == REFUSED
            and e.get("type") == "Warning"
            and (e.get("involvedObject") or {}).get("kind") == "LogSet"
        ]

    await eventually(warned, timeout=30, message="a Warning Event says the takeover is refused")
    queued = condition(await world.get(r.DNSETS, "mo"), ADOPTED)
    assert "LogSet mo is taken over first" in str(queued.get("message")), queued
    for res, name in WORKLOADS:
        assert await world.get(res, name) is not None, f"{name} was released while the LogSet is refused"

    await world.client.patch(
        KRUISE_STATEFULSETS, "mo-log", {"spec": {"reserveOrdinals": None}}, world.namespace
    )

    async def released() -> bool:
        return await world.get(KRUISE_STATEFULSETS, "mo-log") is None

    await eventually(released, timeout=60, message="the LogSet is released once safe")


@pytest.mark.timeout(360)
async def test_an_annotated_cluster_is_taken_over_by_the_running_operator(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner)
    before = await claim_uids(world)
    mo = world.cluster.mo
    assert mo is not None and mo.open_sessions(world.namespace, "mo", 20) == 20
    await _annotate_cluster(world)
    probe, order = Probe(world), Order(world)
    tasks = [asyncio.create_task(probe.run()), asyncio.create_task(order.run())]
    try:
        await operator_runner.start()
        await eventually(
            lambda: _taken_over(world), timeout=240, interval=0.5, message="every set is taken over"
        )
    except AssertionError as e:
        raise AssertionError(f"{e}\n{await set_states(world)}") from e
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    probe.assert_no_outage()
    assert order.released == [name for _, name in WORKLOADS], order.released
    assert order.overlaps == [], order.overlaps[:5]

    await assert_ours(world)
    await assert_claims_kept_and_resync_quiet(world, operator_runner, before)


@pytest.mark.timeout(420)
async def test_the_takeover_on_run_survives_sigkills_of_the_operator(
    world: World, operator_runner: OperatorRunner
) -> None:
    """Opted in by the operator's flag this time; killed at seeded moments of the takeover."""
    await build(world, operator_runner)
    before = await claim_uids(world)
    probe, order = Probe(world), Order(world)
    tasks = [asyncio.create_task(probe.run()), asyncio.create_task(order.run())]
    chaos = OperatorChaos(world, operator_runner, random.Random(SEED), kills=4, args=("--adopt-kruise",))
    chaos.start()
    try:
        await eventually(
            lambda: _taken_over(world), timeout=300, interval=0.5, message="every set is taken over"
        )
    except AssertionError as e:
        raise AssertionError(f"{e}\n{await set_states(world)}") from e
    finally:
        await chaos.stop()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    assert chaos.kills == 4, f"the operator was killed only {chaos.kills} times"
    assert probe.failures == [], probe.failures[:10]
    assert not probe.went_undrained, f"CNs removed without a drain: {probe.went_undrained}"
    assert order.released == [name for _, name in WORKLOADS], order.released
    assert order.overlaps == [], order.overlaps[:5]

    await operator_runner.start()
    await assert_ours(world)
    await assert_claims_kept_and_resync_quiet(world, operator_runner, before)
