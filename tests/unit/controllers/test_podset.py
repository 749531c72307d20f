"""The component sets' shared skeleton (controllers/steps/podset.py), seen through
the two sets built on it: a DNSet (StatefulSet) and a ProxySet (Deployment).

Each set waits for its log service, applies what it is missing, settles with
zero writes once the cluster holds what it wants, deletes hashed ConfigMaps no
pod needs once its roll is complete, and words its conditions its own way."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.dnset import DNSetActor
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.proxyset import ProxySetActor
from mo_operator.controllers.specs.configmaps import CONFIG_HASH_LABEL
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .controller_fakes import FakeCaches, condition, context, make_env, run
from .podset_fakes import NS, a_set, landed, logset

Obj = dict[str, Any]


def actor_for(kind: str, caches: FakeCaches) -> Any:
    env = make_env(caches)
    return DNSetActor(env) if kind == "DNSet" else ProxySetActor(env)


def workload_resource(kind: str) -> Any:
    return r.STATEFULSETS if kind == "DNSet" else r.DEPLOYMENTS


def settled_world(kind: str, applied: list[Obj], replicas: int) -> FakeCaches:
    """The cluster after ``applied`` landed and the workload controller rolled it:
    the workload's status complete, its pods ready on its template and config."""
    objects, pods = landed(applied, replicas)
    return FakeCaches(logset(), *objects, *pods)


async def first_reconcile(kind: str, replicas: int = 2) -> tuple[list[Obj], Context]:
    caches = FakeCaches(logset())
    obj = a_set(kind, replicas)
    caches.add(obj)
    ctx = context(obj)
    plan = await actor_for(kind, caches).observe(ctx)
    assert plan is not None
    calls = await run(plan)
    assert {verb for verb, *_ in calls} == {"apply"}
    return [body for *_, body in calls], ctx


@pytest.mark.parametrize("kind", ["DNSet", "ProxySet"])
async def test_a_log_service_whose_shared_storage_does_not_parse_stops_the_set_naming_it(kind: str) -> None:
    """The LogSet's own admission refuses such a spec; a set running against it is told
    why, as a condition, and builds nothing from it."""
    broken = logset()
    broken["spec"]["sharedStorage"] = {"s3": {"path": "b/mo", "bucket": "typo"}}
    caches = FakeCaches(broken)
    obj = a_set(kind)
    caches.add(obj)
    with pytest.raises(TerminalError) as refused:
        await actor_for(kind, caches).observe(context(obj))
    assert refused.value.reason == "InvalidConfig"
    assert refused.value.message.startswith("the log service's sharedStorage: ")


@pytest.mark.parametrize("kind", ["DNSet", "ProxySet"])
async def test_a_set_waits_for_its_log_service_without_writing(kind: str) -> None:
    caches = FakeCaches(logset(bootstrapped=False))
    ctx = context(a_set(kind))
    assert await actor_for(kind, caches).observe(ctx) is None
    ready = condition(ctx, "Ready")
    assert ready is not None and (ready["status"], ready["reason"]) == ("False", "WaitingForLogSet")


@pytest.mark.parametrize(
    ("kind", "made"),
    [
        (
            "DNSet",
            [
                ("PodDisruptionBudget", "mo-dn"),
                ("ConfigMap", "mo-dn-config-"),
                ("Service", "mo-dn-headless"),
                ("StatefulSet", "mo-dn"),
            ],
        ),
        (
            "ProxySet",
            [
                ("PodDisruptionBudget", "mo-proxy"),
                ("ConfigMap", "mo-proxy-config-"),
                ("Service", "mo-proxy"),
                ("Deployment", "mo-proxy"),
            ],
        ),
    ],
)
async def test_a_new_set_applies_config_before_the_workload_that_mounts_it(
    kind: str, made: list[tuple[str, str]]
) -> None:
    applied, ctx = await first_reconcile(kind)
    shown = [(o["kind"], o["metadata"]["name"]) for o in applied if "metric" not in o["metadata"]["name"]]
    assert [k for k, _ in shown] == [k for k, _ in made]
    for (_, name), (_, want) in zip(shown, made, strict=True):
        assert name.startswith(want), name
    config = next(o for o in applied if o["kind"] == "ConfigMap")["metadata"]["name"]
    workload = next(o for o in applied if o["kind"] in ("StatefulSet", "Deployment"))
    volumes = workload["spec"]["template"]["spec"]["volumes"]
    assert config in {(v.get("configMap") or {}).get("name") for v in volumes}
    up_to_date = condition(ctx, "UpToDate")
    assert up_to_date is not None and up_to_date["reason"] == "Applying"


