"""A keyed, de-duplicating work loop (the shape of a client-go work queue):
events enqueue keys, workers run ``sync(key)``; a key enqueued while it is
being synced runs again afterwards, never twice at once; ``sync`` may ask to
run again later (a timer, e.g. a readiness delay), and failures retry with
exponential backoff."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)


class KeyedLoop(Generic[K]):
    def __init__(
        self,
        name: str,
        sync: Callable[[K], Awaitable[float | None]],
        *,
        workers: int = 1,
        backoff_base: float = 0.05,
        backoff_max: float = 5.0,
    ) -> None:
        self.name = name
        self._sync = sync
        self._workers = workers
        self._backoff_base = backoff_base
        self._backoff_max = backoff_max
        self._ready: list[K] = []
        self._queued: set[K] = set()
        self._processing: set[K] = set()
        self._dirty: set[K] = set()
        self._timers: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._failures: dict[K, int] = {}
        self._seq = 0
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def enqueue(self, key: K, after: float = 0.0) -> None:
        if after > 0:
            when = time.monotonic() + after
            due = self._due.get(key)
            if due is not None and due <= when:
                return
            self._due[key] = when
            self._seq += 1
            heapq.heappush(self._timers, (when, self._seq, key))
            self._wake.set()
            return
        if key in self._processing:
            self._dirty.add(key)
            return
        if key not in self._queued:
            self._queued.add(key)
            self._ready.append(key)
            self._wake.set()

    def __len__(self) -> int:
        return len(self._queued) + len(self._processing)

    async def start(self) -> None:
        for i in range(self._workers):
            self._tasks.append(asyncio.create_task(self._work(), name=f"{self.name}-{i}"))

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await t
        self._tasks.clear()

    def _release_timers(self) -> float | None:
        """Move due timers to the ready list; the seconds until the next one."""
        now = time.monotonic()
        while self._timers:
            when, _, key = self._timers[0]
            if self._due.get(key) != when:
                heapq.heappop(self._timers)  # superseded by an earlier timer
                continue
            if when > now:
                return when - now
            heapq.heappop(self._timers)
            del self._due[key]
            self.enqueue(key)
        return None

    async def _next(self) -> K:
        while True:
            wait = self._release_timers()
            if self._ready:
                key = self._ready.pop(0)
                self._queued.discard(key)
                return key
            self._wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._wake.wait()

    async def _work(self) -> None:
        while True:
            await asyncio.sleep(0)  # let others run between keys, busy or not
            key = await self._next()
            self._processing.add(key)
            try:
                again = await self._sync(key)
            except asyncio.CancelledError:
                raise
            except Exception as e:
                n = self._failures.get(key, 0) + 1
                self._failures[key] = n
                delay = min(self._backoff_max, self._backoff_base * 2 ** (n - 1))
                log.debug("%s: sync %r failed (%r); retry in %.2fs", self.name, key, e, delay)
                again = delay
            else:
                self._failures.pop(key, None)
            finally:
                self._processing.discard(key)
            if key in self._dirty:
                self._dirty.discard(key)
                self.enqueue(key)
            elif again is not None:
                self.enqueue(key, again)
