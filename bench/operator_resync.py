"""API writes during a full resync of ready MatrixOneClusters with nothing
changed (goal: 0).

The operator runs in this process against the control plane in its own
process (``support_target.target``); ``--clusters`` clusters are created
and converge to Ready. Once the operator has gone ``--settle`` seconds
without writing, every object of every controller's kind (clusters, each
child set, bucket claims, pods for the CN store finalizer...) is enqueued,
as a periodic resync would, and the benchmark waits until each of those
keys has been reconciled and the work queues are empty with no reconcile
running. The figure is the number of write calls the operator's own client
made meanwhile (``ApiClient.writes``: every verb, status and Events
included), so it is the same measurement on a real API server. Any write
is listed by verb and kind in the figure's ``writes`` field.

Before the resync, ``idle_writes`` counts the writes of one poll period
(``--poll-seconds``, in which every ready set looks at MatrixOne once) with
nothing enqueued by hand: writes there are churn of the controllers
themselves, not caused by the resync.

    python bench/operator_resync.py [--clusters 100] [--workers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from typing import Any

from bench_support import print_figures
from operator_support import add_operator_arguments, common, converged_load, log, operator_settings, quiet


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    async with converged_load(
        args.clusters,
        settings=operator_settings(args),
        workers=args.workers,
        qps=args.qps,
        timeout=args.converge_timeout,
    ) as load:
        op = load.operator
        settled = await quiet(op, args.settle, timeout=args.settle_timeout)
        if not settled:
            log(f"the operator kept writing for {args.settle_timeout}s after convergence; resyncing anyway")
        idle_before, idle_start = op.total_writes(), len(op.seen.writes)
        await asyncio.sleep(args.idle_window)
        idle_writes = op.total_writes() - idle_before
        idle_by_kind = collections.Counter(f"{w.verb} {w.kind}" for w in op.seen.writes[idle_start:])
        await op.wait_idle()
        before_writes, before = op.total_writes(), len(op.seen.writes)
        reconciles = op.seen.reconciles
        t0 = time.perf_counter()
        enqueued = op.resync()
        log(f"resync: {len(enqueued)} keys enqueued")
        finished = op.seen.finished_at
        deadline = t0 + args.timeout
        while not (all(finished.get(key, 0.0) > t0 for key in enqueued) and op.idle()):
            if time.perf_counter() > deadline:
                raise TimeoutError("the resync did not finish")
            await asyncio.sleep(0.005)
        seconds = time.perf_counter() - t0
        await asyncio.sleep(0.2)  # an Event is written by a background task: give it its chance
        writes = op.total_writes() - before_writes
        by_kind = collections.Counter(f"{w.verb} {w.kind}" for w in op.seen.writes[before:])
        reconciled = op.seen.reconciles - reconciles

    return [
        {
            "figure": "resync_writes",
            "value": writes,
            "unit": "writes",
            "goal": 0,
            "clusters": args.clusters,
            "keys_enqueued": len(enqueued),
            "reconciles": reconciled,
            "seconds": round(seconds, 3),
            "settled_before": settled,
            "writes": dict(by_kind),
            "note": "operator client write calls while every object of every controller was reconciled again",
            **common(args),
        },
        {
            "figure": "idle_writes",
            "value": idle_writes,
            "unit": "writes",
            "goal": 0,
            "seconds": args.idle_window,
            "writes": dict(idle_by_kind),
            "note": "writes with nothing changed and no resync (every ready set looks at MatrixOne once per poll)",
            **common(args),
        },
        {
            "figure": "resync_reconcile_throughput",
            "value": round(reconciled / seconds, 1),
            "unit": "reconciles/s",
            "note": "everything in its desired state: cache reads, MatrixOne state reads, no writes",
            **common(args),
        },
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--settle", type=float, default=3.0, help="seconds without a write before the resync")
    p.add_argument("--settle-timeout", type=float, default=60.0)
    p.add_argument(
        "--idle-window",
        type=float,
        default=None,
        help="seconds to count writes with no resync before it (default: one --poll-seconds)",
    )
    p.add_argument("--timeout", type=float, default=120.0, help="longest the resync may take")
    add_operator_arguments(p)
    return p


def main() -> None:
    args = parser().parse_args()
    if args.idle_window is None:
        args.idle_window = args.poll_seconds
    print_figures(asyncio.run(run(args)))


if __name__ == "__main__":
    main()
