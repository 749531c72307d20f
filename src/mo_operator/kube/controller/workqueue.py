"""An asyncio work queue of object keys, after client-go's ``util/workqueue``.

What a controller needs from it, and why each property matters:

- **dedupe** (the "dirty" set): a key is queued once however often it is
  added, because reconciles are level-based: ten events about one object
  while it waits need one reconcile, not ten;
- **no concurrent processing** (the "processing" set): a key handed to a
  worker is not handed to another until ``done(key)``; an add meanwhile marks
  it dirty and ``done`` queues it again exactly once, so no change is lost and
  two workers never fight over one object;
- **delayed adds** (client-go's delaying queue): ``add_after`` keeps a heap of
  ready times served by a single loop timer, so 100k pending requeues cost a
  heap, not 100k sleeping tasks; an earlier ready time for a key wins;
- **rate-limited adds** (client-go's rate-limiting queue): ``add_rate_limited``
  delays by the controller rate limiter, the max of a per-key exponential
  backoff and an overall token bucket, so one failing object backs off alone
  while a storm of failures cannot flood the API server.

Single-threaded: every method is called from the event loop's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import time
import weakref
from collections import deque
from collections.abc import Hashable
from typing import Generic, Protocol, TypeVar

from ..flowcontrol.ratelimit import TokenBucket
from ..metrics.metrics import (
    WORKQUEUE_ADDS,
    WORKQUEUE_DEPTH,
    WORKQUEUE_QUEUE_DURATION,
    WORKQUEUE_RETRIES,
    WORKQUEUE_UNFINISHED_WORK,
    WORKQUEUE_WORK_DURATION,
)

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class QueueShutDown(Exception):
    """Raised by ``get()`` once the queue is shut down: the worker should exit."""


# ---------------------------------------------------------------- rate limiters
class RateLimiter(Protocol[K_contra]):
    """client-go's ``TypedRateLimiter``: how long to wait before retrying a key."""

    def when(self, key: K_contra) -> float:
        """The delay for this retry (and count the retry)."""
        ...

    def forget(self, key: K_contra) -> None:
        """The key succeeded: start its backoff afresh."""
        ...

    def num_requeues(self, key: K_contra) -> int: ...


class ItemExponentialFailureRateLimiter(Generic[K]):
    """``base * 2**failures`` per key, capped (client-go's limiter of the same name)."""

    def __init__(self, base: float = 0.005, cap: float = 1000.0) -> None:
        if base <= 0 or cap < base:
            raise ValueError("need 0 < base <= cap")
        self.base = base
        self.cap = cap
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        exp = self._failures.get(key, 0)
        self._failures[key] = exp + 1
        if exp >= 1024:  # 2.0**exp would overflow a float long before this
            return self.cap
        return min(self.cap, self.base * 2.0**exp)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter(Generic[K]):
    """One token bucket over all keys (client-go's ``BucketRateLimiter``): it
    caps the overall retry rate, so it keeps no per-key state."""

    def __init__(self, bucket: TokenBucket) -> None:
        self.bucket = bucket

    def when(self, key: K) -> float:
        return self.bucket.reserve()

    def forget(self, key: K) -> None:
        return None

    def num_requeues(self, key: K) -> int:
        return 0


class MaxOfRateLimiter(Generic[K]):
    """The longest delay of several limiters; every limiter counts every retry."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("need at least one limiter")
        self.limiters = limiters

    def when(self, key: K) -> float:
        return max([limiter.when(key) for limiter in self.limiters])

    def forget(self, key: K) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_controller_rate_limiter(
    base: float = 0.005, cap: float = 1000.0, qps: float = 10.0, burst: int = 100
) -> MaxOfRateLimiter[K]:
    """client-go's ``DefaultTypedControllerRateLimiter``: per-key exponential
    backoff from 5 ms to 1000 s, and at most 10 retries/s overall (burst 100)."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter[K](base, cap), BucketRateLimiter[K](TokenBucket(qps, burst))
    )


