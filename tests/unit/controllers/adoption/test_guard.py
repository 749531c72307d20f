"""A set Kruise runs is left alone unless opted in; opted in, its controller takes it over step by step."""

from __future__ import annotations

from typing import Any, cast

from mo_operator.controllers.adoption.guard import CONDITION, KruiseGuard
from mo_operator.controllers.adoption.kruise import ADVANCED_STATEFULSETS
from mo_operator.controllers.adoption.optin import ADOPT_ANNOTATION
from mo_operator.controllers.framework.env import Settings
from mo_operator.kube.controller.actor import Action, Context
from mo_operator.kube.meta.errors import Forbidden
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..controller_fakes import FakeCaches, RecordingClient, condition, context, events, make_env

Obj = dict[str, Any]
KRUISE_API = "apps.kruise.io/v1beta1"
CLUSTER_REF = {"apiVersion": "core.matrixorigin.io/v1alpha1", "kind": "MatrixOneCluster", "name": "mo"}


def _set(kind: str, *, annotated: bool = False, adopted: str | None = None, **spec: Any) -> Obj:
    conditions: list[Obj] = [{"type": "Ready", "status": "True", "reason": "AllReady"}]
    if adopted is not None:
        conditions.append({"type": CONDITION, "status": adopted, "reason": "HeldByKruise"})
    meta: Obj = {
        "name": "mo",
        "namespace": "ns",
        "generation": 1,
        "ownerReferences": [{**CLUSTER_REF, "controller": True}],
    }
    if annotated:
        meta["annotations"] = {ADOPT_ANNOTATION: "kruise"}
    return {
        "kind": kind,
        "metadata": meta,
        "spec": {"replicas": 3, **spec},
        "status": {"conditions": conditions},
    }


def _cluster(annotated: bool) -> Obj:
    meta: Obj = {"name": "mo", "namespace": "ns"}
    if annotated:
        meta["annotations"] = {ADOPT_ANNOTATION: "kruise"}
    return {"kind": "MatrixOneCluster", "metadata": meta}


def _pod(component: Component, i: int, owner_api: str | None, name: str = "mo") -> Obj:
    workload = f"mo-{'log' if component is Component.LOG else 'dn'}"
    refs = [{"apiVersion": owner_api, "kind": "StatefulSet", "name": workload, "controller": True}]
    return {
        "kind": "Pod",
        "metadata": {
            "name": f"{workload}-{i}",
            "namespace": "ns",
            "labels": labels.sub_resource_labels(component, name, "ns"),
            "ownerReferences": refs if owner_api else [],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }


def _log_pods(owner_api: str | None) -> list[Obj]:
    return [_pod(Component.LOG, i, owner_api) for i in range(3)]


def _workload(**spec: Any) -> Obj:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "mo-log", "namespace": "ns", "uid": "kruise-uid"},
        "spec": {"replicas": 3, **spec},
        "status": {},
    }


class Inner:
    def __init__(self) -> None:
        self.observed = 0

    async def observe(self, ctx: Context) -> Action | None:
        self.observed += 1
        return None

    async def finalize(self, ctx: Context) -> bool:
        return True


def _guard(*objs: Obj, workload: Obj | None = None, flag: bool = False) -> tuple[KruiseGuard, Inner]:
    env = make_env(FakeCaches(*objs), settings=Settings(adopt_kruise=flag))
    if workload is not None:
        cast(RecordingClient, env.client).server[(ADVANCED_STATEFULSETS.kind, "mo-log")] = workload
    inner = Inner()
    return KruiseGuard(inner, env, Component.LOG), inner


def _calls(guard: KruiseGuard) -> list[tuple[str, str, str, Any]]:
    return cast(RecordingClient, guard.env.client).calls


async def test_a_set_run_by_kruise_waits_with_a_condition_and_writes_nothing() -> None:
    logset = _set("LogSet")
    guard, inner = _guard(logset, _cluster(False), *_log_pods(KRUISE_API))
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert inner.observed == 0, "our controller does not run while Kruise holds the pods"
    assert action is not None and "waiting for takeover" in action.description  # type: ignore[attr-defined]
    await action(ctx)
    assert _calls(guard) == []
    held = condition(ctx, CONDITION)
    assert held is not None and held["status"] == "False" and held["reason"] == "HeldByKruise"
    message = held["message"]
    assert "mo-operator adopt -n ns" in message and "StatefulSet mo-log" in message
    assert f'{ADOPT_ANNOTATION}="kruise"' in message and "--adopt-kruise" in message


