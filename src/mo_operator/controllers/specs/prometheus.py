"""How Prometheus finds a set's MatrixOne metrics (port 7001), as upstream exposes them.

With ``exportToPrometheus`` on, ``promDiscoveryScheme`` says where the scrape
annotations go: on the pods (``Pod``) or on a metric Service ``<set>-<suffix>-metric``
selecting them (``Service``, the default). Every component gets the same
treatment, CN and proxy included (upstream bug #600, fixed by #601). With it off,
or under the Pod scheme, the metric Service is not wanted: one the set owns is
deleted, so turning the switch off leaves no stale scrape target behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.common import PodSet
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.meta import is_controlled_by, is_deleting, name_of, namespace_of, set_labels, uid_of
from ..framework.writes import Delete
from .services import metric_service

SERVICE_SCHEME = "Service"
POD_SCHEME = "Pod"

Obj = dict[str, Any]


def _scheme(spec: PodSet) -> str | None:
    """The discovery scheme in force, None when metrics are not exported (the
    scheme left out means Service, as upstream's getter says)."""
    if not spec.export_to_prometheus:
        return None
    return spec.prom_discovery_scheme or SERVICE_SCHEME


def discovered_by_service(spec: PodSet) -> bool:
    return _scheme(spec) == SERVICE_SCHEME


def discovered_by_pod(spec: PodSet) -> bool:
    return _scheme(spec) == POD_SCHEME


def scrape_annotations() -> dict[str, str]:
    """Upstream's two annotations; MatrixOne serves ``/metrics``, Prometheus's
    default path, so upstream sets no ``prometheus.io/path`` and neither do we."""
    return {labels.PROMETHEUS_SCRAPE: "true", labels.PROMETHEUS_PORT: str(ports.METRICS)}


def desired_metric_service(owner: Mapping[str, Any], component: Component, spec: PodSet) -> Obj | None:
    """The set's metric Service, stamped, when Prometheus discovers the set by Service."""
    if not discovered_by_service(spec):
        return None
    meta = owner["metadata"]
    namespace, set_name = meta.get("namespace") or "", meta["name"]
    selector = labels.sub_resource_labels(component, set_name, namespace)
    name = names.metric_service_name(component, set_name)
    return stamped(metric_service(owner, name, set_labels(component, owner), selector, scrape_annotations()))


def unwanted_metric_service(owner: Mapping[str, Any], cached: Mapping[str, Any] | None) -> Delete | None:
    """The deletion of the set's cached metric Service once it should have none."""
    if cached is None or not is_controlled_by(cached, owner) or is_deleting(cached):
        return None
    return Delete(r.SERVICES, namespace_of(cached), name_of(cached), uid=uid_of(cached))
