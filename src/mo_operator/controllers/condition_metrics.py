"""Upstream's gauges ``matrixone_<kind>_condition{namespace,name,type}``: 1 while a
condition is True, else 0, for every LogSet, DNSet, CNSet and MatrixOneCluster.

Same names, help, labels and kinds as upstream's collector (matrixorigin/
controller-runtime ``pkg/metrics``), so dashboards and alerts written for the Go
operator keep working. Values are read from the operator's caches at scrape time,
as upstream lists from its cache. The runtime's registry knows nothing of
MatrixOne; this collector is registered on it from here.

An operator adds its caches while it runs; several in one process (tests, a
standby replica) watch the same objects, so a series is reported once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import view
from mo_operator.kube.metrics.metrics import REGISTRY

from .framework import resources as r
from .framework.env import Caches

NAMESPACE = "matrixone"
KINDS: tuple[Resource, ...] = (r.LOGSETS, r.DNSETS, r.CNSETS, r.MATRIXONE_CLUSTERS)
"""Upstream registers these four (no ProxySet, TNSet or WebUI gauge)."""
LABELS = ("namespace", "name", "type")


def metric_name(res: Resource) -> str:
    """``matrixone_<kind lowercased>_condition``, as upstream builds it."""
    return f"{NAMESPACE}_{res.kind.lower()}_condition"


def _family(res: Resource) -> GaugeMetricFamily:
    name = res.kind.lower()
    return GaugeMetricFamily(
        metric_name(res), f"current status condition of {NAMESPACE}/{name}", labels=list(LABELS)
    )


class CachedCollector(Collector):
    """A collector reading the caches of the operators running in this process."""

    def __init__(self) -> None:
        self._sources: list[Caches] = []

    def add(self, caches: Caches) -> None:
        self._sources.append(caches)

    def discard(self, caches: Caches) -> None:
        self._sources = [c for c in self._sources if c is not caches]

    def cached(self, res: Resource) -> list[Any]:
        """Every cached object of ``res``, from every source (a series is reported
        once however many operators watch it: later sources replace earlier ones)."""
        found: dict[tuple[str, str], Any] = {}
        for caches in list(self._sources):
            for obj in caches.list(res):
                body = view(obj)
                found[(body.meta.namespace, body.meta.name)] = obj
        return list(found.values())


class ConditionCollector(CachedCollector):
    """Collects the condition gauges from the caches of the running operators."""

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """The families without samples, so registering reads no cache."""
        for res in KINDS:
            yield _family(res)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        for res in KINDS:
            values: dict[tuple[str, str, str], float] = {}
            for obj in self.cached(res):
                values.update(_samples(obj))
            family = _family(res)
            for key, value in sorted(values.items()):
                family.add_metric(list(key), value)
            yield family


def _samples(obj: Any) -> dict[tuple[str, str, str], float]:
    body = view(obj)
    namespace, name = body.meta.namespace, body.meta.name
    return {
        (namespace, name, str(c.get("type"))): 1.0 if c.get("status") == "True" else 0.0
        for c in body.conditions
        if c.get("type")
    }


CONDITIONS = ConditionCollector()
REGISTRY.register(CONDITIONS)