async def test_opted_in_by_its_cluster_the_set_first_records_that_its_takeover_starts() -> None:
    logset = _set("LogSet")
    guard, inner = _guard(logset, _cluster(True), *_log_pods(KRUISE_API), workload=_workload())
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    assert _calls(guard) == [], "nothing is released before the condition says the takeover is under way"
    taking = condition(ctx, CONDITION)
    assert taking is not None and taking["status"] == "False" and taking["reason"] == "TakingOver"
    assert inner.observed == 0


async def test_then_it_releases_the_kruise_workload_with_orphan_propagation() -> None:
    logset = _set("LogSet", annotated=True, adopted="False")
    guard, _ = _guard(logset, _cluster(False), *_log_pods(KRUISE_API), workload=_workload())
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    assert _calls(guard) == [
        (
            "delete",
            "StatefulSet",
            "mo-log",
            {"propagation_policy": "Orphan", "uid": "kruise-uid", "missing_ok": True},
        )
    ]
    assert any(reason == "TakingOver" and "Orphan" in message for _, reason, message in events(ctx))


async def test_a_failed_over_log_set_records_its_reserved_ordinals_before_the_workload_goes() -> None:
    logset = _set("LogSet", annotated=True, adopted="False")
    pods = [_pod(Component.LOG, i, KRUISE_API) for i in (1, 2, 3)]
    guard, _ = _guard(logset, _cluster(False), *pods, workload=_workload(reserveOrdinals=[0]))
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    annotations = {"metadata": {"annotations": {labels.LOGSET_RESERVED_ORDINALS: "[0]"}}}
    assert _calls(guard) == [
        ("patch", "LogSet", "mo", annotations),
        (
            "delete",
            "StatefulSet",
            "mo-log",
            {"propagation_policy": "Orphan", "uid": "kruise-uid", "missing_ok": True},
        ),
    ]


async def test_the_operator_flag_opts_every_set_in() -> None:
    logset = _set("LogSet", adopted="False")
    guard, _ = _guard(logset, _cluster(False), *_log_pods(KRUISE_API), workload=_workload(), flag=True)
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    assert [c[0] for c in _calls(guard)] == ["delete"]


async def test_an_unsafe_set_is_refused_with_the_reason_and_nothing_is_deleted() -> None:
    logset = _set("LogSet", annotated=True, adopted="False")
    guard, _ = _guard(logset, *_log_pods(KRUISE_API), workload=_workload(reserveOrdinals=[1]))
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    assert _calls(guard) == []
    refused = condition(ctx, CONDITION)
    assert refused is not None and refused["reason"] == "TakeoverRefused"
    assert "reserveOrdinals [1]" in refused["message"]


async def test_a_later_set_waits_its_turn_without_reading_its_workload() -> None:
    logset = _set("LogSet", annotated=True, adopted="False")
    dnset = _set("DNSet", annotated=True, adopted="False", replicas=1)
    tn_pod = _pod(Component.TN, 0, KRUISE_API)
    env = make_env(FakeCaches(logset, dnset, *_log_pods(KRUISE_API), tn_pod))
    client = cast(RecordingClient, env.client)
    client.refuse = AssertionError("no workload is read for a set whose turn has not come")
    guard = KruiseGuard(Inner(), env, Component.TN)
    ctx = context(dnset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    queued = condition(ctx, CONDITION)
    assert queued is not None and queued["reason"] == "TakingOver" and "LogSet mo" in queued["message"]
    assert client.calls == []


def _rolled_sts() -> Obj:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "mo-log", "namespace": "ns", "generation": 1},
        "spec": {"replicas": 3},
        "status": {
            "observedGeneration": 1,
            "currentRevision": "a",
            "updateRevision": "a",
            "updatedReplicas": 3,
            "readyReplicas": 3,
        },
    }


async def test_released_and_rolled_the_set_is_ours_and_says_so() -> None:
    logset = _set("LogSet", adopted="False")
    guard, inner = _guard(logset, _rolled_sts(), *_log_pods("apps/v1"))
    ctx = context(logset)
    assert await guard.observe(ctx) is None
    assert inner.observed == 1
    taken = condition(ctx, CONDITION)
    assert taken is not None and taken["status"] == "True" and taken["reason"] == "TakenOver"


