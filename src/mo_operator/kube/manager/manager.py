"""The manager: starts the shared informers, then each controller once the
caches it reads have synced (controller-runtime's order: a controller of few
kinds need not wait for the largest list) — only while leading when leader
election is on — serves the probes and metrics, and shuts down gracefully
(in-flight reconciles finish within a timeout, the lease is released).

A stop request is honoured at every stage, including the ones that may last
forever (``before_start`` hooks waiting for the API to serve what the
informers watch, caches that cannot sync, campaigning for the lease): a
process told to stop by its pod's SIGTERM must not wait out the grace period
and be killed."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..controller.controller import Controller
from ..healthz.probes import ProbeServer
from ..leaderelection.leader import LeaderElector
from ..memory.collector import long_lived_frozen

log = logging.getLogger(__name__)


class Informers(Protocol):
    """Every informer of the manager: started together, ready when all have synced
    (each controller waits for its own, ``Controller.wait_synced``)."""

    async def start(self) -> None: ...

    def has_synced(self) -> bool: ...

    async def stop(self) -> None: ...


@dataclass
class Manager:
    informers: Informers
    controllers: list[Controller] = field(default_factory=list)
    elector: LeaderElector | None = None
    probes: ProbeServer | None = None
    shutdown_timeout: float = 15.0
    """Seconds in-flight reconciles get to finish: with the Event flush and the
    lease release after it, well within a pod's default 30 s grace period."""
    on_leading: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    before_start: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Awaited in order once the probes serve and before the informers start,
    e.g. until the API server serves the resources they watch: readiness stays
    false meanwhile, and a stop request ends the wait."""
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    lost_leadership: bool = False

    def add(self, controller: Controller) -> None:
        self.controllers.append(controller)

    def request_stop(self) -> None:
        self._stop.set()

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)

    async def run(self) -> None:
        """Run until stopped (or, when leader election is on, until leadership is lost)."""
        if self.probes is not None:
            self.probes.add_readiness_check(
                "informers", lambda: (self.informers.has_synced(), "caches synced")
            )
            if self.elector is not None:
                elector = self.elector
                self.probes.add_readiness_check(
                    "leader", lambda: (True, "leading" if elector.is_leader else "standby")
                )
            await self.probes.start()
        try:
            with long_lived_frozen():
                await self._run_until_stopped()
        finally:
            await self.informers.stop()
            if self.probes is not None:
                await self.probes.stop()

    async def _run_until_stopped(self) -> None:
        if not await self._unless_stopped(self._prepare()):
            return
        if self.elector is None:
            await self._lead_until_stopped()
        else:
            leading = asyncio.create_task(self.elector.run(self._lead_until_stopped))
            stop = asyncio.create_task(self._stop.wait())
            try:
                done, _ = await asyncio.wait({leading, stop}, return_when=asyncio.FIRST_COMPLETED)
                if leading in done and not self._stop.is_set():
                    self.lost_leadership = True
            finally:  # also when run() itself is cancelled: never leave the elector behind
                leading.cancel()
                stop.cancel()
                await asyncio.gather(leading, stop, return_exceptions=True)

    async def _prepare(self) -> None:
        for hook in self.before_start:
            await hook()
        await self.informers.start()

    async def _unless_stopped(self, work: Awaitable[None]) -> bool:
        """Await ``work`` unless a stop is requested first (then cancel it and
        return False)."""
        task = asyncio.ensure_future(work)
        stop = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in (task, stop):
                t.cancel()
            await asyncio.gather(task, stop, return_exceptions=True)
        if task.cancelled():
            log.info("stopped before the informers started")
            return False
        task.result()  # raises what the hooks or the informers raised
        return True

    async def _lead_until_stopped(self) -> None:
        starting = [
            asyncio.create_task(self._start_when_synced(c), name=f"start-{c.name}") for c in self.controllers
        ]
        try:
            for hook in self.on_leading:
                await hook()
            await self._stop.wait()
        finally:
            for task in starting:
                task.cancel()
            await asyncio.gather(*starting, return_exceptions=True)
            await asyncio.gather(*(c.stop(self.shutdown_timeout) for c in self.controllers))
            log.info("controllers stopped")

    async def _start_when_synced(self, controller: Controller) -> None:
        while not controller.has_synced():
            try:
                async with asyncio.timeout(5.0):
                    await controller.wait_synced()
            except TimeoutError:
                log.info("controller %s waiting for its caches to sync", controller.name)
        controller.start()
        log.info("controller %s started: its caches synced", controller.name)