# ------------------------------------------------------------------------ queue
class WorkQueue(Generic[K]):
    """A deduplicating, delaying, rate-limiting FIFO of keys (see module doc).

    Workers loop ``key = await q.get()`` ... ``q.done(key)``. ``name`` labels
    the client-go metrics (``workqueue_*{name=...}``).
    """

    def __init__(self, name: str, rate_limiter: RateLimiter[K] | None = None) -> None:
        self.name = name
        self._rate_limiter: RateLimiter[K] = rate_limiter or default_controller_rate_limiter()
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()
        self._processing: dict[K, float] = {}  # key -> processing start (perf_counter)
        self._added_at: dict[K, float] = {}  # key -> when it became dirty
        self._getters: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._drain = False
        # Delayed adds: a heap of (ready_at, seq, key) with lazy deletion;
        # ``_waiting`` holds each key's live ready time (loop clock).
        self._heap: list[tuple[float, int, K]] = []
        self._waiting: dict[K, float] = {}
        self._seq = itertools.count()
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

        self._m_depth = WORKQUEUE_DEPTH.labels(name)
        self._m_adds = WORKQUEUE_ADDS.labels(name)
        self._m_queue_duration = WORKQUEUE_QUEUE_DURATION.labels(name)
        self._m_work_duration = WORKQUEUE_WORK_DURATION.labels(name)
        self._m_retries = WORKQUEUE_RETRIES.labels(name)
        self._m_depth.set(0)
        # Computed when scraped, so no task has to tick to keep it fresh; a
        # weak reference lets a discarded queue be collected.
        ref = weakref.ref(self)

        def unfinished_work() -> float:
            queue = ref()
            return queue._unfinished_work() if queue is not None else 0.0

        WORKQUEUE_UNFINISHED_WORK.labels(name).set_function(unfinished_work)

    # ------------------------------------------------------------- adding
    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already waiting; ignored after shutdown."""
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        self._added_at[key] = time.perf_counter()
        self._m_adds.inc()
        self._m_depth.set(len(self._dirty))
        if key in self._processing:
            return  # done() queues it again
        self._queue.append(key)
        self._wake_one()

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` after ``delay`` seconds; if it is already waiting, the
        earlier of the two ready times wins."""
        if self._shutting_down:
            return
        self._m_retries.inc()
        if delay <= 0:
            self.add(key)
            return
        loop = self._loop = asyncio.get_running_loop()
        ready_at = loop.time() + delay
        current = self._waiting.get(key)
        if current is not None and current <= ready_at:
            return
        self._waiting[key] = ready_at
        heapq.heappush(self._heap, (ready_at, next(self._seq), key))
        self._arm_timer()

    def add_rate_limited(self, key: K) -> None:
        """Retry ``key`` when the rate limiter allows (after a failure)."""
        self.add_after(key, self._rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """``key`` succeeded: its next failure backs off from the start again."""
        self._rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._rate_limiter.num_requeues(key)

    # ------------------------------------------------------------- taking
    def get_nowait(self) -> K:
        """The next key, marked as processing; ``asyncio.QueueEmpty`` if none
        is ready, ``QueueShutDown`` once shut down (after draining, if asked)."""
        if self._shutting_down and not self._drain:
            raise QueueShutDown(self.name)
        if not self._queue:
            if self._shutting_down and not self._processing:
                raise QueueShutDown(self.name)
            raise asyncio.QueueEmpty
        key = self._queue.popleft()
        self._dirty.discard(key)
        now = time.perf_counter()
        self._processing[key] = now
        added = self._added_at.pop(key, None)
        if added is not None:
            self._m_queue_duration.observe(now - added)
        self._m_depth.set(len(self._dirty))
        return key

    async def get(self) -> K:
        """Wait for the next key (see ``get_nowait``); call ``done`` after."""
        loop = asyncio.get_running_loop()
        while True:
            try:
                return self.get_nowait()
            except asyncio.QueueEmpty:
                pass
            waiter: asyncio.Future[None] = loop.create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except BaseException:
                waiter.cancel()
                with contextlib.suppress(ValueError):
                    self._getters.remove(waiter)
                if not waiter.cancelled():
                    # We were woken for a key but cancelled before taking it:
                    # pass the wake-up on so the key is not stranded.
                    self._wake_one()
                raise

    def done(self, key: K) -> None:
        """Processing of ``key`` finished; if it was added meanwhile, queue it
        again. Unknown keys are ignored, as in client-go."""
        started = self._processing.pop(key, None)
        if started is None:
            return
        self._m_work_duration.observe(time.perf_counter() - started)
        if key in self._dirty:
            self._queue.append(key)
            self._wake_one()
        elif self._shutting_down and not self._processing and not self._queue:
            self._wake_all()  # draining finished: release the waiting workers

    # ------------------------------------------------------------ lifecycle
    def shutdown(self, drain: bool = False) -> None:
        """Stop accepting adds and drop delayed ones. With ``drain``, ``get``
        keeps handing out queued keys (and keys re-queued by ``done``) and
        raises ``QueueShutDown`` once nothing is queued or in flight; without,
        it raises at once and workers finish only what they hold."""
        self._shutting_down = True
        self._drain = drain
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._heap.clear()
        self._waiting.clear()
        self._wake_all()

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def __len__(self) -> int:
        """Keys ready to be handed out (not counting delayed or in-flight ones)."""
        return len(self._queue)

    @property
    def busy(self) -> bool:
        """Some key is queued or being processed (keys waiting out a delay do not count)."""
        return bool(self._dirty or self._processing)

    # ------------------------------------------------------------- internals
    def _wake_one(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    def _wake_all(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)

    def _arm_timer(self) -> None:
        """Point the one timer at the earliest live ready time."""
        heap = self._heap
        while heap and self._waiting.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)  # superseded by an earlier ready time
        if not heap:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            return
        first = heap[0][0]
        if self._timer is not None:
            if self._timer.when() <= first:
                return
            self._timer.cancel()
        assert self._loop is not None
        self._timer = self._loop.call_at(first, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        assert self._loop is not None
        now = self._loop.time()
        heap = self._heap
        while heap and heap[0][0] <= now:
            ready_at, _, key = heapq.heappop(heap)
            if self._waiting.get(key) == ready_at:
                del self._waiting[key]
                self.add(key)
        self._arm_timer()

    def _unfinished_work(self) -> float:
        now = time.perf_counter()
        return sum(now - started for started in self._processing.values())
