"""The convergence of ``--clusters`` MatrixOneClusters step by step: from each
cluster's create, when each child was applied, each pod created, scheduled,
Running and Ready, the LogSet's ``discovery`` and each set's and the
cluster's Ready written; then the gaps in which the operator, not a pod, is
what the cluster waits for.

Seen through the runtime's observation points, nothing patched: the
operator's write hook (every apply and status write with its body), a
``ReconcileObserver`` on each controller (every reconcile's start), and a
watch of the pods on a client of its own. Each step's time is from the
cluster's create answered; a figure is the median (and max) over clusters.

The two chains a correct operator cannot overlap (a TN, CN or proxy set
starts its pods only once its LogSet is Ready, as upstream's dependencies
say; a CN set also waits for its TN set): ``log_chain`` (create to the
LogSet's Ready written) and ``dependent_chain`` (that to the last TN, CN or
proxy pod Ready). The ideal run (``converge_ideal.py``) starts every pod at
once, so it takes about the longer of the two (its TN and CN still register
only once HAKeeper runs);
``floor_ratio`` is their sum over that, the least ``converge_ideal_ratio`` an
operator that keeps the wait can reach on this machine.

    python bench/operator_timeline.py [--clusters 1]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any

from bench_support import print_figures
from mo_devkit.testing import cluster_manifest
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.controller.controller import Request
from mo_operator.matrixone import labels
from operator_support import (
    SMALL,
    ClusterRef,
    OperatorRunner,
    Watcher,
    Write,
    add_operator_arguments,
    client_of,
    common,
    layout,
    log,
    operator_settings,
    target,
)
from support_reconciles import Reconciles

SETS = ("LogSet", "DNSet", "CNSet", "ProxySet")
DEPENDENTS = {"DNSet": "dnset", "CNSet": "cnset", "ProxySet": "proxyset"}
"""The sets that wait for the LogSet, with their controllers' names."""
WORKLOADS = {"LogSet": "StatefulSet", "DNSet": "StatefulSet", "CNSet": "Pod", "ProxySet": "Deployment"}
"""What each set's workload write is (a CN set creates its pods itself)."""


class Pods:
    """When each pod was first seen created, scheduled, Running and Ready (a watch)."""

    def __init__(self, informer: SharedInformer) -> None:
        self.informer = informer
        self.seen: dict[tuple[str, str], dict[str, float]] = {}
        self.component: dict[tuple[str, str], str] = {}
        informer.add_event_handler(self._on, lambda _old, new: self._on(new), lambda _obj: None)

    def _on(self, pod: Mapping[str, Any]) -> None:
        meta = pod["metadata"]
        key = (meta["namespace"], meta["name"])
        now = time.perf_counter()
        steps = self.seen.setdefault(key, {"created": now})
        self.component[key] = (meta.get("labels") or {}).get(labels.COMPONENT, "")
        status = pod.get("status") or {}
        if (pod.get("spec") or {}).get("nodeName"):
            steps.setdefault("scheduled", now)
        if status.get("phase") == "Running":
            steps.setdefault("running", now)
        if any(
            c.get("type") == "ContainersReady" and c.get("status") == "True"
            for c in status.get("conditions") or ()
        ):
            steps.setdefault("containers_ready", now)
        if any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ()
        ):
            steps.setdefault("ready", now)

    def of(self, namespace: str, component: str) -> list[dict[str, float]]:
        return [s for k, s in self.seen.items() if k[0] == namespace and self.component.get(k) == component]


def _ready(body: Any) -> bool:
    conditions = ((body or {}).get("status") or {}).get("conditions") or ()
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _first(writes: list[Write], test: Callable[[Write], bool]) -> float | None:
    return next((w.done for w in writes if test(w)), None)


