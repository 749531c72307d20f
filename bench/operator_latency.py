"""Latency from a spec change to the first write that answers it (p50,
p99), under the load of ``--clusters`` ready MatrixOneClusters.

Once the clusters are Ready (and the operator has gone ``--settle``
seconds without writing), a user changes one thing at a time: the replicas
of a cluster's CN group ``tp``, by a JSON patch of the MatrixOneCluster,
one cluster after the other, alternately scaling out by one and back. The
clock starts just before the user's request is sent; it stops when the
operator's client finishes the write that answers it: the server-side
apply of that cluster's CNSet with the new replica count (seen by a write
hook on the operator's client, each write matched by kind, name and body). The next change follows at once, so the work each change sets
off (a CN pod created and started, or drained and removed, statuses
written) is the load the next one meets, on top of every ready set looking
at MatrixOne once per ``--poll-seconds``.

``issued`` in each line stops the clock when that write's request was sent
instead (the operator's reaction without the write's own round trip);
``user_write`` is the user's own request (how busy the API server is).
``spec_change_operator_reaction_p99`` is the operator's own share: from the
user's request answered to the answering write sent; what the server adds
(the user's write, the answer's round trip) is beside it, so a figure over
its goal says whether the operator or the server took the time. That share
is split (``spec_change_breakdown``, p50 and p99 of each part) into the
watch's delivery (request answered to the operator's informer handing on
the new generation), the queue (to the cluster's reconcile starting: the
work queue, its rate limiter, a free worker) and the reconcile (to the
answering write sent: reading the cache, rendering the children, comparing
them with the cache, the status), seen by an event handler on the
operator's informer and a ``ReconcileObserver``.

    python bench/operator_latency.py [--clusters 100] [--changes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from typing import Any

from bench_support import print_figures
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.controller.controller import Request
from operator_support import (
    ClusterRef,
    Write,
    add_operator_arguments,
    common,
    converged_load,
    log,
    operator_settings,
    quiet,
)
from support_reconciles import Reconciles


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))
    return ordered[int(rank) - 1]


async def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    done: list[float] = []
    issued: list[float] = []
    user: list[float] = []
    reaction: list[float] = []
    answer_write: list[float] = []
    parts: dict[str, list[float]] = {"delivery": [], "queue": [], "reconcile": []}
    delivered: dict[tuple[str, str, int], float] = {}
    reconciles = Reconciles()

    def seen(_old: Any, new: Any) -> None:
        meta = new["metadata"]
        delivered.setdefault((meta["namespace"], meta["name"], int(meta["generation"])), time.perf_counter())

    async with converged_load(
        args.clusters,
        settings=operator_settings(args),
        workers=args.workers,
        qps=args.qps,
        timeout=args.converge_timeout,
    ) as load:
        op = load.operator
        for controller in op.controllers:
            controller.observers.append(reconciles)
        assert op.operator is not None
        for informer in op.operator.caches.informers(r.MATRIXONE_CLUSTERS):
            informer.add_event_handler(None, seen, None)
        if not await quiet(op, args.settle, timeout=60.0):
            log("the operator kept writing after convergence; measuring anyway")
        waiting: dict[tuple[str, str, int], asyncio.Future[Write]] = {}

        def answer(w: Write) -> None:
            spec = (w.body.get("spec") or {}) if isinstance(w.body, dict) else {}
            if w.kind != "CNSet" or w.verb != "apply" or w.subresource or "replicas" not in spec:
                return
            found = waiting.get((w.namespace, w.name, int(spec["replicas"])))
            if found is not None and not found.done():
                found.set_result(w)

        op.seen.on_write.append(answer)
        replicas = {c: load.watcher.get(c)["spec"]["cnGroups"][0]["replicas"] for c in load.clusters}  # type: ignore[index]
        base = dict(replicas)
        log(f"{args.changes} changes, one at a time")
        for i in range(args.changes):
            ref: ClusterRef = load.clusters[i % len(load.clusters)]
            want = base[ref] + 1 if replicas[ref] == base[ref] else base[ref]
            future: asyncio.Future[Write] = asyncio.get_running_loop().create_future()
            waiting[(ref.namespace, f"{ref.name}-tp", want)] = future
            patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": want}]
            t0 = time.perf_counter()
            patched = await load.world.client.patch(
                r.MATRIXONE_CLUSTERS, ref.name, patch, ref.namespace, patch_type="json"
            )
            user.append(time.perf_counter() - t0)
            w = await asyncio.wait_for(future, args.timeout)
            done.append(w.done - t0)
            issued.append(w.issued - t0)
            reaction.append(w.issued - t0 - user[-1])
            answer_write.append(w.done - w.issued)
            got = delivered.get((ref.namespace, ref.name, int(patched["metadata"]["generation"])))
            began = reconciles.first_after(
                "matrixonecluster", Request(ref.namespace, ref.name), got or w.issued
            )
            if got is not None and began is not None and began <= w.issued:
                parts["delivery"].append(got - t0 - user[-1])
                parts["queue"].append(began - got)
                parts["reconcile"].append(w.issued - began)
            replicas[ref] = want
        log("done")

    extra = {"clusters": args.clusters, "changes": args.changes, **common(args)}
    return [
        *latency_figures(Samples(done, issued, user, reaction, answer_write), extra),
        breakdown(parts, extra),
    ]


def breakdown(parts: dict[str, list[float]], extra: dict[str, Any]) -> dict[str, Any]:
    """The operator's share by part (p50 and p99 of each; parts of the same changes)."""
    split = {
        f"{part}_{name}": ms(percentile(values, p))
        for part, values in parts.items()
        if values
        for name, p in (("p50", 50), ("p99", 99))
    }
    return {
        "figure": "spec_change_breakdown",
        "value": len(parts["reconcile"]),
        "unit": "changes",
        **split,
        "note": "delivery: the user's request answered to the operator's informer handing the new generation on;"
        " queue: to the cluster's reconcile starting; reconcile: to the answering write sent",
        **extra,
    }


