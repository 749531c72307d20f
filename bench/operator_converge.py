"""Time to converge ``--clusters`` MatrixOneClusters to Ready, divided by the
time a plain loop of lightkube calls takes to create the same objects
(goal: <= 1.2).

**The operator's side** (``converge_seconds``): a control plane in its own
process (API server, workload simulator, simulated MatrixOne: ``mo-operator
control-plane --fast``), the operator running in this process with its
caches synced and nothing to do. The clock starts just before the first
MatrixOneCluster is created (as a user would, 16 requests at a time, one
cluster per namespace) and stops when the last cluster reports Ready for
its latest generation, as seen by a watcher on a client of its own. In
between, the operator creates every child (LogSet, DNSet, CNSet, ProxySet,
BucketClaim, Secret; per set its ConfigMaps, Services and StatefulSet or
Deployment; the CN pods themselves), writes finalizers and every status
change, and waits for what it depends on: the simulated kubelet starting
pods, the HAKeeper bootstrapping and stores registering (which send no
events: a set waiting on MatrixOne looks again every ``--busy-poll-seconds``,
the product's default), and the order log -> TN/CN/proxy.

**The baseline** (``baseline_seconds``): the objects the operator wrote in
that run are listed through the API (every object of a kind the operator
caches whose controller owner is one of our kinds, or, having none, whose
managed fields name the operator's field manager) together with the
MatrixOneClusters themselves (the user's writes are inside the operator's
time too). They are stripped of server-set fields, owner references and
status, turned into lightkube models, and created by a plain loop of
``lightkube.AsyncClient.create`` calls, ``--baseline-concurrency`` at a time
(default: the operator's total worker count, the most writes it can have in
flight), against a fresh API server in its own process with nothing else
running (``control-plane --no-simulator``; on a real API server, new
namespaces of the same server). Namespaces are created before the clock.

**What limits the ratio**: the baseline is one create per object, back to
back. The operator cannot beat it and makes more writes (finalizers, status
of every set and cluster at each step: ``operator_writes`` against
``objects``), but the larger part is waiting that is not the operator's:
pods started one by one by the simulated kubelet, whose one loop also
serves every other pod; the simulated MatrixOne rebuilding its view of
every MatrixOne pod (it rests between rebuilds so as to take at most a
quarter of its process); and the dependency chain (a TN, CN or
proxy is only configured once its LogSet's HAKeeper answers), each step of
which waits up to one busy poll. The control plane process's CPU time is
reported (``control_plane_cpu_seconds``), and this process's
(``operator_cpu_seconds``: the operator, plus the watcher and the setup), to
show where the time went.

    python bench/operator_converge.py [--clusters 100] [--workers 4]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lightkube import AsyncClient, KubeConfig
from lightkube.codecs import from_dict
from lightkube.generic_resource import create_namespaced_resource

from bench_support import print_figures
from mo_operator.controllers.common import resources as r
from operator_support import (
    Captured,
    add_operator_arguments,
    capture,
    cleanup,
    client_of,
    common,
    converged_load,
    log,
    operator_settings,
    prepare,
    target,
)


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of a process (None if unknown)."""
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def generic_models(objects: Sequence[Captured]) -> None:
    """Make lightkube's ``from_dict`` give schema-less (generic) models for every
    kind in ``objects``, built-in ones too: the typed models would also check
    the server's answers (the embedded server leaves ``status.replicas`` out of
    a new StatefulSet, which lightkube's StatefulSetStatus requires)."""
    for res in {c.res for c in objects}:
        create_namespaced_resource(res.group, res.version, res.kind, res.plural)


async def baseline(objects: Sequence[Captured], namespaces: Sequence[str], concurrency: int) -> float:
    """Seconds a plain lightkube loop takes to create ``objects`` on a fresh API server."""
    generic_models(objects)
    async with target(simulator=False) as t:
        setup = client_of(t, "bench-baseline-setup")
        fresh = await prepare(setup, t, len(namespaces))  # CRDs too
        await setup.close()
        rename = dict(zip(namespaces, fresh, strict=True))
        models = []
        for c in objects:
            body = dict(c.body)
            body["metadata"] = {**body["metadata"], "namespace": rename[body["metadata"]["namespace"]]}
            models.append(from_dict(body))
        client = AsyncClient(KubeConfig.from_file(str(t.kubeconfig)), field_manager="bench-baseline")
        sem = asyncio.Semaphore(concurrency)

        async def create(model: Any) -> None:
            async with sem:
                await client.create(model)

        t0 = time.perf_counter()
        await asyncio.gather(*(create(m) for m in models))
        seconds = time.perf_counter() - t0
        await client.close()
        setup = client_of(t, "bench-baseline-setup")
        await cleanup(setup, t, fresh)  # on a real API server: its namespaces go too
        await setup.close()
    return seconds


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    cpu_before = time.process_time()
    async with converged_load(
        args.clusters,
        settings=operator_settings(args),
        workers=args.workers,
        qps=args.qps,
        timeout=args.converge_timeout,
    ) as load:
        converge = load.converge_seconds
        operator_writes = load.operator.total_writes()
        writes_by = collections.Counter(
            f"{w.verb} {w.kind}{'/' + w.subresource if w.subresource else ''}"
            for w in load.operator.seen.writes
        )
        cp_cpu = cpu_seconds(load.target.pid)
        operator_cpu = time.process_time() - cpu_before
        total_workers = sum(c.max_concurrent for c in load.operator.controllers)
        captured = await capture(load.user, load.namespaces)
        namespaces = load.namespaces
    objects = [c for c in captured if c.res is r.MATRIXONE_CLUSTERS or c.by_operator]
    by_kind: dict[str, int] = {}
    for c in objects:
        by_kind[c.res.kind] = by_kind.get(c.res.kind, 0) + 1
    concurrency = args.baseline_concurrency or total_workers
    log(f"baseline: creating {len(objects)} objects, {concurrency} at a time")
    base = await baseline(objects, namespaces, concurrency)
    log(f"baseline took {base:.1f}s")
    extra = {"clusters": args.clusters, **common(args)}
    return [
        {
            "figure": "converge_ratio",
            "value": round(converge / base, 2),
            "unit": "x",
            "goal": 1.2,
            # to the millisecond: a baseline of a few clusters takes well under a second,
            # and two decimals would misstate the ratio by several percent
            "converge_seconds": round(converge, 3),
            "baseline_seconds": round(base, 3),
            "note": "time to all Ready / time of a lightkube loop creating the same objects",
            **extra,
        },
        {
            "figure": "converge_seconds",
            "value": round(converge, 2),
            "unit": "s",
            "operator_writes": operator_writes,
            "control_plane_cpu_seconds": cp_cpu,
            "operator_cpu_seconds": round(operator_cpu, 1),
            **extra,
        },
        {
            "figure": "baseline_seconds",
            "value": round(base, 2),
            "unit": "s",
            "objects": len(objects),
            "by_kind": by_kind,
            "concurrency": concurrency,
            **extra,
        },
        {
            "figure": "operator_writes_per_object",
            "value": round(operator_writes / max(1, len(objects) - args.clusters), 2),
            "unit": "writes",
            "note": "operator write calls during convergence per object it created",
            "writes_by": dict(writes_by.most_common()),
            **extra,
        },
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument(
        "--baseline-concurrency",
        type=int,
        default=None,
        help="concurrent creates of the baseline (default: the operator's total worker count)",
    )
    add_operator_arguments(p)
    return p


def main() -> None:
    print_figures(asyncio.run(run(parser().parse_args())))


if __name__ == "__main__":
    main()