def cluster_timeline(
    ref: ClusterRef, t0: float, writes: list[Write], reconciles: Reconciles, pods: Pods, ready_seen: float
) -> dict[str, float]:
    """One cluster's steps, in seconds from its create answered."""
    mine = [w for w in writes if w.namespace == ref.namespace]
    steps: dict[str, float | None] = {
        "cluster_reconcile_started": reconciles.first_after(
            "matrixonecluster", Request(ref.namespace, ref.name), t0
        ),
    }

    def status(kind: str, test: Callable[[Any], bool]) -> float | None:
        return _first(mine, lambda w: w.kind == kind and w.subresource == "status" and test(w.body))

    for kind in SETS:
        steps[f"{kind}_applied"] = _first(mine, lambda w, k=kind: w.kind == k and w.subresource is None)
        steps[f"{kind}_first_status"] = status(kind, lambda b: True)
    steps["LogSet_bootstrap_recorded"] = _first(
        mine, lambda w: w.kind == "LogSet" and w.verb == "patch" and w.subresource is None
    )
    discovery = status("LogSet", lambda b: bool((b.get("status") or {}).get("discovery")))
    steps["LogSet_discovery_written"] = discovery
    for kind, workload in WORKLOADS.items():
        steps[f"{kind}_workload_applied"] = _first(
            mine,
            lambda w, k=kind, wl=workload: (
                w.kind == wl
                and w.subresource is None
                and w.verb in ("apply", "create")
                and _owned_by(w.body, k)
            ),
        )
        ps = pods.of(ref.namespace, kind)
        for phase in ("created", "scheduled", "running", "containers_ready", "ready"):
            times = [p[phase] for p in ps if phase in p]
            steps[f"pod_{kind}_{phase}"] = max(times) if times and len(times) == len(ps) else None
        steps[f"{kind}_ready_written"] = status(kind, _ready)
    logset_ready = steps.get("LogSet_ready_written")
    if logset_ready is not None:
        for kind, controller in DEPENDENTS.items():
            name = ref.name + ("-tp" if kind == "CNSet" else "")
            steps[f"{kind}_reconciled_after_logset_ready"] = reconciles.first_after(
                controller, Request(ref.namespace, name), logset_ready
            )
    steps["cluster_ready_written"] = status("MatrixOneCluster", _ready)
    steps["cluster_ready_seen"] = ready_seen
    return {k: v - t0 for k, v in steps.items() if v is not None}


def _owned_by(body: Any, kind: str) -> bool:
    meta = (body or {}).get("metadata") or {}
    return (meta.get("labels") or {}).get(labels.COMPONENT) == kind


GAPS = (
    ("cluster create -> cluster reconcile", None, "cluster_reconcile_started"),
    ("log pod Ready -> LogSet Ready written", "pod_LogSet_ready", "LogSet_ready_written"),
    ("LogSet Ready -> TN reconcile", "LogSet_ready_written", "DNSet_reconciled_after_logset_ready"),
    ("LogSet Ready -> CN reconcile", "LogSet_ready_written", "CNSet_reconciled_after_logset_ready"),
    ("LogSet Ready -> proxy reconcile", "LogSet_ready_written", "ProxySet_reconciled_after_logset_ready"),
    ("LogSet Ready -> TN workload", "LogSet_ready_written", "DNSet_workload_applied"),
    ("DNSet Ready -> CN pod create", "DNSet_ready_written", "CNSet_workload_applied"),
    ("LogSet Ready -> proxy workload", "LogSet_ready_written", "ProxySet_workload_applied"),
    ("TN pod Ready -> DNSet Ready written", "pod_DNSet_ready", "DNSet_ready_written"),
    ("CN pod Ready -> CNSet Ready written", "pod_CNSet_ready", "CNSet_ready_written"),
    ("proxy pod Ready -> ProxySet Ready written", "pod_ProxySet_ready", "ProxySet_ready_written"),
    ("last set Ready written -> cluster Ready written", "last_set_ready", "cluster_ready_written"),
)
"""Where the operator, not a pod or MatrixOne, may be what a cluster waits for."""


def with_derived(steps: dict[str, float]) -> dict[str, float]:
    out = dict(steps)
    sets = [steps.get(f"{k}_ready_written") for k in SETS]
    if all(s is not None for s in sets):
        out["last_set_ready"] = max(s for s in sets if s is not None)
    pods = [steps.get(f"pod_{k}_ready") for k in DEPENDENTS]
    if "LogSet_ready_written" in steps and all(p is not None for p in pods):
        last = max(p for p in pods if p is not None)
        out["log_chain"] = steps["LogSet_ready_written"]
        out["dependent_chain"] = last - steps["LogSet_ready_written"]
    return out


