"""Loads of the operator benchmarks: ``N`` MatrixOneClusters converged by a
running operator (``converged_load``), copies of one converged cluster's
objects made without it (``template_cluster``, ``populate``), and the
arguments and recorded conditions every operator figure shares."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mo_operator.controllers.common.settings import Settings as OperatorSettings
from mo_operator.kube.client import ApiClient
from mo_operator.kube.status_policy import DEFAULT_WINDOW
from support_clusters import SMALL, ClusterRef, Shape, Watcher, create_clusters, layout
from support_objects import Captured, capture, create_objects, replicate
from support_operator import OperatorUnderTest
from support_target import REAL_KUBECONFIG, Target, cleanup, client_of, load_average, log, prepare, target


@dataclass
class Load:
    """MatrixOneClusters converged by a running operator."""

    target: Target
    user: ApiClient
    namespaces: list[str]
    clusters: list[ClusterRef]
    operator: OperatorUnderTest
    watcher: Watcher
    started: float
    all_ready: float

    @property
    def converge_seconds(self) -> float:
        return self.all_ready - self.started


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
) -> AsyncIterator[Load]:
    """``count`` clusters, one per namespace, applied to a running, synced
    operator, until all are Ready. ``started`` is taken just before the
    first one is created."""
    async with target() as t:
        user = client_of(t, "bench-user")
        namespaces = await prepare(user, t, count)
        clusters = layout(count, namespaces)
        op = OperatorUnderTest(t, settings=settings, workers=workers, qps=qps, status_window=status_window)
        watcher = Watcher(t)
        try:
            await op.start()
            await watcher.start()
            log(f"creating {count} MatrixOneClusters ({shape.pods} pods each)")
            started = time.perf_counter()
            await create_clusters(user, t, clusters, shape)
            all_ready = await watcher.wait_all_ready(clusters, timeout)
            log(f"{count} clusters Ready after {all_ready - started:.1f}s")
            yield Load(t, user, namespaces, clusters, op, watcher, started, all_ready)
        finally:
            await op.stop()
            await watcher.stop()
            await cleanup(user, t, namespaces)
            await user.close()


async def template_cluster(settings: OperatorSettings | None = None) -> tuple[ClusterRef, list[Captured]]:
    """The objects of one converged cluster (of the default shape), for
    benchmarks that create many clusters' worth of objects without the operator."""
    async with converged_load(1, settings=settings) as load:
        if not await load.operator.wait_quiet(1.0, timeout=30.0):
            log("the template cluster's operator kept writing; capturing anyway")
        captured = await capture(load.user, load.namespaces)
        return load.clusters[0], captured


async def populate(
    client: ApiClient,
    t: Target,
    template: tuple[ClusterRef, Sequence[Captured]],
    count: int,
    *,
    per_namespace: int,
    with_status: bool = True,
    concurrency: int = 32,
    batch: int = 50,
) -> tuple[list[str], int]:
    """``count`` clusters' worth of the template's objects (``per_namespace``
    clusters a namespace), created through the API, ``batch`` clusters at a
    time; the namespaces and the number of objects."""
    namespaces = await prepare(client, t, -(-count // per_namespace))
    old, objects = template
    refs = layout(count, namespaces)
    made = 0
    for start in range(0, count, batch):
        copies = [c for ref in refs[start : start + batch] for c in replicate(objects, old, ref)]
        await create_objects(client, copies, concurrency, with_status=with_status)
        made += len(copies)
        log(f"created {min(count, start + batch)} clusters' objects ({made})")
    return namespaces, made


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
