"""Operator memory with ``--clusters`` MatrixOneClusters and their children
cached, and bytes per cached object.

The operator need not converge that many clusters to cache them: one
cluster is converged first (control plane with simulator, operator) and
every object of it the operator caches is captured through the API, status
included (MatrixOneCluster, LogSet, DNSet, CNSet, ProxySet, BucketClaim,
StatefulSets, Deployment, Services, ConfigMaps, Secret, pods, volume
claims). Then a fresh API server in its own process (nothing running pods)
gets ``--clusters`` renamed copies of them (``--per-namespace`` clusters a
namespace), created and their status written through the API.

The measurement runs in a fresh child process that imports what ``mo-operator
run`` imports and nothing of the benchmark's test kit (its world, control
plane and simulator added about 5 MiB that no operator pod has): it builds the product's ``Operator`` with the product's admin provider
(every controller wired, none started: the event handlers still queue each
object's key, as at any start), starts its informers and waits until they
have synced. Figures: the process's RSS after sync and its growth over the
sync (what the operator's pod pays, allocator overhead and work queues
included), divided by the number of cached objects; and, in a second pass
under ``tracemalloc``, the bytes a synced operator retains (the caches:
frozen objects and indexes, plus the queued keys).

    python bench/operator_memory.py [--clusters 1000] [--per-namespace 10]
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from lightkube import KubeConfig

import mo_operator.cli.run  # noqa: F401  (imported for its size: what an operator pod imports)
from mo_operator.controllers.operator import Operator
from mo_operator.kube.client.client import ApiClient
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.settings import OperatorConfig
from mo_operator.settings import Settings as OperatorSettings

MIB = 1024 * 1024


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def synced_operator(client: ApiClient) -> tuple[Operator, float]:
    """A product ``Operator`` (built, not started) whose informers have synced, and how
    long that took."""
    op = Operator(client, RpcAdminProvider(), OperatorConfig(settings=OperatorSettings()))
    t0 = time.perf_counter()
    await op.informers.start()
    await op.informers.wait_synced()
    return op, time.perf_counter() - t0


def cached_objects(op: Operator) -> int:
    return sum(len(i.store) for i in op.informers.informers)


def released_by_malloc_trim() -> int:
    """Bytes of RSS that glibc gives back on ``malloc_trim``: memory freed but
    kept by the C allocator (0 where there is no glibc)."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return 0
    before = rss_bytes()
    libc.malloc_trim(0)
    return max(0, before - rss_bytes())


async def child(kubeconfig: Path) -> dict[str, Any]:
    """In a fresh process: RSS over a first sync, then tracemalloc over a second one."""
    client = ApiClient(KubeConfig.from_file(str(kubeconfig)), field_manager="mo-operator", qps=None)
    try:
        gc.collect()
        rss_before = rss_bytes()
        op, seconds = await synced_operator(client)
        gc.collect()
        rss_after = rss_bytes()
        rss_trimmed = rss_after - released_by_malloc_trim()
        cached = cached_objects(op)
        await op.informers.stop()
        del op
        gc.collect()
        tracemalloc.start()
        baseline = tracemalloc.get_traced_memory()[0]
        op, _ = await synced_operator(client)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - baseline
        tracemalloc.stop()
        traced_cached = cached_objects(op)
        await op.informers.stop()
    finally:
        await client.close()
    return {
        "rss_before": rss_before,
        "rss_after": rss_after,
        "rss_trimmed": rss_trimmed,
        "cached": cached,
        "traced_cached": traced_cached,
        "retained": retained,
        "sync_seconds": seconds,
    }


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    # The benchmark's side only: importing its support at the top would put the
    # test kit in the measured child too.
    from operator_support import (
        REAL_KUBECONFIG,
        load_average,
        log,
        populate,
        run_child,
        target,
        template_cluster,
    )

    log("converging one cluster to copy")
    template = await template_cluster()
    log(f"template: {len(template[1])} objects a cluster")
    async with target(simulator=False) as world:
        t0 = time.perf_counter()
        made = await populate(world, template, args.clusters, per_namespace=args.per_namespace)
        log(f"{made} objects created in {time.perf_counter() - t0:.0f}s; measuring in a child process")
        m = await run_child(Path(__file__), "--child", str(world.kubeconfig))
    growth = m["rss_after"] - m["rss_before"]
    extra = {
        "clusters": args.clusters,
        "objects_per_cluster": len(template[1]),
        "objects_created": made,
        "cached_objects": m["cached"],
        "server": "real" if REAL_KUBECONFIG else "embedded",
        "loadavg": load_average(),
    }
    return [
        {
            "figure": "operator_rss",
            "value": round(m["rss_after"] / MIB, 1),
            "unit": "MiB",
            "rss_before_sync_mib": round(m["rss_before"] / MIB, 1),
            "rss_after_malloc_trim_mib": round(m["rss_trimmed"] / MIB, 1),
            "sync_seconds": round(m["sync_seconds"], 2),
            "note": "RSS of a fresh operator process once its caches hold every object",
            **extra,
        },
        {
            "figure": "operator_rss_growth",
            "value": round(growth / MIB, 1),
            "unit": "MiB",
            "note": "RSS growth over the first sync",
            **extra,
        },
        {
            "figure": "bytes_per_cached_object_rss",
            "value": round(growth / m["cached"]),
            "unit": "bytes",
            "note": "RSS growth over the sync / cached objects (allocator overhead, queued keys included)",
            **extra,
        },
        {
            "figure": "bytes_per_cached_object_traced",
            "value": round(m["retained"] / m["traced_cached"]),
            "unit": "bytes",
            "note": "tracemalloc: bytes a synced operator retains / cached objects",
            **extra,
        },
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clusters", type=int, default=1000)
    p.add_argument("--per-namespace", type=int, default=10, help="clusters in each namespace")
    p.add_argument("--child", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    return p


def main() -> None:
    args = parser().parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(Path(args.child)))))
        sys.exit(0)
    from bench_support import print_figures

    print_figures(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
