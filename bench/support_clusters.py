"""Benchmark MatrixOneClusters: their shape and manifest, creating them as a
user would, and a user's view of when each became Ready."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.controllers.common import resources as r
from mo_operator.kube.client import ApiClient
from mo_operator.kube.conditions import get_condition
from mo_operator.kube.informer import SharedInformer
from mo_operator.kube.informer_factory import InformerFactory
from mo_operator.localcluster.simulator.config import SIMULATED_LABEL
from support_target import Target, bounded, client_of

Obj = dict[str, Any]

GROUP_VERSION = "core.matrixorigin.io/v1alpha1"
VERSION = "2.0.0"
SIMULATED_STORAGE_CLASS = "localcluster-simulated"


@dataclass(frozen=True)
class Shape:
    """Replicas of each component of a benchmark cluster."""

    log: int = 1
    tn: int = 1
    cn: int = 1
    proxy: int = 1

    @property
    def pods(self) -> int:
        return self.log + self.tn + self.cn + self.proxy


SMALL = Shape()
"""The default: every kind of object a cluster has, one pod of each component
(the simulated kubelet, not the operator, pays per pod)."""


@dataclass(frozen=True, order=True)
class ClusterRef:
    namespace: str
    name: str


def layout(count: int, namespaces: Sequence[str]) -> list[ClusterRef]:
    """``count`` clusters spread evenly over ``namespaces``, each uniquely named."""
    return [ClusterRef(namespaces[i % len(namespaces)], f"mo{i:04d}") for i in range(count)]


def cluster_manifest(ref: ClusterRef, shape: Shape, real: bool) -> Obj:
    """A MatrixOneCluster of ``shape`` (log service, TN, a CN group ``tp``, a proxy).
    On a real API server its pods go to the simulated nodes and volumes to their class."""
    spec: Obj = {
        "version": VERSION,
        "logService": {
            "replicas": shape.log,
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": f"bucket/{ref.namespace}/{ref.name}"}},
        },
        "tn": {"replicas": shape.tn},
        "cnGroups": [{"name": "tp", "replicas": shape.cn, "scalingConfig": {"minDelaySeconds": 0}}],
        "proxy": {"replicas": shape.proxy},
    }
    if real:
        toleration = {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        for s in [spec["logService"], spec["tn"], spec["proxy"], *spec["cnGroups"]]:
            s["overlay"] = {"tolerations": [toleration]}
            s["nodeSelector"] = {SIMULATED_LABEL: "true"}
        spec["logService"]["volume"]["storageClassName"] = SIMULATED_STORAGE_CLASS
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "MatrixOneCluster",
        "metadata": {"name": ref.name, "namespace": ref.namespace},
        "spec": spec,
    }


async def create_clusters(client: ApiClient, t: Target, clusters: Sequence[ClusterRef], shape: Shape) -> None:
    """Create the clusters as a user would, 16 requests at a time."""
    await bounded(
        16,
        [
            lambda c=c: client.create(r.MATRIXONE_CLUSTERS, cluster_manifest(c, shape, t.real))
            for c in clusters
        ],
    )


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    """Ready=True, reported for the latest generation."""
    if obj is None:
        return False
    status = obj.get("status") or {}
    ready = get_condition(status.get("conditions") or (), "Ready")
    observed = int(status.get("observedGeneration") or 0) >= int(obj["metadata"].get("generation") or 0)
    return bool(ready and ready.get("status") == "True" and observed)


class Watcher:
    """The user's view of the MatrixOneClusters (an informer on a client of its
    own), recording when each first became Ready."""

    def __init__(self, t: Target) -> None:
        self.client = client_of(t, "bench-watcher")
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
