"""Upstream's condition gauges (controllers/condition_metrics.py): names, labels and
values as the Go operator reports them, read through the operator's registry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from mo_operator.controllers.condition_metrics import CONDITIONS, metric_name
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import Caches
from mo_operator.kube.metrics.metrics import REGISTRY

from .controller_fakes import FakeCaches

Obj = dict[str, Any]


def obj(kind: str, name: str, **conditions: str) -> Obj:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "status": {"conditions": [{"type": t, "status": s} for t, s in conditions.items()]},
    }


@pytest.fixture
def caches() -> Iterator[FakeCaches]:
    fake = FakeCaches()
    CONDITIONS.add(cast(Caches, fake))
    yield fake
    CONDITIONS.discard(cast(Caches, fake))


def value(metric: str, name: str, ctype: str) -> float | None:
    return REGISTRY.get_sample_value(metric, {"namespace": "ns", "name": name, "type": ctype})


def test_names_are_upstreams() -> None:
    assert [metric_name(res) for res in (r.LOGSETS, r.DNSETS, r.CNSETS, r.MATRIXONE_CLUSTERS)] == [
        "matrixone_logset_condition",
        "matrixone_dnset_condition",
        "matrixone_cnset_condition",
        "matrixone_matrixonecluster_condition",
    ]


def test_a_true_condition_is_one_anything_else_zero(caches: FakeCaches) -> None:
    caches.add(
        obj("LogSet", "mo-log", Ready="True", Synced="False"),
        obj("DNSet", "mo-dn", Ready="Unknown"),
        obj("CNSet", "mo-cn", Ready="True"),
        obj("MatrixOneCluster", "mo", Ready="False"),
    )
    assert value("matrixone_logset_condition", "mo-log", "Ready") == 1.0
    assert value("matrixone_logset_condition", "mo-log", "Synced") == 0.0
    assert value("matrixone_dnset_condition", "mo-dn", "Ready") == 0.0
    assert value("matrixone_cnset_condition", "mo-cn", "Ready") == 1.0
    assert value("matrixone_matrixonecluster_condition", "mo", "Ready") == 0.0


def test_kinds_upstream_does_not_report_have_no_gauge(caches: FakeCaches) -> None:
    caches.add(obj("ProxySet", "mo-proxy", Ready="True"))
    assert value("matrixone_proxyset_condition", "mo-proxy", "Ready") is None


def test_operators_watching_the_same_objects_report_each_series_once(caches: FakeCaches) -> None:
    other = FakeCaches(obj("CNSet", "mo-cn", Ready="True"))
    caches.add(obj("CNSet", "mo-cn", Ready="True"))
    CONDITIONS.add(cast(Caches, other))
    try:
        family = next(f for f in REGISTRY.collect() if f.name == "matrixone_cnset_condition")
        assert [(s.labels, s.value) for s in family.samples] == [
            ({"namespace": "ns", "name": "mo-cn", "type": "Ready"}, 1.0)
        ]
    finally:
        CONDITIONS.discard(cast(Caches, other))


def test_a_stopped_operator_reports_nothing() -> None:
    gone = FakeCaches(obj("LogSet", "mo-log", Ready="True"))
    CONDITIONS.add(cast(Caches, gone))
    CONDITIONS.discard(cast(Caches, gone))
    assert value("matrixone_logset_condition", "mo-log", "Ready") is None
