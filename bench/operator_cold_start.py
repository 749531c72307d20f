"""Cold start of the operator to its first reconcile with ``--objects``
objects present.

The objects are those the operator caches, in the proportions of real
MatrixOneClusters: one cluster is converged (control plane with simulator,
operator), every object of it the operator caches is captured through the
API, and renamed copies of it (status included) are created on a fresh API
server in its own process until there are at least ``--objects``.

Each run is a new Python process, as a restarted operator pod is: its
clock starts when the benchmark spawns it, and it reports when the imports
of ``mo-operator run`` were done, when the ``Operator`` was built (with the
client rate limit of ``mo-operator run``), when every informer had synced
(lists in pages of 500, then watches), when the first reconcile
function was called (seen by the test kit's ``ReconcileObserver`` on its
controllers; the product is not changed) and by which controller, when every
controller had started (each starts once the caches it reads have synced),
and the CPU time it had used by the first reconcile:
on a shared machine the wall-clock figures mostly measure the neighbours.
The test kit the process imports to drive the operator is not the
product's: its import is timed apart (``cold_start_kit_import``) and left
out of the other figures.
No MatrixOne answers (the admin interface fails as an unreachable HAKeeper
would): only the start is timed.

    python bench/operator_cold_start.py [--objects 10000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

WALL_CLOCK = ("imported", "built", "synced", "first_reconcile", "all_started")
"""The child's timestamps, taken relative to the spawn; the rest are counts and seconds."""


class FirstReconciles:
    """When each controller's first reconcile began (``time.perf_counter()``)."""

    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def started(self, controller: str, req: object) -> None:
        self.at.setdefault(controller, time.perf_counter())

    def finished(self, controller: str, req: object) -> None:
        return None


