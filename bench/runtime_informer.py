"""Cold start of a shared informer to a synced cache, and the memory each
cached object costs.

The API server runs in its own process and holds ``--objects`` ConfigMaps;
each cold start is a new client and a new informer (paginated list, 500 per
page, then the watch opens), timed until ``has_synced``. Memory per object
is measured twice: the RSS growth of this process across the first sync
(what the operator's pod pays, allocator overhead included) and the bytes
tracemalloc sees retained by a synced informer (the cache alone).

    python bench/runtime_informer.py [--objects 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time
import tracemalloc
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from bench_support import (
    CONFIGMAPS,
    config_map,
    control_plane_process,
    create_all,
    print_figures,
    rss_bytes,
)
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient


async def cold_start(kubeconfig: KubeConfig) -> tuple[float, SharedInformer, ApiClient]:
    client = ApiClient(kubeconfig, field_manager="bench", qps=None)
    informer = InformerFactory(client).informer(CONFIGMAPS, "default", "bench=1")  # not kube-root-ca.crt
    t0 = time.perf_counter()
    informer.start()
    await informer.wait_synced()
    return time.perf_counter() - t0, informer, client


async def run(objects: int, runs: int) -> list[dict[str, Any]]:
    async with control_plane_process() as cp:
        config = KubeConfig.from_file(str(cp.kubeconfig))
        loader = ApiClient(config, field_manager="loader", qps=None)
        await create_all(loader, [config_map(f"cm-{i:06d}") for i in range(objects)])
        await loader.close()

        gc.collect()
        rss_before = rss_bytes()
        times = []
        for i in range(runs):
            seconds, informer, client = await cold_start(config)
            assert len(informer.store) == objects
            times.append(seconds)
            if i == 0:
                gc.collect()
                rss_growth = rss_bytes() - rss_before
            await informer.stop()
            await client.close()
            del informer
            gc.collect()

        tracemalloc.start()
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        _, informer, client = await cold_start(config)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
        tracemalloc.stop()
        await informer.stop()
        await client.close()

    return [
        {
            "figure": "informer_cold_start_to_synced",
            "value": round(statistics.median(times), 3),
            "unit": "s",
            "objects": objects,
            "runs": [round(t, 3) for t in times],
            "note": "median; list in pages of 500 from a server in another process",
        },
        {
            "figure": "informer_memory_per_object_rss",
            "value": round(rss_growth / objects),
            "unit": "bytes",
            "note": "RSS growth of this process over the first sync",
        },
        {
            "figure": "informer_memory_per_object_traced",
            "value": round(retained / objects),
            "unit": "bytes",
            "note": "tracemalloc: memory retained by a synced informer (frozen objects, indexes)",
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print_figures(asyncio.run(run(args.objects, args.runs)))


if __name__ == "__main__":
    main()
