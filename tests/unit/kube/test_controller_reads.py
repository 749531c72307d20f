"""A controller starts once the caches it watches and declares as read have
synced, not once every cache of the manager has; a reconcile reading a cache
that has not synced, or (strict) one its controller does not declare, is
requeued instead of acting on it."""

from __future__ import annotations

import asyncio
from typing import Any

from mo_devkit.testing.runner import CONTROLLER_LOG, UndeclaredReads
from mo_devkit.testing.waiting import eventually
from mo_operator.kube.cache.reads import check_read
from mo_operator.kube.controller.controller import Controller, Request
from mo_operator.kube.manager.manager import Manager

from .fakes import SyncedByEvent


class Cache(SyncedByEvent):
    """An event source that syncs when told to."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.synced = asyncio.Event()
        self.handlers: list[Any] = []

    def add_event_handler(self, on_add: Any, on_update: Any, on_delete: Any) -> None:
        self.handlers.append(on_add)

    def add(self, name: str) -> None:
        for on_add in self.handlers:
            on_add({"metadata": {"name": name, "namespace": "ns"}})


class Informers:
    """The manager's informers: started at once, synced when every cache is."""

    def __init__(self, *caches: Cache) -> None:
        self.caches = caches

    async def start(self) -> None:
        return None

    async def wait_synced(self, timeout: float | None = None) -> bool:
        return all([await c.wait_synced(timeout) for c in self.caches])

    def has_synced(self) -> bool:
        return all(c.has_synced() for c in self.caches)

    async def stop(self) -> None:
        return None


def reader(seen: list[Request], *reads: Cache) -> Any:
    async def reconcile(req: Request) -> None:
        for cache in reads:
            check_read(cache, cache.name)
        seen.append(req)

    return reconcile


async def test_each_controller_starts_once_its_own_caches_synced() -> None:
    small, read, large = Cache("small"), Cache("read"), Cache("large")
    first = Controller("first", reader([], read)).reads(read)
    first.for_(small)
    second = Controller("second", reader([]))
    second.for_(large)
    manager = Manager(Informers(small, read, large), [first, second])
    running = asyncio.create_task(manager.run())
    try:
        small.synced.set()
        await asyncio.sleep(0.05)
        assert first.started_at is None, "started before the cache it reads synced"
        read.synced.set()
        await eventually(lambda: first.started_at is not None, timeout=5)
        assert second.started_at is None
        large.synced.set()
        await eventually(lambda: second.started_at is not None, timeout=5)
    finally:
        manager.request_stop()
        await asyncio.wait_for(running, 5)


async def test_a_read_of_a_cache_that_has_not_synced_is_requeued_until_it_has() -> None:
    source, other = Cache("source"), Cache("other")
    source.synced.set()
    seen: list[Request] = []
    controller = Controller("c", reader(seen, other))
    controller.for_(source)
    controller.start()
    try:
        source.add("a")
        await eventually(lambda: controller.reconciles >= 2, timeout=5)
        assert seen == []
        other.synced.set()
        await eventually(lambda: seen == [Request("ns", "a")], timeout=5)
    finally:
        await controller.stop()


async def test_strict_reads_refuse_a_cache_the_controller_does_not_declare() -> None:
    source, undeclared = Cache("source"), Cache("undeclared")
    source.synced.set()
    undeclared.synced.set()
    seen: list[Request] = []
    controller = Controller("c", reader(seen, undeclared))
    controller.for_(source)
    controller.strict_reads = True
    reported = UndeclaredReads()
    CONTROLLER_LOG.addHandler(reported)
    controller.start()
    try:
        source.add("a")
        await eventually(lambda: controller.reconciles >= 1, timeout=5)
        assert seen == []
    finally:
        await controller.stop()
        CONTROLLER_LOG.removeHandler(reported)
    assert reported.reads[:1] == ["controller c read undeclared, which it does not declare"], (
        "the test kit's runner names the read, to fail the scenario by it"
    )
    declared = Controller("d", reader(seen, undeclared)).reads(undeclared)
    declared.for_(source)
    declared.strict_reads = True
    declared.start()
    try:
        source.add("a")
        await eventually(lambda: seen == [Request("ns", "a")], timeout=5)
    finally:
        await declared.stop()