async def child(kubeconfig: Path) -> dict[str, Any]:
    """In a fresh process: import, build, run until the first reconcile (the
    parent's clock started when it spawned this process).

    The imports timed are those of ``mo-operator run`` (its command line and
    everything it loads before it starts, the webhook and probe servers
    included, as in a pod); the test kit the benchmark drives the operator
    with is imported after them and its import is taken out of every later
    figure, wall clock and CPU alike: a pod never loads it."""
    import mo_operator.cli.main
    import mo_operator.cli.run  # noqa: F401

    imported, cpu_imported = time.time(), time.process_time()
    from mo_devkit.testing import OperatorRunner, joined_world
    from mo_operator.settings import ApiSettings
    from mo_operator.settings import Settings as OperatorSettings

    kit, cpu_kit = time.time() - imported, time.process_time() - cpu_imported

    def now() -> float:
        return time.time() - kit

    async with joined_world(kubeconfig) as world:
        op = OperatorRunner(
            world, settings=OperatorSettings(), qps=ApiSettings().qps, record_writes=False, strict_reads=False
        )
        operator = op.build()
        firsts = FirstReconciles()
        for controller in operator.controllers:
            controller.observers.append(firsts)
        built = now()
        offset = now() - time.perf_counter()  # the observers stamp perf_counter
        monotonic_offset = now() - time.monotonic()  # a controller stamps its start so
        task = op.launch()
        synced: list[float] = []

        async def stamp_synced() -> None:
            await operator.informers.wait_synced()
            synced.append(now())

        stamper = asyncio.create_task(stamp_synced())
        # The observer stamps the first reconcile itself; this loop only notices
        # it, waking every 5 ms (every millisecond cost the process 0.04 s of CPU
        # a second, charged to the operator).
        while op.seen.first_reconcile is None:
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        first, cpu_first = op.seen.first_reconcile + offset, time.process_time() - cpu_kit
        while not all(c.started_at is not None for c in operator.controllers):
            if task.done():
                task.result()
            await asyncio.sleep(0.005)
        all_started = max(c.started_at or 0.0 for c in operator.controllers) + monotonic_offset
        await stamper
        cached = sum(len(i.store) for i in operator.informers.informers)
        await op.stop()
    return {
        "imported": imported,
        "built": built,
        "synced": synced[0],
        "first_reconcile": first,
        "first_controller": min(firsts.at, key=firsts.at.__getitem__),
        "all_started": all_started,
        "cached": cached,
        "cpu_imported": cpu_imported,
        "cpu_first_reconcile": cpu_first,
        "kit_import": kit,
        "cpu_kit_import": cpu_kit,
    }


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    from operator_support import REAL_KUBECONFIG, load_average, log, populate, target, template_cluster

    log("converging one cluster to copy")
    template = await template_cluster()
    per_cluster = len(template[1])
    clusters = -(-args.objects // per_cluster)
    runs: list[dict[str, Any]] = []
    async with target(simulator=False) as world:
        made = await populate(world, template, clusters, per_namespace=args.per_namespace)
        for i in range(args.runs):
            spawned = time.time()
            proc = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--child", str(world.kubeconfig), stdout=asyncio.subprocess.PIPE
            )
            out, _ = await asyncio.wait_for(proc.communicate(), 300)
            if proc.returncode != 0:
                raise RuntimeError(f"the operator process exited with {proc.returncode}")
            m = json.loads(out.decode().strip().splitlines()[-1])
            runs.append({k: (m[k] - spawned if k in WALL_CLOCK else m[k]) for k in m})
            log(
                f"run {i + 1}: first reconcile {runs[-1]['first_reconcile']:.2f}s after spawn"
                f" ({runs[-1]['first_controller']}), every controller started at"
                f" {runs[-1]['all_started']:.2f}s"
            )

    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in runs), 3)

    extra = {
        "objects": made,
        "cached_objects": int(runs[0]["cached"]),
        "runs": len(runs),
        "server": "real" if REAL_KUBECONFIG else "embedded",
        "loadavg": load_average(),
    }
    return [
        {
            "figure": "cold_start_to_first_reconcile",
            "value": median("first_reconcile"),
            "unit": "s",
            "each": [round(r["first_reconcile"], 3) for r in runs],
            "note": "median, from spawning the operator's process (interpreter and imports included)",
            "first_controller": [r["first_controller"] for r in runs],
            **extra,
        },
        {
            "figure": "cold_start_all_controllers_started",
            "value": median("all_started"),
            "unit": "s",
            "note": "spawn to the last controller started (each starts once the caches it reads synced)",
            **extra,
        },
        {
            "figure": "cold_start_imports",
            "value": median("imported"),
            "unit": "s",
            "note": "spawn to the imports of `mo-operator run` done (Python start, the operator's modules)",
            **extra,
        },
        {
            "figure": "cold_start_sync",
            "value": round(statistics.median(r["synced"] - r["built"] for r in runs), 3),
            "unit": "s",
            "note": "Operator built to every informer synced (list + watch of every cached kind)",
            **extra,
        },
        {
            "figure": "cold_start_cpu_seconds",
            "value": median("cpu_first_reconcile"),
            "unit": "s",
            "note": "CPU the operator's process used up to its first reconcile (imports included): "
            "what the figures above cost when the machine is not shared",
            **extra,
        },
        {
            "figure": "cold_start_cpu_imports",
            "value": median("cpu_imported"),
            "unit": "s",
            "note": "CPU of Python's start and the imports of `mo-operator run`",
            **extra,
        },
        {
            "figure": "cold_start_cpu_after_imports",
            "value": round(statistics.median(r["cpu_first_reconcile"] - r["cpu_imported"] for r in runs), 3),
            "unit": "s",
            "note": "CPU from imports done to the first reconcile (build, list, freeze, index, queue)",
            **extra,
        },
        {
            "figure": "cold_start_kit_import",
            "value": median("kit_import"),
            "unit": "s",
            "cpu": median("cpu_kit_import"),
            "note": "the test kit's own import, after the product's: left out of every figure above",
            **extra,
        },
        {
            "figure": "cold_start_synced_to_first_reconcile",
            "value": round(statistics.median(r["first_reconcile"] - r["synced"] for r in runs), 3),
            "unit": "s",
            "note": "negative: the first controller started before every informer had synced",
            **extra,
        },
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--objects", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--per-namespace", type=int, default=10, help="clusters in each namespace")
    p.add_argument("--child", metavar="KUBECONFIG", help=argparse.SUPPRESS)
    return p


def main() -> None:
    args = parser().parse_args()
    if args.child:
        print(json.dumps(asyncio.run(child(Path(args.child)))))
        return
    from bench_support import print_figures

    print_figures(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
