"""Throughput of the embedded API server for a burst of creations, and its
memory per stored object.

The control plane runs in its own process (as `mo-operator control-plane`),
so client and server do not share an event loop; lightkube creates the
objects with bounded concurrency while one watcher checks that every event
arrives exactly once, in resourceVersion order. Prints one JSON line per
figure, then a table.

    python bench/apiserver_burst.py [--objects 10000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from lightkube import KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap

from bench_support import control_plane_process, print_figures, rss_bytes
from mo_operator.kube.client.keepalive import lightkube_client


async def run(objects: int, concurrency: int) -> list[dict[str, Any]]:
    async with control_plane_process(real=False) as cp:  # it measures the embedded server itself
        client = lightkube_client(KubeConfig.from_file(str(cp.kubeconfig)), field_manager="bench")
        rss_before = rss_bytes(cp.pid)
        seen: list[int] = []
        done = asyncio.Event()

        async def watch() -> None:
            async for _typ, obj in client.watch(ConfigMap, namespace="default", resource_version="1"):
                seen.append(int(obj.metadata.resourceVersion))
                if len(seen) >= objects:
                    done.set()
                    return

        watcher = asyncio.create_task(watch())
        await asyncio.sleep(0.2)
        sem = asyncio.Semaphore(concurrency)
        payload = {f"key{i}": "x" * 40 for i in range(5)}

        async def create(i: int) -> None:
            async with sem:
                await client.create(
                    ConfigMap(metadata=ObjectMeta(name=f"cm-{i:06d}", labels={"bench": "1"}), data=payload)
                )

        t0 = time.perf_counter()
        await asyncio.gather(*(create(i) for i in range(objects)))
        created = time.perf_counter() - t0
        await asyncio.wait_for(done.wait(), 120)
        delivered = time.perf_counter() - t0
        watcher.cancel()
        rss_after = rss_bytes(cp.pid)
        await client.close()
    if seen != sorted(set(seen)):
        raise AssertionError("the watcher saw events out of order or twice")
    return [
        {
            "figure": "apiserver_create_throughput",
            "value": round(objects / created, 1),
            "unit": "objects/s",
            "objects": objects,
            "concurrency": concurrency,
        },
        {
            "figure": "apiserver_watch_delivery_throughput",
            "value": round(objects / delivered, 1),
            "unit": "events/s",
        },
        {
            "figure": "apiserver_memory_per_object",
            "value": round((rss_after - rss_before) / objects),
            "unit": "bytes",
            "note": "RSS growth of the server process, history and watch cache included",
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    print_figures(asyncio.run(run(args.objects, args.concurrency)))


if __name__ == "__main__":
    main()
