"""A set whose pods a Kruise workload controls is left alone, with a condition saying why."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.adoption.guard import CONDITION, KruiseGuard
from mo_operator.kube.actor import Action, Context
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..controller_fakes import FakeCaches, condition, context, make_env

Obj = dict[str, Any]
LOGSET = {"kind": "LogSet", "metadata": {"name": "mo", "namespace": "ns", "generation": 1}}


class Inner:
    def __init__(self) -> None:
        self.observed = 0

    async def observe(self, ctx: Context) -> Action | None:
        self.observed += 1
        return None

    async def finalize(self, ctx: Context) -> bool:
        return True


def _pod(owner_api: str | None) -> Obj:
    refs = [{"apiVersion": owner_api, "kind": "StatefulSet", "name": "mo-log", "controller": True}]
    return {
        "kind": "Pod",
        "metadata": {
            "name": "mo-log-0",
            "namespace": "ns",
            "labels": labels.sub_resource_labels(Component.LOG, "mo", "ns"),
            "ownerReferences": refs if owner_api else [],
        },
    }


async def test_a_set_run_by_kruise_waits_with_a_condition_and_writes_nothing() -> None:
    inner = Inner()
    guard = KruiseGuard(inner, make_env(FakeCaches(_pod("apps.kruise.io/v1beta1"))), Component.LOG)
    ctx = context(LOGSET)
    action = await guard.observe(ctx)
    assert inner.observed == 0, "our controller does not run while Kruise holds the pods"
    assert action is not None and "waiting for takeover" in action.description  # type: ignore[attr-defined]
    held = condition(ctx, CONDITION)
    assert held is not None and held["status"] == "False" and held["reason"] == "HeldByKruise"
    assert "mo-operator adopt -n ns" in held["message"] and "StatefulSet mo-log" in held["message"]


async def test_once_released_the_set_is_ours_and_says_so() -> None:
    inner = Inner()
    held = {
        **LOGSET,
        "status": {"conditions": [{"type": CONDITION, "status": "False", "reason": "HeldByKruise"}]},
    }
    guard = KruiseGuard(inner, make_env(FakeCaches(_pod(None))), Component.LOG)
    ctx = context(held)
    assert await guard.observe(ctx) is None
    assert inner.observed == 1
    taken = condition(ctx, CONDITION)
    assert taken is not None and taken["status"] == "True" and taken["reason"] == "TakenOver"


async def test_a_set_never_run_by_kruise_gets_no_adoption_condition() -> None:
    inner = Inner()
    guard = KruiseGuard(inner, make_env(FakeCaches(_pod("apps/v1"))), Component.LOG)
    ctx = context(LOGSET)
    await guard.observe(ctx)
    assert inner.observed == 1 and condition(ctx, CONDITION) is None