async def test_released_but_still_rolling_our_controller_runs_and_the_condition_says_so() -> None:
    logset = _set("LogSet", adopted="False")
    guard, inner = _guard(logset, *_log_pods(None))
    ctx = context(logset)
    assert await guard.observe(ctx) is None
    assert inner.observed == 1, "our controller rolls the released pods"
    taking = condition(ctx, CONDITION)
    assert taking is not None and taking["reason"] == "TakingOver" and "mo-log-0" in taking["message"]


async def test_a_set_never_run_by_kruise_gets_no_adoption_condition() -> None:
    logset = _set("LogSet")
    guard, inner = _guard(logset, *_log_pods("apps/v1"), flag=True)
    ctx = context(logset)
    await guard.observe(ctx)
    assert inner.observed == 1 and condition(ctx, CONDITION) is None


async def test_the_next_set_waits_until_the_one_before_says_it_is_taken_over() -> None:
    """The LogSet's roll is done, but its Adopted=True is not written yet: the DNSet still waits."""
    logset = _set("LogSet", annotated=True, adopted="False")
    dnset = _set("DNSet", annotated=True, adopted="False", replicas=1)
    env = make_env(
        FakeCaches(logset, dnset, _rolled_sts(), *_log_pods("apps/v1"), _pod(Component.TN, 0, KRUISE_API))
    )
    cast(RecordingClient, env.client).refuse = AssertionError("the DNSet's turn has not come")
    ctx = context(dnset)
    action = await KruiseGuard(Inner(), env, Component.TN).observe(ctx)
    assert action is not None
    queued = condition(ctx, CONDITION)
    assert queued is not None and "queued: LogSet mo" in queued["message"]


async def test_an_install_without_the_kruise_permissions_says_so_instead_of_failing() -> None:
    logset = _set("LogSet", annotated=True, adopted="False")
    guard, inner = _guard(logset, *_log_pods(KRUISE_API))
    cast(RecordingClient, guard.env.client).refuse = Forbidden(
        403, "Forbidden", "statefulsets.apps.kruise.io is forbidden"
    )
    ctx = context(logset)
    action = await guard.observe(ctx)
    assert action is not None and inner.observed == 0
    refused = condition(ctx, CONDITION)
    assert refused is not None and refused["reason"] == "TakeoverRefused"
    assert "may not read or delete the Kruise workload" in refused["message"]


async def test_an_opted_in_pools_released_pod_is_made_its_cnsets_own_as_it_is() -> None:
    # opted in by its CNPool's annotation; a set that names no LogSet has no HAKeeper to record
    pool = {
        "kind": "CNPool",
        "metadata": {"name": "pool", "namespace": "ns", "annotations": {ADOPT_ANNOTATION: "kruise"}},
    }
    cnset = _set("CNSet", adopted="False", podManagementPolicy="Pooling")
    cnset["metadata"].update(
        name="pool-abc",
        uid="set-uid",
        ownerReferences=[{"kind": "CNPool", "name": "pool", "controller": True}],
    )
    pod = {
        "kind": "Pod",
        "metadata": {
            "name": "pool-abc-cn-abcde",
            "namespace": "ns",
            "resourceVersion": "9",
            "uid": "pod-uid",
            "labels": labels.sub_resource_labels(Component.CN, "pool-abc", "ns"),
            "ownerReferences": [],
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    env = make_env(FakeCaches(pool, cnset, pod))
    guard = KruiseGuard(Inner(), env, Component.CN)
    ctx = context(cnset)
    action = await guard.observe(ctx)
    assert action is not None
    await action(ctx)
    calls = cast(RecordingClient, env.client).calls
    assert len(calls) == 1 and calls[0][:3] == ("patch", "Pod", "pool-abc-cn-abcde"), calls
    meta = calls[0][3]["metadata"]
    assert meta["resourceVersion"] == "9"
    assert [(ref["kind"], ref["name"], ref["uid"], ref["controller"]) for ref in meta["ownerReferences"]] == [
        ("CNSet", "pool-abc", "set-uid", True)
    ]
