"""Reconcile throughput of the test controller (``tests/integration/runtime/
child_controller.py``) over ``--objects`` parents.

The API server runs in its own process and holds the parents; the
controller's informers sync first, then its workers start. Two figures:
the first pass, where every reconcile writes a child by server-side apply
(a round trip each), timed until every child is in the controller's cache;
and a full resync once everything is in its desired state, where each
reconcile only reads the cache and writes nothing (checked).

The client's rate limit is off by default so the runtime's own cost shows;
``--qps 50`` gives the product default (which caps the first pass at about
50 writes/s after a burst of 100).

    python bench/runtime_reconcile.py [--objects 1000] [--workers 4] [--qps N]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from bench_support import REPO, config_map, control_plane_process, create_all, print_figures
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient

sys.path.insert(0, str(REPO / "tests"))
from integration.runtime.child_controller import PARENT_LABEL, ChildController


async def wait_until(condition: Any, timeout: float = 120.0) -> None:
    deadline = time.perf_counter() + timeout
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError("the controller did not finish in time")
        await asyncio.sleep(0.005)


async def run(objects: int, workers: int, qps: float | None) -> list[dict[str, Any]]:
    async with control_plane_process() as cp:
        config = KubeConfig.from_file(str(cp.kubeconfig))
        loader = ApiClient(config, field_manager="loader", qps=None)
        await create_all(
            loader, [config_map(f"p-{i:05d}", labels={PARENT_LABEL: "yes"}) for i in range(objects)]
        )
        await loader.close()

        client = ApiClient(config, field_manager="child-controller", qps=qps)
        informers = InformerFactory(client)
        cc = ChildController(informers, client, max_concurrent=workers)
        await informers.start()
        await informers.wait_synced()

        t0 = time.perf_counter()
        cc.controller.start()
        await wait_until(lambda: len(cc.children.store) == objects)
        first_pass = time.perf_counter() - t0
        assert cc.applies == objects

        # Let the children's own add events (each enqueues its parent) run out.
        await wait_until(lambda: len(cc.controller.queue) == 0)
        await asyncio.sleep(0.5)
        writes, reconciles = sum(client.writes.values()), cc.controller.reconciles
        t0 = time.perf_counter()
        cc.resync()
        await wait_until(lambda: cc.controller.reconciles >= reconciles + objects)
        resync = time.perf_counter() - t0
        assert sum(client.writes.values()) == writes, "a no-op resync wrote"

        await cc.controller.stop()
        await informers.stop()
        await client.close()

    common = {"objects": objects, "workers": workers, "qps": qps}
    return [
        {
            "figure": "reconcile_throughput_first_pass",
            "value": round(objects / first_pass, 1),
            "unit": "reconciles/s",
            "seconds": round(first_pass, 3),
            "note": "one server-side apply per reconcile, until all children are cached",
            **common,
        },
        {
            "figure": "reconcile_throughput_noop_resync",
            "value": round(objects / resync, 1),
            "unit": "reconciles/s",
            "seconds": round(resync, 3),
            "note": "everything in its desired state: cache reads only, zero writes",
            **common,
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--qps", type=float, default=None)
    args = parser.parse_args()
    print_figures(asyncio.run(run(args.objects, args.workers, args.qps)))


if __name__ == "__main__":
    main()
