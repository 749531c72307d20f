"""The manager honours a stop request at the stages that may last forever:
a ``before_start`` hook waiting for the API to serve what the informers
watch, and caches that never sync. (SIGTERM to ``mo-operator run`` used to
be ignored until the caches synced, which without our CRDs was never.)"""

from __future__ import annotations

import asyncio

import pytest

from mo_operator.kube.manager.manager import Manager

from .fakes import SyncedByEvent


class Informers(SyncedByEvent):
    """Informers that sync only when told to."""

    def __init__(self) -> None:
        self.started = False
        self.stopped = False
        self.synced = asyncio.Event()

    async def start(self) -> None:
        self.started = True

    async def stop(self) -> None:
        self.stopped = True


async def test_a_stop_ends_the_wait_for_caches_that_never_sync() -> None:
    informers = Informers()
    manager = Manager(informers)
    running = asyncio.create_task(manager.run())
    while not informers.started:
        await asyncio.sleep(0)
    manager.request_stop()
    await asyncio.wait_for(running, 1)
    assert informers.stopped


async def test_before_start_hooks_run_first_and_a_stop_ends_them() -> None:
    informers = Informers()
    hook_started = asyncio.Event()
    hook_cancelled = False

    async def wait_for_the_api() -> None:
        nonlocal hook_cancelled
        hook_started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            hook_cancelled = True
            raise

    manager = Manager(informers, before_start=[wait_for_the_api])
    running = asyncio.create_task(manager.run())
    await hook_started.wait()
    assert not informers.started
    manager.request_stop()
    await asyncio.wait_for(running, 1)
    assert hook_cancelled and not informers.started


async def test_a_failing_hook_ends_the_run_with_its_error() -> None:
    async def broken() -> None:
        raise RuntimeError("discovery exploded")

    manager = Manager(Informers(), before_start=[broken])
    with pytest.raises(RuntimeError, match="discovery exploded"):
        await asyncio.wait_for(manager.run(), 1)
