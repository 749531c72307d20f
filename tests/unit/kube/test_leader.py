"""Leader election semantics (client-go tools/leaderelection): one leader at a
time, release on shutdown hands over at once, a leader that cannot renew
steps down before its lease expires, and the write fence."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest

from mo_operator.kube.leaderelection.leader import LeaderElectionConfig, LeaderElector, LeaseConflict

Obj = dict[str, Any]


class FakeLeases:
    def __init__(self) -> None:
        self.leases: dict[tuple[str, str], Obj] = {}
        self.rv = 0
        self.fail = False
        self.writes: list[str] = []

    async def get(self, namespace: str, name: str) -> Obj | None:
        if self.fail:
            raise ConnectionError("api down")
        lease = self.leases.get((namespace, name))
        return copy.deepcopy(lease) if lease else None

    async def create(self, namespace: str, lease: Obj) -> Obj:
        if self.fail:
            raise ConnectionError("api down")
        key = (namespace, lease["metadata"]["name"])
        if key in self.leases:
            raise LeaseConflict()
        self.rv += 1
        lease = copy.deepcopy(lease)
        lease["metadata"]["resourceVersion"] = str(self.rv)
        self.leases[key] = lease
        self.writes.append(lease["spec"]["holderIdentity"])
        return copy.deepcopy(lease)

    async def replace(self, namespace: str, lease: Obj) -> Obj:
        if self.fail:
            raise ConnectionError("api down")
        key = (namespace, lease["metadata"]["name"])
        if self.leases[key]["metadata"]["resourceVersion"] != lease["metadata"]["resourceVersion"]:
            raise LeaseConflict()
        self.rv += 1
        lease = copy.deepcopy(lease)
        lease["metadata"]["resourceVersion"] = str(self.rv)
        self.leases[key] = lease
        self.writes.append(lease["spec"]["holderIdentity"])
        return copy.deepcopy(lease)


def cfg(identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig(
        name="op", namespace="ns", identity=identity, lease_duration=0.8, renew_deadline=0.5, retry_period=0.1
    )


def test_config_requires_ordered_durations() -> None:
    with pytest.raises(ValueError):
        LeaderElectionConfig(name="a", namespace="b", identity="c", lease_duration=5, renew_deadline=10)


async def test_only_one_candidate_leads_and_release_hands_over_at_once() -> None:
    store = FakeLeases()
    leading: list[str] = []
    a, b = LeaderElector(store, cfg("a")), LeaderElector(store, cfg("b"))

    async def work(name: str) -> None:
        leading.append(name)
        await asyncio.Event().wait()

    ta = asyncio.create_task(a.run(lambda: work("a")))
    await asyncio.sleep(0.2)
    tb = asyncio.create_task(b.run(lambda: work("b")))
    await asyncio.sleep(0.5)
    assert leading == ["a"] and a.is_leader and not b.is_leader
    assert store.leases[("ns", "op")]["spec"]["holderIdentity"] == "a"
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    ta.cancel()
    async with asyncio.timeout(5):
        await asyncio.gather(ta, return_exceptions=True)  # a cancelled leader stops
    async with asyncio.timeout(5):
        while not b.is_leader:
            await asyncio.sleep(0.02)
    assert loop.time() - t0 < 0.5, "release lets the next candidate take over before expiry"
    assert leading == ["a", "b"]
    assert store.leases[("ns", "op")]["spec"]["leaseTransitions"] == 1
    tb.cancel()
    await asyncio.gather(tb, return_exceptions=True)


async def test_leader_that_cannot_renew_steps_down_before_expiry() -> None:
    store = FakeLeases()
    a = LeaderElector(store, cfg("a"))
    stopped = asyncio.Event()

    async def work() -> None:
        await asyncio.Event().wait()

    async def on_stop() -> None:
        stopped.set()

    task = asyncio.create_task(a.run(work, on_stop))
    await asyncio.sleep(0.2)
    assert a.may_write()
    loop = asyncio.get_running_loop()
    store.fail = True
    t0 = loop.time()
    await asyncio.wait_for(stopped.wait(), 2)
    assert loop.time() - t0 < 0.8, "stepped down before the lease could expire"
    assert not a.may_write() and not a.is_leader
    await task


async def test_write_fence_closes_when_the_renew_deadline_passes() -> None:
    now = [100.0]
    store = FakeLeases()
    a = LeaderElector(store, cfg("a"), clock=lambda: now[0])
    assert await a.try_acquire_or_renew()
    assert a.may_write()
    now[0] += 0.6  # frozen past the renew deadline (e.g. SIGSTOP)
    assert not a.may_write()


async def test_a_live_holder_is_respected_and_an_expired_one_replaced() -> None:
    now = [0.0]
    store = FakeLeases()
    a = LeaderElector(store, cfg("a"), clock=lambda: now[0])
    b = LeaderElector(store, cfg("b"), clock=lambda: now[0])
    assert await a.try_acquire_or_renew()
    assert not await b.try_acquire_or_renew()
    now[0] += 0.5
    assert not await b.try_acquire_or_renew(), "b observed the record only now: wait a full duration"
    now[0] += 0.9
    assert await b.try_acquire_or_renew()
    assert store.leases[("ns", "op")]["spec"]["holderIdentity"] == "b"
