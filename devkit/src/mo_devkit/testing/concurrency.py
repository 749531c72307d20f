"""Many requests at once, a bounded number in flight: a benchmark makes hundreds
of namespaces and clusters, and an unbounded burst would measure the API
server's queueing rather than what it sets out to."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Any


async def bounded(concurrency: int, jobs: Iterable[Callable[[], Awaitable[Any]]]) -> None:
    """Run ``jobs`` (coroutine functions) with at most ``concurrency`` at once."""
    sem = asyncio.Semaphore(concurrency)

    async def one(job: Callable[[], Awaitable[Any]]) -> None:
        async with sem:
            await job()

    await asyncio.gather(*(one(j) for j in jobs))
