"""Which planned writes count as writing a set's workload: those that may reshape
its pods, so it is not up to date while they run."""

from __future__ import annotations

from typing import Any, cast

from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.writes import Writes

from .controller_fakes import RecordingClient


def _obj(kind: str) -> dict[str, Any]:
    api = {"StatefulSet": "apps/v1", "Deployment": "apps/v1"}.get(kind, "v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}


def _plan() -> Writes:
    return Writes(cast(Any, RecordingClient()))


def test_configmaps_services_and_pod_marks_leave_the_workload_alone() -> None:
    plan = _plan()
    plan.apply(_obj("ConfigMap"), r.CONFIGMAPS)
    plan.apply(_obj("Service"), r.SERVICES)
    plan.delete(r.CONFIGMAPS, "ns", "old")
    plan.patch(r.PODS, "ns", "x-0", {"metadata": {"annotations": {"a": "b"}}})
    plan.call("ask MatrixOne", lambda: _nothing())
    assert plan and not plan.writes_workload


def test_a_statefulset_deployment_or_pod_write_is_a_workload_write() -> None:
    for write in (
        lambda p: p.apply(_obj("StatefulSet"), r.STATEFULSETS),
        lambda p: p.apply(_obj("Deployment"), r.DEPLOYMENTS),
        lambda p: p.create(_obj("Pod"), r.PODS),
        lambda p: p.delete(r.PODS, "ns", "x-0"),
        lambda p: p.patch(r.STATEFULSETS, "ns", "x", {"spec": {"replicas": 2}}),
    ):
        plan = _plan()
        write(plan)
        assert plan.writes_workload


async def _nothing() -> None:
    return None
