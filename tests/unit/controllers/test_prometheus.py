"""Prometheus discovery of a set's metrics (controllers/specs/prometheus.py): the
metric Service exists exactly under the Service scheme, for every component."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.api.base import parse
from mo_operator.api.common import PodSet
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.desired import stamped
from mo_operator.controllers.framework.meta import set_labels
from mo_operator.controllers.framework.writes import Delete, applies
from mo_operator.controllers.specs.prometheus import (
    desired_metric_service,
    discovered_by_pod,
    discovered_by_service,
    scrape_annotations,
    unwanted_metric_service,
)
from mo_operator.controllers.specs.services import metric_service
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]


def pod_set(**fields: Any) -> PodSet:
    return parse(PodSet, {"replicas": 1, **fields})


SERVICE = pod_set(exportToPrometheus=True)
POD = pod_set(exportToPrometheus=True, promDiscoveryScheme="Pod")
ANNOTATIONS = {"prometheus.io/scrape": "true", "prometheus.io/port": "7001"}


def owner(kind: str, name: str = "mo", uid: str = "uid-1") -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "uid": uid, "labels": {labels.CLUSTER: "mo"}},
    }


def test_the_scheme_defaults_to_service_and_needs_export_on() -> None:
    assert discovered_by_service(SERVICE) and not discovered_by_pod(SERVICE)
    assert discovered_by_service(pod_set(exportToPrometheus=True, promDiscoveryScheme="Service"))
    assert discovered_by_pod(POD) and not discovered_by_service(POD)
    for off in (
        pod_set(),
        pod_set(exportToPrometheus=False, promDiscoveryScheme="Pod"),
        pod_set(promDiscoveryScheme="Service"),
    ):
        assert not discovered_by_service(off) and not discovered_by_pod(off)
    assert scrape_annotations() == ANNOTATIONS


@pytest.mark.parametrize(
    ("component", "name"),
    [
        (Component.LOG, "mo-log-metric"),
        (Component.TN, "mo-dn-metric"),
        (Component.CN, "mo-cn-metric"),
        (Component.PROXY, "mo-proxy-metric"),
    ],
)
def test_every_component_gets_a_metric_service_under_the_service_scheme(
    component: Component, name: str
) -> None:
    svc = desired_metric_service(owner(component.kind), component, SERVICE)
    assert svc is not None
    assert (svc["kind"], svc["metadata"]["name"]) == ("Service", name)
    assert ANNOTATIONS.items() <= svc["metadata"]["annotations"].items()
    assert svc["metadata"]["labels"] == set_labels(component, owner(component.kind))
    assert svc["spec"]["selector"] == labels.sub_resource_labels(component, "mo", "ns")
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("metric", 7001)]


def test_an_up_to_date_metric_service_is_not_written() -> None:
    cn = owner("CNSet")
    existing = stamped(
        metric_service(
            cn,
            "mo-cn-metric",
            set_labels(Component.CN, cn),
            labels.sub_resource_labels(Component.CN, "mo", "ns"),
            ANNOTATIONS,
        )
    )
    svc = desired_metric_service(cn, Component.CN, SERVICE)
    assert svc is not None
    assert applies([(r.SERVICES, svc)], lambda res, name: existing, {}) == []
    assert applies([(r.SERVICES, svc)], lambda res, name: None, {}) != []


@pytest.mark.parametrize("spec", [pod_set(), pod_set(exportToPrometheus=False), POD])
def test_an_owned_metric_service_is_deleted_when_not_wanted(spec: PodSet) -> None:
    cn = owner("CNSet")
    existing = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": "mo-cn-metric",
            "namespace": "ns",
            "uid": "svc-uid",
            "ownerReferences": [{"uid": "uid-1", "controller": True}],
        },
    }
    assert desired_metric_service(cn, Component.CN, spec) is None
    assert unwanted_metric_service(cn, existing) == Delete(r.SERVICES, "ns", "mo-cn-metric", uid="svc-uid")


def test_a_metric_service_of_someone_else_is_left_alone() -> None:
    foreign = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mo-cn-metric", "namespace": "ns", "uid": "svc-uid"},
    }
    assert unwanted_metric_service(owner("CNSet"), foreign) is None
