"""SIGTERM and SIGINT for the whole life of a command.

A command that installs its handlers late is killed outright by a SIGTERM
that comes earlier (no cleanup), and one that installs them where nothing
waits on them ignores SIGTERM until then: a pod then waits out its grace
period and is SIGKILLed. So each long-running command installs ``Shutdown``
first, and every stage answers it:

- a stage that has its own graceful stop (the manager: in-flight reconciles
  finish, the lease is released) registers it with ``on_signal``;
- a stage that has none (API calls during setup, starting servers, the
  demo's progress display) runs under ``interruptible``, which cancels it
  and waits for its cleanup;
- a second signal cancels the main task outright: whoever sends it does not
  want to wait for the graceful stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

from . import entry

log = logging.getLogger(__name__)

T = TypeVar("T")
SIGNALS = (signal.SIGTERM, signal.SIGINT)


class Interrupted(Exception):
    """A stage run by ``Shutdown.interruptible`` was cancelled by a signal."""


class Shutdown:
    def __init__(self) -> None:
        self.requested = asyncio.Event()
        self.received: signal.Signals | None = None
        self._callbacks: list[Callable[[], None]] = []
        self._main: asyncio.Task[object] | None = None

    def install(self) -> Shutdown:
        """Handle SIGTERM and SIGINT from now on; the current task is the one a
        second signal cancels. The handlers go with the event loop. A signal the
        entry point's handlers took before is acted on as if it came now."""
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        for sig in SIGNALS:
            loop.add_signal_handler(sig, self._received, sig)
        early = entry.received()
        if early is not None:
            self._received(early)
        return self

    def on_signal(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the first signal (at once if it came already)."""
        self._callbacks.append(callback)
        if self.requested.is_set():
            callback()

    def _received(self, sig: signal.Signals) -> None:
        if self.requested.is_set():
            log.warning("%s again: stopping without waiting for a graceful shutdown", sig.name)
            if self._main is not None:
                self._main.cancel()
            return
        log.info("%s received: shutting down", sig.name)
        self.received = sig
        self.requested.set()
        for callback in self._callbacks:
            callback()

    async def interruptible(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``'s result, unless a signal comes first: then it is
        cancelled, its cleanup awaited, and ``Interrupted`` raised."""
        work = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self.requested.wait())
        try:
            await asyncio.wait({work, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not work.done():
                work.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait({work, stop})
        if work.cancelled():
            raise Interrupted
        return work.result()
