"""Growing a stateful set's volumes through its plan (controllers/steps/expansion.py's
``stateful_intents``, planned as the set skeleton plans it):
claims first, the StatefulSet replaced (never updated) when its claim templates
change, and every step converging whatever the cache shows and wherever the
operator was killed."""

from __future__ import annotations

import functools
from typing import Any, cast

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.desired import stamped
from mo_operator.controllers.framework.env import Env
from mo_operator.controllers.framework.writes import Writes
from mo_operator.controllers.steps import volumes
from mo_operator.controllers.steps.expansion import replace_step, stateful_intents, storage_classes
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.errors import ApiError

from .controller_fakes import FakeCaches, RecordingClient, condition, context, make_env, run, writes

Obj = dict[str, Any]
SELECTOR = {"matrixorigin.io/instance": "mo", "matrixorigin.io/component": "DNSet"}
CLASS = {"kind": "StorageClass", "metadata": {"name": "fast"}, "allowVolumeExpansion": True}


def sts(size: str, *, uid: str = "old", deleting: bool = False) -> Obj:
    meta: Obj = {"name": "mo-dn", "namespace": "ns", "uid": uid}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": meta,
        "spec": {
            "selector": {"matchLabels": SELECTOR},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "mo-data"},
                    "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": size}}},
                }
            ],
        },
    }


def claim(size: str = "1Gi") -> Obj:
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "mo-data-mo-dn-0", "namespace": "ns", "labels": SELECTOR},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": size}}},
        "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}},
    }


def desired() -> list[tuple[Any, Obj]]:
    want = sts("2Gi")
    del want["metadata"]["uid"]
    return [(r.STATEFULSETS, stamped(want))]


DN = {"metadata": {"name": "mo", "namespace": "ns"}}


def sync_stateful(ctx: Context, env: Env, plan: Writes) -> None:
    """Plan ``desired()`` as the set skeleton decides it: ``stateful_intents`` over the
    cache (the claims of its selector, the StorageClasses), replacing through ``replace_step``."""
    caches = env.caches
    intents = stateful_intents(
        ctx,
        desired(),
        lambda res, name: caches.get(res, "ns", name),
        caches.list(r.PVCS, "ns", SELECTOR),
        storage_classes(env),
        {},
        functools.partial(replace_step, ctx, plan.client),
    )
    for intent in intents:
        plan.intend(intent)


async def test_claims_grow_then_the_statefulset_is_replaced_orphaning_its_pods() -> None:
    env = make_env(FakeCaches(sts("1Gi"), claim(), CLASS))
    plan, ctx = writes(env), context(DN)
    sync_stateful(ctx, env, plan)
    calls = await run(plan)
    assert [(c[0], c[1], c[2]) for c in calls] == [
        ("patch", "PersistentVolumeClaim", "mo-data-mo-dn-0"),
        ("delete", "StatefulSet", "mo-dn"),
        ("create", "StatefulSet", "mo-dn"),
    ]
    assert calls[1][3]["uid"] == "old" and calls[1][3]["propagation_policy"] == "Orphan"
    assert calls[2][3]["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "2Gi"
    assert (condition(ctx, volumes.CONDITION) or {}).get("reason") == volumes.RESIZING


async def test_a_statefulset_being_deleted_is_left_alone() -> None:
    env = make_env(FakeCaches(sts("1Gi", deleting=True), claim("2Gi"), CLASS))
    plan = writes(env)
    sync_stateful(context(DN), env, plan)
    assert await run(plan) == []


class Refusing(RecordingClient):
    """The old StatefulSet was already replaced (409 on its uid) and the new one
    already exists (the cache showed neither, or the operator died in between)."""

    async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> None:
        await super().delete(res, name, namespace, **kw)
        raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: old")

    async def create(self, res: Any, obj: Any, namespace: str | None = None) -> Obj:
        await super().create(res, obj, namespace)
        raise ApiError(409, "AlreadyExists", 'statefulsets.apps "mo-dn" already exists')


async def test_a_replacement_asked_again_from_a_stale_cache_converges() -> None:
    env = make_env(FakeCaches(sts("1Gi"), claim("2Gi"), CLASS))
    env.client = cast(Any, Refusing())
    plan = writes(env)
    sync_stateful(context(DN), env, plan)
    calls = await run(plan)  # neither answer is an error
    assert [c[0] for c in calls] == ["delete", "create"]


async def test_another_error_of_the_delete_is_raised() -> None:
    class Failing(RecordingClient):
        async def delete(self, res: Any, name: str, namespace: str | None = None, **kw: Any) -> None:
            raise ApiError(500, "InternalError", "etcd is away")

    env = make_env(FakeCaches(sts("1Gi"), claim("2Gi"), CLASS))
    env.client = cast(Any, Failing())
    plan = writes(env)
    sync_stateful(context(DN), env, plan)
    with pytest.raises(ApiError):
        await run(plan)


async def test_a_class_that_cannot_expand_keeps_the_statefulset_as_it_is() -> None:
    env = make_env(FakeCaches(sts("1Gi"), claim(), {**CLASS, "allowVolumeExpansion": False}))
    plan, ctx = writes(env), context(DN)
    sync_stateful(ctx, env, plan)
    calls = await run(plan)
    assert [c[0] for c in calls] == ["apply"]  # the rest of the spec still applies
    assert calls[0][3]["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "1Gi"
    assert (condition(ctx, volumes.CONDITION) or {}).get("reason") == volumes.BLOCKED