@dataclass(frozen=True)
class Samples:
    """Per change, in seconds from just before the user's request."""

    done: list[float]
    issued: list[float]
    user: list[float]
    reaction: list[float]
    answer_write: list[float]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def latency_figures(x: Samples, extra: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "figure": "spec_change_to_first_write_p50",
            "value": ms(percentile(x.done, 50)),
            "unit": "ms",
            "issued": ms(percentile(x.issued, 50)),
            "user_write": ms(percentile(x.user, 50)),
            **extra,
        },
        {
            "figure": "spec_change_to_first_write_p99",
            "value": ms(percentile(x.done, 99)),
            "unit": "ms",
            "issued": ms(percentile(x.issued, 99)),
            "user_write": ms(percentile(x.user, 99)),
            "max": ms(max(x.done)),
            **extra,
        },
        {
            "figure": "spec_change_operator_reaction_p99",
            "value": ms(percentile(x.reaction, 99)),
            "unit": "ms",
            "p50": ms(percentile(x.reaction, 50)),
            "answer_write_p50": ms(percentile(x.answer_write, 50)),
            "answer_write_p99": ms(percentile(x.answer_write, 99)),
            "note": "from the user's request answered to the operator's answering write sent: the operator's"
            " own share (watch delivery, queue, reconcile); answer_write: that write's round trip",
            **extra,
        },
    ]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clusters", type=int, default=100)
    p.add_argument("--changes", type=int, default=200)
    p.add_argument("--settle", type=float, default=3.0, help="seconds without a write before the changes")
    p.add_argument("--timeout", type=float, default=60.0, help="longest one change may wait for its answer")
    add_operator_arguments(p)
    return p


def main() -> None:
    print_figures(asyncio.run(run(parser().parse_args())))


if __name__ == "__main__":
    main()
