"""Loads of the operator benchmarks: ``N`` MatrixOneClusters converged by a
running operator (``converged_load``), copies of one converged cluster's
objects made without it (``template_cluster``, ``populate``), and the
arguments and recorded conditions every operator figure shares.

The operator is the kit's ``OperatorRunner``: the product's ``Operator`` in
this process, leader election off, no webhooks, no client-side rate limit
unless asked, the product's timings, watched through the runtime's own
observation points (``OperatorRunner.seen``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mo_devkit.testing import OperatorRunner, Shape, World
from mo_operator.kube.controller.status_policy import DEFAULT_WINDOW
from mo_operator.settings import Settings as OperatorSettings
from support_clusters import SMALL, ClusterRef, Watcher, create_clusters, layout
from support_objects import Captured, capture, create_objects, replicate
from support_target import REAL_KUBECONFIG, load_average, log, target
from support_thread import LoopThread


@dataclass
class Load:
    """MatrixOneClusters converged by a running operator."""

    world: World
    namespaces: list[str]
    clusters: list[ClusterRef]
    operator: OperatorRunner
    watcher: Watcher
    started: float
    all_ready: float
    operator_thread: LoopThread | None = None
    """Where the operator runs, with ``own_thread``."""
    operator_cpu_at_start: float | None = None
    operator_cpu_at_ready: float | None = None
    """CPU time of the operator's thread just before the first cluster is created and
    when the last is Ready, with ``own_thread``."""

    @property
    def converge_seconds(self) -> float:
        return self.all_ready - self.started

    @property
    def operator_cpu_seconds(self) -> float | None:
        """CPU time of the operator's thread while the clusters converged (``own_thread``)."""
        if self.operator_cpu_at_start is None or self.operator_cpu_at_ready is None:
            return None
        return self.operator_cpu_at_ready - self.operator_cpu_at_start


@contextlib.asynccontextmanager
async def converged_load(
    count: int,
    *,
    shape: Shape = SMALL,
    settings: OperatorSettings | None = None,
    workers: int = 4,
    qps: float | None = None,
    timeout: float = 900.0,
    status_window: float | None = None,
    own_thread: bool = False,
    profile: Path | None = None,
) -> AsyncIterator[Load]:
    """``count`` clusters, one per namespace, applied to a running, synced
    operator, until all are Ready. ``started`` is taken just before the
    first one is created. ``own_thread``: the operator runs on an event loop in
    a thread of its own (``support_thread``), whose CPU time the load records;
    the caller then reads its observations only, and calls none of its methods;
    ``profile`` (with ``own_thread``): that thread's cProfile statistics, on its CPU
    clock, over the same span, written to this file."""
    async with target() as world:
        namespaces = await world.add_namespaces(count)
        clusters = layout(count, namespaces)
        op = OperatorRunner(
            world,
            settings=settings or OperatorSettings(),
            qps=qps,
            status_window=status_window,
            strict_reads=False,
        )
        watcher = Watcher(world)
        thread = LoopThread("operator-under-test") if own_thread else None
        try:
            start = op.start(webhooks=False, synced=True, workers=workers)
            await (thread.run(start) if thread else start)
            await watcher.start()
            log(f"creating {count} MatrixOneClusters ({shape.pods} pods each)")
            profiler = await thread.profile() if thread and profile else None
            cpu_at_start = thread.cpu_seconds() if thread else None
            started = time.perf_counter()
            await create_clusters(world, clusters, shape)
            all_ready = await watcher.wait_all_ready(clusters, timeout)
            cpu_at_ready = thread.cpu_seconds() if thread else None
            if thread and profiler and profile:
                await thread.dump(profiler, profile)
            log(f"{count} clusters Ready after {all_ready - started:.1f}s")
            yield Load(
                world,
                namespaces,
                clusters,
                op,
                watcher,
                started,
                all_ready,
                thread,
                cpu_at_start,
                cpu_at_ready,
            )
        finally:
            await (thread.run(op.stop()) if thread else op.stop())
            await watcher.stop()
            if thread:
                thread.close()


async def quiet(op: OperatorRunner, seconds: float, timeout: float) -> bool:
    """``OperatorRunner.quiet``: False if the operator kept writing for ``timeout`` seconds."""
    try:
        await op.quiet(seconds, timeout)
    except TimeoutError:
        return False
    return True


async def template_cluster(settings: OperatorSettings | None = None) -> tuple[ClusterRef, list[Captured]]:
    """The objects of one converged cluster (of the default shape), for
    benchmarks that create many clusters' worth of objects without the operator."""
    async with converged_load(1, settings=settings) as load:
        if not await quiet(load.operator, 1.0, timeout=30.0):
            log("the template cluster's operator kept writing; capturing anyway")
        captured = await capture(load.world.client, load.namespaces)
        return load.clusters[0], captured


async def populate(
    world: World,
    template: tuple[ClusterRef, Sequence[Captured]],
    count: int,
    *,
    per_namespace: int,
    with_status: bool = True,
    concurrency: int = 32,
    batch: int = 50,
) -> int:
    """``count`` clusters' worth of the template's objects (``per_namespace``
    clusters a namespace, in new namespaces of the world), created through the
    API, ``batch`` clusters at a time; the number of objects."""
    namespaces = await world.add_namespaces(-(-count // per_namespace))
    old, objects = template
    refs = layout(count, namespaces)
    made = 0
    for start in range(0, count, batch):
        copies = [c for ref in refs[start : start + batch] for c in replicate(objects, old, ref)]
        await create_objects(world.client, copies, concurrency, with_status=with_status)
        made += len(copies)
        log(f"created {min(count, start + batch)} clusters' objects ({made})")
    return made


async def run_child(script: Path, *args: str, timeout: float = 600.0) -> dict[str, Any]:
    """Run ``script`` with ``args`` in a fresh Python process; its last line of
    output, as JSON."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), *args, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} exited with {proc.returncode}")
    found: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return found


def operator_settings(args: argparse.Namespace) -> OperatorSettings:
    """The product's settings, with the poll periods the arguments name."""
    return replace(
        OperatorSettings(), poll_seconds=args.poll_seconds, busy_poll_seconds=args.busy_poll_seconds
    )


def add_operator_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = OperatorSettings()
    parser.add_argument("--workers", type=int, default=4, help="concurrent reconciles per controller")
    parser.add_argument("--qps", type=float, default=None, help="client rate limit (default: none)")
    parser.add_argument("--poll-seconds", type=float, default=defaults.poll_seconds)
    parser.add_argument("--busy-poll-seconds", type=float, default=defaults.busy_poll_seconds)
    parser.add_argument(
        "--converge-timeout", type=float, default=900.0, help="longest the clusters may take to be Ready"
    )
    parser.add_argument(
        "--status-window",
        type=float,
        default=None,
        help="seconds between non-urgent status writes of one object (default: the product's)",
    )


def common(args: argparse.Namespace) -> dict[str, Any]:
    """What every figure records about how it was taken."""
    return {
        "workers": args.workers,
        "qps": args.qps,
        "status_window": args.status_window if args.status_window is not None else DEFAULT_WINDOW,
        "server": "real" if REAL_KUBECONFIG else "embedded",
        "loadavg": load_average(),
    }
