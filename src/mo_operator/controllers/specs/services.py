"""The Services of a set, named and shaped as upstream makes them.

Headless Services give each pod a stable DNS name (a store's address);
client Services carry MySQL traffic to CNs and proxies; the LogSet's
discovery Service is the HAKeeper address TN, CN and proxy find the cluster
by; metric Services expose port 7001 to Prometheus (prometheus.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.matrixone import ports

from ..framework.meta import child_metadata

Obj = dict[str, Any]


def _service(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    service_ports: Sequence[Obj],
    *,
    annotations: Mapping[str, str] | None = None,
    **spec: Any,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": child_metadata(owner, name, obj_labels, annotations),
        "spec": {"selector": dict(selector), "ports": [dict(p) for p in service_ports], **spec},
    }


def _port(name: str, port: int) -> Obj:
    return {"name": name, "port": port, "targetPort": port, "protocol": "TCP"}


def headless_service(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    service_ports: Sequence[tuple[str, int]],
) -> Obj:
    """Stable per-pod DNS names; not-ready pods are published too, since stores
    must find each other while they start (raft peers, HAKeeper members)."""
    return _service(
        owner,
        name,
        obj_labels,
        selector,
        [_port(n, p) for n, p in service_ports],
        clusterIP="None",
        publishNotReadyAddresses=True,
    )


def discovery_service(
    owner: Mapping[str, Any], name: str, obj_labels: Mapping[str, str], selector: Mapping[str, str]
) -> Obj:
    """The HAKeeper discovery address of a LogSet (port 32001)."""
    return _service(owner, name, obj_labels, selector, [_port("logservice", ports.LOG_SERVICE)])


def metric_service(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    annotations: Mapping[str, str],
) -> Obj:
    """Port 7001 (named ``metric``) of every pod of the set, annotated for
    Prometheus to discover (see prometheus.py for when it exists)."""
    return _service(
        owner,
        name,
        obj_labels,
        selector,
        [_port(ports.METRICS_PORT_NAME, ports.METRICS)],
        annotations=annotations,
    )


def client_service(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    port_name: str,
    port: int,
    *,
    service_type: str | None,
    node_port: int | None = None,
    annotations: Mapping[str, str] | None = None,
) -> Obj:
    """The MySQL endpoint of CNs or proxies (and the WebUI's console): the spec's
    ``serviceType`` (ClusterIP when unset), ``nodePort`` and ``serviceAnnotations``."""
    service_port = _port(port_name, port)
    service_type = service_type or "ClusterIP"
    if service_type != "ClusterIP" and node_port:
        service_port["nodePort"] = int(node_port)
    return _service(
        owner,
        name,
        obj_labels,
        selector,
        [service_port],
        annotations=dict(annotations) if annotations else None,
        type=service_type,
    )
