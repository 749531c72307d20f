"""``mo-operator plan``'s engine without a server: a reconciler's plan, status, Events,
finalizer and direct writes are recorded, and not one request leaves the client."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any

import httpx2
import pytest
from lightkube import KubeConfig

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.writes import Writes
from mo_operator.controllers.planning import (
    AskedMatrixOne,
    ClusterPlan,
    Refusal,
    WouldWrite,
    changes,
    plan_object,
)
from mo_operator.kube.client.client import ApiClient, WriteCall
from mo_operator.kube.controller.actor import Action, ActorReconciler, Context
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone.admin import HAKeeperState, Unreachable, WorkState

from .controller_fakes import FakeCaches

NS = "ns"
KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "http://k8s.test"}}],
    "users": [{"name": "u", "user": {"token": "t"}}],
    "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": NS}}],
    "current-context": "ctx",
}
FINALIZER = "matrixorigin.io/test"


def _client(requests: list[httpx2.Request], refusal: Refusal) -> ApiClient:
    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        return httpx2.Response(500)

    client = ApiClient(KubeConfig.from_dict(KUBECONFIG), transport=httpx2.MockTransport(handler), qps=None)
    return client.with_write_hook(refusal)


def _set(generation: int = 2, status: Mapping[str, Any] | None = None, **meta: Any) -> Any:
    return freeze(
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "CNSet",
            "metadata": {
                "name": "mo-tp",
                "namespace": NS,
                "uid": "u1",
                "resourceVersion": "7",
                "generation": generation,
                "finalizers": [FINALIZER],
                **meta,
            },
            "spec": {"replicas": 3},
            "status": dict(status or {}),
        }
    )


def _config_map(value: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "mo-tp-config", "namespace": NS},
        "data": {"k": value},
    }


def _pod(index: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"mo-tp-cn-{index}", "namespace": NS}}


class _Actor:
    """Plans a ConfigMap and two pods, says so in its conditions and an Event."""

    def __init__(self, client: ApiClient, direct: bool = False) -> None:
        self.client = client
        self.direct = direct

    async def observe(self, ctx: Context) -> Action | None:
        if self.direct:
            await self.client.patch(r.PODS, "mo-tp-cn-0", {"metadata": {"labels": {"a": "b"}}}, NS)
        ctx.set_condition("Ready", False, "Scaling", "2 of 3 CNs")
        ctx.event("Normal", "Scaling", "adding a CN")
        plan = Writes(self.client)
        plan.apply(_config_map("2"))
        plan.create(_pod(2))
        plan.create(_pod(3))
        plan.create(_pod(4))
        return plan

    async def finalize(self, ctx: Context) -> bool:
        return True


class _Settled:
    async def observe(self, ctx: Context) -> Action | None:
        ctx.set_condition("Ready", True, "AllCNsReady", "3 CNs")
        return None

    async def finalize(self, ctx: Context) -> bool:
        return True


def _reconciler(actor: Any, obj: Any) -> ActorReconciler:
    return ActorReconciler(
        kind="CNSet",
        actor=actor,
        get=lambda req: obj,
        writer=None,  # type: ignore[arg-type]  # the plan replaces it
        recorder=None,  # type: ignore[arg-type]
        finalizer=FINALIZER,
        pause_annotation="matrixorigin.io/skip-sync",
    )


async def test_a_plan_is_recorded_step_by_step_with_its_status_and_events_and_nothing_is_sent() -> None:
    requests: list[httpx2.Request] = []
    refusal = Refusal()
    refusal.caches = FakeCaches(_config_map("1"))  # type: ignore[assignment]
    client = _client(requests, refusal)
    obj = _set(status={"observedGeneration": 1})

    found = await plan_object(_reconciler(_Actor(client), obj), refusal, NS, "mo-tp")

    assert [(s.batch, s.what) for s in found.steps] == [
        (1, "apply ConfigMap mo-tp-config"),
        (2, "create Pod mo-tp-cn-2"),
        (3, "create Pod mo-tp-cn-3"),
        (3, "create Pod mo-tp-cn-4"),
    ]
    assert found.steps[0].changes == ("data.k: 1 -> 2",)
    assert found.steps[1].changes == ("new object",)
    assert found.observed_generation == (1, 2)
    by_type = {c.type: c for c in found.conditions}
    assert by_type["Ready"].before is None and by_type["Ready"].after == {
        "status": "False",
        "reason": "Scaling",
        "message": "2 of 3 CNs",
    }
    assert by_type["Synced"].after is not None and by_type["Synced"].after["reason"] == "Progressing"
    assert ("Normal", "Scaling", "adding a CN") in found.events
    assert found.requeue_after is not None and not found.settled and found.error is None
    assert requests == [] and not client.writes


async def test_a_write_an_actor_makes_itself_while_observing_is_reported_and_not_sent() -> None:
    requests: list[httpx2.Request] = []
    refusal = Refusal()
    client = _client(requests, refusal)

    found = await plan_object(_reconciler(_Actor(client, direct=True), _set()), refusal, NS, "mo-tp")

    assert found.direct == ["patch Pod mo-tp-cn-0 (written while observing; the rest is decided after it)"]
    assert found.steps == [] and found.error is None
    assert requests == [] and not client.writes


async def test_an_object_without_its_finalizer_would_get_it_first() -> None:
    refusal = Refusal()
    obj = freeze({**copy.deepcopy(dict(_set())), "metadata": {**dict(_set()["metadata"]), "finalizers": []}})

    found = await plan_object(_reconciler(_Settled(), obj), refusal, NS, "mo-tp")

    assert found.direct == [f"set the finalizers of CNSet mo-tp to ['{FINALIZER}']"]
    assert found.steps == [] and found.conditions == []


async def test_an_object_as_its_spec_asks_plans_nothing() -> None:
    first = Context(_set(), "x", None, None)  # type: ignore[arg-type]
    first.set_condition("Ready", True, "AllCNsReady", "3 CNs")
    first.set_condition("Synced", True, "Synced", "the observed state matches the spec")
    obj = _set(status={**first.status, "observedGeneration": 2})

    found = await plan_object(_reconciler(_Settled(), obj), Refusal(), NS, "mo-tp")

    assert found.settled, found
    plan = ClusterPlan(NS, "mo", "asked", [found])
    assert plan.settled and plan.as_json()["objects"][0]["settled"] is True


def test_a_write_lists_only_the_fields_it_changes() -> None:
    cached = freeze(
        {
            "metadata": {"name": "mo-tp", "annotations": {"matrixorigin.io/applied-hash": "a"}},
            "spec": {"replicas": 2, "image": "mo:1", "labels": ["x"]},
        }
    )
    body = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "CNSet",
        "metadata": {"name": "mo-tp", "annotations": {"matrixorigin.io/applied-hash": "b"}},
        "spec": {"replicas": 3, "image": "mo:1", "labels": ["x"]},
    }
    call = WriteCall("apply", r.CNSETS, NS, "mo-tp", None, body)

    assert changes(call, cached) == ("spec.replicas: 2 -> 3",)
    assert changes(call, None) == ("new object",)
    assert changes(WriteCall("delete", r.CNSETS, NS, "mo-tp", None, None), cached) == ()


async def test_a_refused_write_never_reaches_the_next_hook() -> None:
    refusal = Refusal()
    call = WriteCall("delete", r.PODS, NS, "mo-tp-cn-1", None, None)

    async def send() -> dict[str, Any]:
        raise AssertionError("sent")

    with pytest.raises(WouldWrite, match="delete Pod mo-tp-cn-1"):
        await refusal(call, send)
    refusal.playing = []
    assert await refusal(call, send) == {}
    assert refusal.playing == [("delete Pod mo-tp-cn-1", ())]


class _Silent:
    def __init__(self) -> None:
        self.calls = 0

    def admin(self, address: str) -> Any:
        parent = self

        class Admin:
            async def hakeeper_state(self) -> HAKeeperState:
                parent.calls += 1
                await asyncio.sleep(10)
                raise AssertionError("not reached")

        return Admin()


async def test_matrixone_not_answering_is_asked_once_and_said_in_the_plan() -> None:
    silent = _Silent()
    asked = AskedMatrixOne(silent, 0.05, Refusal())
    admin = asked.admin("mo-log-discovery.ns.svc:32001")

    for _ in range(2):
        with pytest.raises(Unreachable):
            await admin.hakeeper_state()

    assert silent.calls == 1
    assert asked.summary.startswith("did not answer (HAKeeper state at mo-log-discovery.ns.svc:32001")
    assert "assumes no answer" in asked.summary


async def test_without_matrixone_nothing_is_asked_and_instructions_are_refused() -> None:
    refusal = Refusal()
    asked = AskedMatrixOne(None, 1.0, refusal)
    admin = asked.admin("a:1")

    with pytest.raises(Unreachable, match="not asked"):
        await admin.hakeeper_state()
    with pytest.raises(WouldWrite, match="tell MatrixOne to set CN u1 draining"):
        await admin.set_cn_work_state("u1", WorkState.DRAINING)
    assert asked.summary.startswith("not asked (--no-matrixone)")


async def test_a_paused_object_is_planned_as_if_resumed_and_said_to_be_paused() -> None:
    requests: list[httpx2.Request] = []
    refusal = Refusal()
    client = _client(requests, refusal)
    obj = _set(annotations={"matrixorigin.io/skip-sync": "true"})

    found = await plan_object(_reconciler(_Actor(client), obj), refusal, NS, "mo-tp")

    assert found.note is not None and "paused" in found.note and "once resumed" in found.note
    assert found.steps[0].what == "apply ConfigMap mo-tp-config"
    assert requests == []
