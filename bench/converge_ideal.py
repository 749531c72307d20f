"""The fair reference of ``operator_converge.py``: what a perfect operator
that knew the end state would take.

The objects a converged run ended with (every object the operator made,
with its final spec, and the MatrixOneClusters) are created at once by a
plain loop on a fresh cluster that runs pods (the same kind of target as
the operator's run: the embedded control plane with its workload simulator,
or the real API server with the simulated kubelet attached), and the clock
stops when every pod the simulated kubelet runs is Ready. Unlike a create
loop alone, this pays what no operator can avoid: the workload controllers,
the scheduler, the kubelet starting pods and MatrixOne's own start
(HAKeeper bootstrap, stores registering). The CN pods' readiness gate
(``matrixorigin.io/cn-store``) is left out: it is the operator's word that
HAKeeper holds the store Working, which a perfect operator would give the
moment the store registers, and the simulated kubelet already makes the
container ready only then.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from mo_devkit.testing import bounded, condition
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.cache.informer_factory import InformerFactory
from support_objects import Captured
from support_target import log, target

Obj = dict[str, Any]


def _renamed(objects: Sequence[Captured], rename: Mapping[str, str]) -> list[Captured]:
    """``objects`` moved to other namespaces (every mention of the old names replaced)."""
    text = json.dumps([c.body for c in objects])
    for old, new in rename.items():
        if old != new:
            text = text.replace(old, new)
    return [
        Captured(c.res, body, None, c.by_operator) for c, body in zip(objects, json.loads(text), strict=True)
    ]


def _without_gate(body: Obj) -> Obj:
    if body.get("kind") == "Pod":
        body.get("spec", {}).pop("readinessGates", None)
    return body


def _ready(pod: Mapping[str, Any]) -> bool:
    """A pod's Ready (a pod has no observedGeneration: not the kit's ``is_ready``)."""
    return condition(pod, "Ready").get("status") == "True"


def _count_ready(pods: SharedInformer, namespaces: Sequence[str]) -> tuple[int, int]:
    """Pods of ``namespaces`` in the watch's cache, and how many are Ready."""
    found = [p for ns in namespaces for p in pods.list(ns)]
    return len(found), sum(1 for p in found if _ready(p))


async def ideal(
    objects: Sequence[Captured], namespaces: Sequence[str], pods: int, concurrency: int, timeout: float
) -> float:
    """Seconds from creating ``objects`` at once until ``pods`` pods are Ready (see the module doc)."""
    async with target() as world:
        client = world.client
        fresh = await world.add_namespaces(len(namespaces))
        moved = _renamed(objects, dict(zip(namespaces, fresh, strict=True)))
        watch = InformerFactory(client).informer(r.PODS)  # every namespace: one watch, no polling
        watch.start()
        await watch.wait_synced()
        t0 = time.perf_counter()
        await bounded(concurrency, [lambda c=c: client.create(c.res, _without_gate(c.body)) for c in moved])
        log(f"ideal: {len(moved)} objects created after {time.perf_counter() - t0:.1f}s; waiting for pods")
        deadline = t0 + timeout
        while (found := _count_ready(watch, fresh))[1] < pods or found[0] < pods:
            if time.perf_counter() > deadline:
                raise TimeoutError(f"ideal: {found[1]}/{pods} pods Ready after {timeout}s")
            await asyncio.sleep(0.02)
        seconds = time.perf_counter() - t0
        await watch.stop()
    return seconds
