"""Prometheus discovery of a set's metrics (controllers/specs/prometheus.py): the
metric Service exists exactly under the Service scheme, for every component."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.api.base import parse
from mo_operator.api.common import PodSet
from mo_operator.controllers.framework.desired import stamped
from mo_operator.controllers.framework.meta import set_labels
from mo_operator.controllers.specs.prometheus import (
    discovered_by_pod,
    discovered_by_service,
    scrape_annotations,
    sync_metric_service,
)
from mo_operator.controllers.specs.services import metric_service
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .controller_fakes import FakeCaches, make_env, run, writes

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
async def test_every_component_gets_a_metric_service_under_the_service_scheme(
    component: Component, name: str
) -> None:
    env = make_env(FakeCaches())
    plan = writes(env)
    sync_metric_service(env, owner(component.kind), component, SERVICE, plan)
    [(verb, kind, written, svc)] = await run(plan)
    assert (verb, kind, written) == ("apply", "Service", name)
    assert ANNOTATIONS.items() <= svc["metadata"]["annotations"].items()
    assert svc["metadata"]["labels"] == set_labels(component, owner(component.kind))
    assert svc["spec"]["selector"] == labels.sub_resource_labels(component, "mo", "ns")
    assert [(p["name"], p["port"]) for p in svc["spec"]["ports"]] == [("metric", 7001)]


async def test_an_up_to_date_metric_service_is_not_written() -> None:
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
    env = make_env(FakeCaches(existing))
    plan = writes(env)
    sync_metric_service(env, cn, Component.CN, SERVICE, plan)
    assert not plan


@pytest.mark.parametrize("spec", [pod_set(), pod_set(exportToPrometheus=False), POD])
async def test_an_owned_metric_service_is_deleted_when_not_wanted(spec: Obj) -> None:
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
    env = make_env(FakeCaches(existing))
    plan = writes(env)
    sync_metric_service(env, cn, Component.CN, spec, plan)
    [(verb, kind, name, kw)] = await run(plan)
    assert (verb, kind, name, kw["uid"]) == ("delete", "Service", "mo-cn-metric", "svc-uid")


async def test_a_metric_service_of_someone_else_is_left_alone() -> None:
    foreign = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mo-cn-metric", "namespace": "ns", "uid": "svc-uid"},
    }
    env = make_env(FakeCaches(foreign))
    plan = writes(env)
    sync_metric_service(env, owner("CNSet"), Component.CN, pod_set(), plan)
    assert not plan