@pytest.mark.parametrize(
    ("kind", "reason", "message"),
    [
        ("DNSet", "AllStoresReady", "2 TN stores registered in HAKeeper"),
        ("ProxySet", "AllProxiesReady", "2 proxies ready"),
    ],
)
async def test_a_settled_set_makes_zero_writes_and_reports_ready(
    kind: str, reason: str, message: str
) -> None:
    applied, _ = await first_reconcile(kind)
    caches = settled_world(kind, applied, replicas=2)
    obj = a_set(kind)
    caches.add(obj)
    ctx = context(obj)
    assert await actor_for(kind, caches).observe(ctx) is None
    ready = condition(ctx, "Ready")
    assert ready is not None and (ready["status"], ready["reason"], ready["message"]) == (
        "True",
        reason,
        message,
    )
    up_to_date = condition(ctx, "UpToDate")
    assert up_to_date is not None and up_to_date["reason"] == "RolloutComplete"


@pytest.mark.parametrize("kind", ["DNSet", "ProxySet"])
async def test_a_complete_roll_deletes_the_config_no_pod_mounts(kind: str) -> None:
    applied, _ = await first_reconcile(kind)
    caches = settled_world(kind, applied, replicas=2)
    current = next(o for o in applied if o["kind"] == "ConfigMap")
    base = current["metadata"]["labels"][CONFIG_HASH_LABEL]
    stale = {
        **current,
        "metadata": {**current["metadata"], "name": f"{base}-0ld", "uid": "uid-stale"},
        "data": {"old": "config"},
    }
    caches.add(stale)
    obj = a_set(kind)
    caches.add(obj)
    plan = await actor_for(kind, caches).observe(context(obj))
    assert plan is not None
    assert [(v, k, n) for v, k, n, _ in await run(plan)] == [("delete", "ConfigMap", f"{base}-0ld")]


@pytest.mark.parametrize("kind", ["DNSet", "ProxySet"])
async def test_a_rolling_set_keeps_every_config(kind: str) -> None:
    applied, _ = await first_reconcile(kind)
    caches = settled_world(kind, applied, replicas=2)
    current = next(o for o in applied if o["kind"] == "ConfigMap")
    stale = {**current, "metadata": {**current["metadata"], "name": "mo-old", "uid": "uid-stale"}}
    caches.add(stale)
    obj = a_set(kind, replicas=3)  # one more pod than the workload has: not complete
    caches.add(obj)
    ctx = context(obj)
    plan = await actor_for(kind, caches).observe(ctx)
    assert plan is not None
    assert [(v, k) for v, k, *_ in await run(plan)] == [("apply", workload_resource(kind).kind)]
    ready = condition(ctx, "Ready")
    assert ready is not None and (ready["status"], ready["message"][:4]) == ("False", "2/3 ")


async def test_the_proxy_reports_where_clients_connect() -> None:
    applied, _ = await first_reconcile("ProxySet")
    caches = settled_world("ProxySet", applied, replicas=2)
    obj = a_set("ProxySet")
    caches.add(obj)
    ctx = context(obj)
    await actor_for("ProxySet", caches).observe(ctx)
    status = ctx.status
    assert (status["host"], status["port"], status["replicas"], status["readyReplicas"]) == (
        f"mo-proxy.{NS}",
        6001,
        2,
        2,
    )
    selector = labels.sub_resource_labels(Component.PROXY, "mo", NS)
    assert set(status["labelSelector"].split(",")) == {f"{k}={v}" for k, v in selector.items()}


async def test_a_tn_reports_its_stores() -> None:
    applied, _ = await first_reconcile("DNSet")
    caches = settled_world("DNSet", applied, replicas=2)
    obj = a_set("DNSet")
    caches.add(obj)
    ctx = context(obj)
    await actor_for("DNSet", caches).observe(ctx)
    assert [s["podName"] for s in ctx.status["availableStores"]] == ["mo-0", "mo-1"]
    assert ctx.status["failedStores"] == []
