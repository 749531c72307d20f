"""Benchmark MatrixOneClusters: the kit's manifest at the benchmarks' shape,
spread over namespaces, created as a user would, and a user's view of when
each became Ready (the kit's ``is_ready``)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_devkit.testing import Shape, World, bounded, cluster_manifest, is_ready
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.cache.informer_factory import InformerFactory
from support_target import client_of

SMALL = Shape(log=1, tn=1, cn=1, proxy=1)
"""The benchmarks' shape: every kind of object a cluster has, one pod of each
component (the simulated kubelet, not the operator, pays per pod)."""


@dataclass(frozen=True, order=True)
class ClusterRef:
    namespace: str
    name: str


def layout(count: int, namespaces: Sequence[str]) -> list[ClusterRef]:
    """``count`` clusters spread evenly over ``namespaces``, each uniquely named."""
    return [ClusterRef(namespaces[i % len(namespaces)], f"mo{i:04d}") for i in range(count)]


async def create_clusters(world: World, clusters: Sequence[ClusterRef], shape: Shape) -> None:
    """Create the clusters as a user would, 16 requests at a time (their pods placed
    on the simulated nodes on a real API server)."""

    async def create(ref: ClusterRef) -> None:
        manifest = cluster_manifest(ref.name, shape)
        manifest["metadata"]["namespace"] = ref.namespace
        await world.client.create(r.MATRIXONE_CLUSTERS, world.for_cluster(manifest))

    await bounded(16, [functools.partial(create, c) for c in clusters])


class Watcher:
    """The user's view of the MatrixOneClusters (an informer on a client of its
    own), recording when each first became Ready."""

    def __init__(self, world: World) -> None:
        self.client = client_of(world, "bench-watcher")
        self.informer: SharedInformer = InformerFactory(self.client).informer(r.MATRIXONE_CLUSTERS)
        self.first_ready: dict[ClusterRef, float] = {}
        self.informer.add_event_handler(self._seen, lambda _old, new: self._seen(new), lambda _obj: None)

    def _seen(self, obj: Mapping[str, Any]) -> None:
        ref = ClusterRef(obj["metadata"]["namespace"], obj["metadata"]["name"])
        if ref not in self.first_ready and is_ready(obj):
            self.first_ready[ref] = time.perf_counter()

    def get(self, ref: ClusterRef) -> Mapping[str, Any] | None:
        return self.informer.get(ref.namespace, ref.name)

    async def start(self) -> None:
        self.informer.start()
        await self.informer.wait_synced()

    async def wait_all_ready(self, clusters: Sequence[ClusterRef], timeout: float) -> float:
        """Wait until every cluster is Ready; return when the last one became so."""
        deadline = time.perf_counter() + timeout
        while not all(c in self.first_ready for c in clusters):
            if time.perf_counter() > deadline:
                missing = [c for c in clusters if c not in self.first_ready]
                raise TimeoutError(f"{len(missing)} of {len(clusters)} clusters not Ready after {timeout}s")
            await asyncio.sleep(0.02)
        return max(self.first_ready[c] for c in clusters)

    async def stop(self) -> None:
        await self.informer.stop()
        await self.client.close()
