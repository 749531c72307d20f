"""Throughput of the controller work queue (``kube/controller/workqueue.py``).

Three figures, each over ``--keys`` distinct keys with asyncio workers that
do nothing but ``get``/``forget``/``done`` (so the queue's own cost shows):
plain adds handed to workers; adds of keys that are already queued (the
dedupe path every informer event about a busy object takes); and delayed
adds (``add_after``, the heap behind ``requeue_after`` and retries) that
come due together.

    python bench/runtime_workqueue.py [--keys 200000] [--workers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from bench_support import print_figures
from mo_operator.kube.controller.workqueue import QueueShutDown, WorkQueue


async def drain(queue: WorkQueue[str], workers: int, expected: int) -> float:
    """Start ``workers`` workers; return when ``expected`` keys were processed."""
    processed = 0
    finished = asyncio.Event()

    async def worker() -> None:
        nonlocal processed
        while True:
            try:
                key = await queue.get()
            except QueueShutDown:
                return
            queue.forget(key)
            queue.done(key)
            processed += 1
            if processed == expected:
                finished.set()

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    await finished.wait()
    queue.shutdown()
    await asyncio.gather(*tasks)
    return time.perf_counter()


async def run(keys: int, workers: int) -> list[dict[str, Any]]:
    names = [f"default/object-{i}" for i in range(keys)]

    queue: WorkQueue[str] = WorkQueue("bench-plain")
    t0 = time.perf_counter()
    for name in names:
        queue.add(name)
    plain = keys / (await drain(queue, workers, keys) - t0)

    queue = WorkQueue("bench-dedupe")
    for name in names:
        queue.add(name)
    t0 = time.perf_counter()
    for _ in range(10):
        for name in names:
            queue.add(name)  # already queued: one set lookup, nothing queued
    dedupe = 10 * keys / (time.perf_counter() - t0)
    queue.shutdown()

    queue = WorkQueue("bench-delayed")
    t0 = time.perf_counter()
    for name in names:
        queue.add_after(name, 0.05)
    delayed = keys / (await drain(queue, workers, keys) - t0)

    common = {"keys": keys, "workers": workers}
    return [
        {"figure": "workqueue_throughput", "value": round(plain), "unit": "keys/s", **common},
        {"figure": "workqueue_dedupe_adds", "value": round(dedupe), "unit": "adds/s", "keys": keys},
        {
            "figure": "workqueue_delayed_throughput",
            "value": round(delayed),
            "unit": "keys/s",
            "note": "add_after(0.05 s) then processed; the 50 ms delay is included",
            **common,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--keys", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    print_figures(asyncio.run(run(args.keys, args.workers)))


if __name__ == "__main__":
    main()