def summary(timelines: list[dict[str, float]], extra: dict[str, Any]) -> list[dict[str, Any]]:
    def stats(values: list[float]) -> dict[str, Any]:
        return {
            "value": ms(statistics.median(values)),
            "unit": "ms",
            "max": ms(max(values)),
            "n": len(values),
        }

    figures: list[dict[str, Any]] = []
    names = sorted(
        {k for t in timelines for k in t}, key=lambda k: statistics.median(t[k] for t in timelines if k in t)
    )
    for step in names:
        figures.append(
            {
                "figure": f"step {step}",
                **stats([t[step] for t in timelines if step in t]),
                **extra,
            }
        )
    for label, start, end in GAPS:
        values = [
            t[end] - (t[start] if start else 0.0)
            for t in timelines
            if end in t and (start is None or start in t)
        ]
        if values:
            figures.append({"figure": f"gap {label}", **stats(values), **extra})
    chains = [t for t in timelines if "log_chain" in t]
    if chains:
        log_chain = statistics.median(t["log_chain"] for t in chains)
        dependent = statistics.median(t["dependent_chain"] for t in chains)
        figures.append(
            {
                "figure": "floor_ratio",
                "value": round((log_chain + dependent) / max(log_chain, dependent), 2),
                "unit": "x",
                "log_chain_ms": ms(log_chain),
                "dependent_chain_ms": ms(dependent),
                "note": "(log chain + dependent chain) / the longer of the two: the least converge/ideal"
                " an operator that waits for the LogSet reaches",
                **extra,
            }
        )
    return figures


def trace(ref: ClusterRef, t0: float, writes: list[Write], reconciles: Reconciles, pods: Pods) -> None:
    """The first cluster's writes, reconcile starts and pod steps in order, on stderr."""
    lines: list[tuple[float, str]] = [
        (
            w.issued,
            f"write {w.verb} {w.kind}/{w.name}{'/' + w.subresource if w.subresource else ''}"
            f" ({ms(w.done - w.issued)} ms){_conditions(w.body)}",
        )
        for w in writes
        if w.namespace == ref.namespace
    ]
    lines += [
        (t, f"reconcile {controller} {req.name}")
        for (controller, req), starts in reconciles.started_at.items()
        if req.namespace == ref.namespace
        for t in starts
    ]
    lines += [
        (t, f"pod {key[1]} {phase}")
        for key, steps in pods.seen.items()
        if key[0] == ref.namespace
        for phase, t in steps.items()
    ]
    for t, line in sorted(lines):
        log(f"{ms(t - t0):>9} ms  {line}")


def _conditions(body: Any) -> str:
    status = (body or {}).get("status") if isinstance(body, Mapping) else None
    if not isinstance(status, Mapping):
        return ""
    said = [f"{c.get('type')}={c.get('status')}" for c in status.get("conditions") or ()]
    return f" [{' '.join(said)}{' discovery' if status.get('discovery') else ''}]"


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    async with target() as world:
        namespaces = await world.add_namespaces(args.clusters)
        clusters = layout(args.clusters, namespaces)
        op = OperatorRunner(
            world,
            settings=operator_settings(args),
            qps=args.qps,
            status_window=args.status_window,
            strict_reads=False,
        )
        reconciles = Reconciles()
        watcher = Watcher(world)
        pod_client = client_of(world, "bench-timeline")
        pods = Pods(InformerFactory(pod_client).informer(r.PODS))
        created: dict[ClusterRef, float] = {}
        try:
            operator = op.build()
            for controller in operator.controllers:
                controller.observers.append(reconciles)
            task = op.launch()
            while not operator.informers.has_synced():
                if task.done():
                    task.result()
                await asyncio.sleep(0.01)
            await watcher.start()
            pods.informer.start()
            await pods.informer.wait_synced()
            log(f"creating {args.clusters} MatrixOneClusters")

            async def create(ref: ClusterRef) -> None:
                manifest = cluster_manifest(ref.name, SMALL)
                manifest["metadata"]["namespace"] = ref.namespace
                await world.client.create(r.MATRIXONE_CLUSTERS, world.for_cluster(manifest))
                created[ref] = time.perf_counter()

            await asyncio.gather(*(create(c) for c in clusters))
            last = await watcher.wait_all_ready(clusters, args.converge_timeout)
            log(f"all Ready after {last - min(created.values()):.1f}s")
            if args.trace:
                trace(clusters[0], created[clusters[0]], op.seen.writes, reconciles, pods)
            timelines = [
                with_derived(
                    cluster_timeline(c, created[c], op.seen.writes, reconciles, pods, watcher.first_ready[c])
                )
                for c in clusters
            ]
        finally:
            await op.stop()
            await watcher.stop()
            await pods.informer.stop()
            await pod_client.close()
    return summary(timelines, {"clusters": args.clusters, **common(args)})


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clusters", type=int, default=1)
    p.add_argument("--trace", action="store_true", help="the first cluster's steps in order, on stderr")
    add_operator_arguments(p)
    return p


def main() -> None:
    print_figures(asyncio.run(run(parser().parse_args())))


if __name__ == "__main__":
    main()
