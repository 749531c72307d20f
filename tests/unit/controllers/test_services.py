"""The Services of a set (controllers/specs/services.py), shaped as upstream makes them."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.specs.services import (
    client_service,
    discovery_service,
    headless_service,
    metric_service,
)
from mo_operator.matrixone import labels

Obj = dict[str, Any]
OWNER = {
    "apiVersion": "core.matrixorigin.io/v1alpha1",
    "kind": "CNSet",
    "metadata": {"name": "mo-tp", "namespace": "ns", "uid": "uid-1"},
}
LABELS = {labels.INSTANCE: "mo-tp", labels.COMPONENT: "CNSet", labels.NAMESPACE: "ns", labels.CLUSTER: "mo"}
SELECTOR = {labels.INSTANCE: "mo-tp", labels.COMPONENT: "CNSet", labels.NAMESPACE: "ns"}


def assert_owned(svc: Obj, name: str) -> None:
    meta = svc["metadata"]
    assert svc["apiVersion"] == "v1" and svc["kind"] == "Service"
    assert meta["name"] == name and meta["namespace"] == "ns"
    assert meta["labels"] == LABELS
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "CNSet",
            "name": "mo-tp",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert svc["spec"]["selector"] == SELECTOR


def test_headless_service_publishes_not_ready_pods() -> None:
    svc = headless_service(OWNER, "mo-tp-cn-headless", LABELS, SELECTOR, [("raft", 32000), ("gossip", 32002)])
    assert_owned(svc, "mo-tp-cn-headless")
    assert svc["spec"]["clusterIP"] == "None"
    assert svc["spec"]["publishNotReadyAddresses"] is True
    assert svc["spec"]["ports"] == [
        {"name": "raft", "port": 32000, "targetPort": 32000, "protocol": "TCP"},
        {"name": "gossip", "port": 32002, "targetPort": 32002, "protocol": "TCP"},
    ]


def test_discovery_service_is_the_hakeeper_address() -> None:
    svc = discovery_service(OWNER, "mo-log-discovery", LABELS, SELECTOR)
    assert_owned(svc, "mo-log-discovery")
    assert svc["spec"]["ports"] == [
        {"name": "logservice", "port": 32001, "targetPort": 32001, "protocol": "TCP"}
    ]
    assert "clusterIP" not in svc["spec"] and "type" not in svc["spec"]


def test_metric_service_serves_port_7001_of_the_sets_pods_with_its_annotations() -> None:
    annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": "7001"}
    svc = metric_service(OWNER, "mo-tp-cn-metric", LABELS, SELECTOR, annotations)
    assert_owned(svc, "mo-tp-cn-metric")
    assert svc["spec"]["selector"] == SELECTOR
    assert svc["spec"]["ports"] == [{"name": "metric", "port": 7001, "targetPort": 7001, "protocol": "TCP"}]
    assert svc["metadata"]["annotations"] == annotations
    assert "clusterIP" not in svc["spec"] and "type" not in svc["spec"]


def test_client_service_takes_type_node_port_and_annotations_from_the_spec() -> None:
    svc = client_service(OWNER, "mo-tp-cn", LABELS, SELECTOR, "service", 6001, service_type=None)
    assert_owned(svc, "mo-tp-cn")
    assert svc["spec"]["type"] == "ClusterIP"
    assert svc["spec"]["ports"] == [{"name": "service", "port": 6001, "targetPort": 6001, "protocol": "TCP"}]
    assert "annotations" not in svc["metadata"]

    node_port = client_service(
        OWNER,
        "mo-tp-cn",
        LABELS,
        SELECTOR,
        "service",
        6001,
        service_type="NodePort",
        node_port=30001,
        annotations={"lb": "internal"},
    )
    assert node_port["spec"]["type"] == "NodePort"
    assert node_port["spec"]["ports"][0]["nodePort"] == 30001
    assert node_port["metadata"]["annotations"] == {"lb": "internal"}

    lb = client_service(OWNER, "mo-proxy", LABELS, SELECTOR, "proxy", 6001, service_type="LoadBalancer")
    assert lb["spec"]["type"] == "LoadBalancer" and "nodePort" not in lb["spec"]["ports"][0]


def test_a_node_port_is_ignored_for_cluster_ip() -> None:
    svc = client_service(
        OWNER, "mo-tp-cn", LABELS, SELECTOR, "service", 6001, service_type=None, node_port=30001
    )
    assert "nodePort" not in svc["spec"]["ports"][0]


def test_services_do_not_share_the_callers_maps() -> None:
    selector = dict(SELECTOR)
    svc = discovery_service(OWNER, "mo-log-discovery", LABELS, selector)
    svc["spec"]["selector"]["x"] = "y"
    svc["metadata"]["labels"]["x"] = "y"
    assert "x" not in selector and "x" not in LABELS
