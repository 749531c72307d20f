"""Token-bucket rate limiting, shared by the API client (QPS/burst) and the
work queue's overall limiter, so both behave like client-go's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable


class TokenBucket:
    """A token bucket that hands out reservations instead of blocking.

    ``reserve()`` returns how long the caller must wait before acting, which
    lets the work queue turn the delay into a delayed add rather than a
    sleeping worker; ``acquire()`` is the blocking form for the client.
    """

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0:
            raise ValueError("qps must be positive")
        if burst < 1:
            raise ValueError("burst must be at least 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now

    def reserve(self) -> float:
        """Take one token, possibly on credit; return the seconds to wait."""
        self._refill()
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    async def acquire(self) -> None:
        delay = self.reserve()
        if delay > 0:
            await asyncio.sleep(delay)
