"""Scenario 18: MatrixOne's metrics are discoverable for every component, and the
operator reports upstream's condition gauges.

With ``exportToPrometheus: true`` and the default Service scheme, each set gets a
metric Service ``<set>-<suffix>-metric`` carrying the scrape annotations, on port
7001 and selecting the set's pods, and its MatrixOne config turns the endpoint on.
Switching to the Pod scheme moves the annotations to the pods and removes the
Services."""

from __future__ import annotations

import json
import tomllib
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.metrics.metrics import REGISTRY
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .harness import OperatorRunner, World, eventually

Obj = dict[str, Any]
SCRAPE = {"prometheus.io/scrape": "true", "prometheus.io/port": "7001"}
# (component, set name, its spec's path in the cluster, its metric Service)
SETS = (
    (Component.LOG, "mo", "/spec/logService", "mo-log-metric"),
    (Component.TN, "mo", "/spec/tn", "mo-dn-metric"),
    (Component.CN, "mo-tp", "/spec/cnGroups/0", "mo-tp-cn-metric"),
    (Component.PROXY, "mo", "/spec/proxy", "mo-proxy-metric"),
)


def _exported(spec: Obj) -> Obj:
    return {**spec, "exportToPrometheus": True}


def _scrape_annotations(obj: Obj) -> dict[str, str]:
    annotations = obj["metadata"].get("annotations") or {}
    return {k: v for k, v in annotations.items() if k.startswith("prometheus.io/")}


async def _set_pods(world: World, component: Component, name: str) -> list[Obj]:
    return await world.pods(**labels.sub_resource_labels(component, name, world.namespace))


async def _metrics_enabled(world: World, pod: Obj) -> bool:
    """Whether the MatrixOne config the pod runs turns the Prometheus endpoint on."""
    config = next(v["configMap"]["name"] for v in pod["spec"]["volumes"] if v["name"] == "config")
    data = (await world.get(r.CONFIGMAPS, config) or {}).get("data") or {}
    return any(
        tomllib.loads(text).get("observability", {}).get("enableMetricToProm") is True
        for key, text in data.items()
        if key.endswith(".toml")
    )


def _gauge(kind: str, namespace: str, name: str, ctype: str) -> float | None:
    return REGISTRY.get_sample_value(
        f"matrixone_{kind}_condition", {"namespace": namespace, "name": name, "type": ctype}
    )


async def test_every_component_is_discoverable_by_service_then_by_pod(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo", proxy={"replicas": 1})
    spec = manifest["spec"]
    spec["logService"] = _exported(spec["logService"])
    spec["tn"] = _exported(spec["tn"])
    spec["cnGroups"] = [_exported(spec["cnGroups"][0])]
    # As upstream, a cluster's proxy gets no defaulted scheme and its webhook wants one.
    spec["proxy"] = {**_exported(spec["proxy"]), "promDiscoveryScheme": "Service"}
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)

    for component, name, _, service_name in SETS:
        svc = await world.get(r.SERVICES, service_name)
        assert svc is not None, f"no metric Service {service_name}"
        assert _scrape_annotations(svc) == SCRAPE
        assert [(p["name"], p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [
            ("metric", 7001, 7001)
        ]
        selector = svc["spec"]["selector"]
        assert selector == labels.sub_resource_labels(component, name, world.namespace)
        pods = await _set_pods(world, component, name)
        assert pods, f"the selector of {service_name} selects no pod"
        for pod in pods:
            assert _scrape_annotations(pod) == {}, f"{pod['metadata']['name']} annotated under Service"
            assert await _metrics_enabled(world, pod), f"{pod['metadata']['name']} exports no metrics"

    ns = world.namespace
    expected = (
        ("matrixonecluster", "mo"),
        ("logset", "mo"),
        ("dnset", "mo"),
        ("cnset", "mo-tp"),
    )
    await eventually(
        lambda: all(_gauge(kind, ns, name, "Ready") == 1.0 for kind, name in expected),
        message="the condition gauges report every set Ready",
    )
    assert _gauge("proxyset", ns, "mo", "Ready") is None  # upstream has no proxy gauge

    patch = [{"op": "add", "path": f"{path}/promDiscoveryScheme", "value": "Pod"} for _, _, path, _ in SETS]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))

    async def moved_to_pods() -> bool:
        for component, name, _, service_name in SETS:
            if await world.get(r.SERVICES, service_name) is not None:
                return False
            pods = await _set_pods(world, component, name)
            if not pods or any(_scrape_annotations(p) != SCRAPE for p in pods):
                return False
        return True

    await eventually(moved_to_pods, timeout=120, message="annotations on every pod, no metric Service")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    await eventually(
        lambda: all(_gauge(kind, ns, name, "Ready") == 1.0 for kind, name in expected),
        message="the condition gauges report every set Ready again",
    )
