"""An event loop in a thread of its own, for code under test whose CPU time must be
told apart from the benchmark's (``converged_load(own_thread=True)``).

Linux counts CPU time per thread (``pthread_getcpuclockid``), so what the loop runs
in that thread, and only that, is on its clock: every task, transport callback and
response parse of the code started in it, and the garbage collections its own
allocations set off. The benchmark's watcher and the user's creates stay on the main
thread's loop and clock. The two threads share the interpreter's lock, which costs
each a switch now and then but no CPU time charged to the other.
"""

from __future__ import annotations

import asyncio
import cProfile
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A thread running an event loop until ``close``; ``run`` awaits a coroutine there."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()
        ident = self._thread.ident
        assert ident is not None
        self._clock = time.pthread_getcpuclockid(ident)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """``coro`` run to its end on this thread's loop, awaited from the caller's."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def cpu_seconds(self) -> float:
        """User + system CPU time this thread has used so far."""
        return time.clock_gettime(self._clock)

    async def profile(self) -> cProfile.Profile:
        """A profiler of this thread alone, on its CPU clock, started now (``dump`` ends it)."""
        profiler = cProfile.Profile(time.thread_time)

        async def enable() -> None:
            profiler.enable()

        await self.run(enable())
        return profiler

    async def dump(self, profiler: cProfile.Profile, path: Path) -> None:
        """Stop ``profiler`` (started by ``profile``) and write its statistics to ``path``."""

        async def disable() -> None:
            profiler.disable()

        await self.run(disable())
        profiler.dump_stats(path)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        if not self._thread.is_alive():
            self.loop.close()
