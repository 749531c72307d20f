"""The DNSet, TNSet and ProxySet actors on hand-built caches: what one reconcile round writes,
that a round over what the last one wrote writes nothing, how a config change rolls,
and how a set waits for its log service."""

from __future__ import annotations

import copy
from typing import Any, cast

import pytest

from mo_operator.controllers.dnset import DNSetActor
from mo_operator.controllers.proxyset import ProxySetActor
from mo_operator.controllers.tnset import TNSetActor

from .cnset_fakes import logset
from .controller_fakes import FakeCaches, RecordingClient, condition, context, make_env

Obj = dict[str, Any]
API = "core.matrixorigin.io/v1alpha1"
ACTORS = {"DNSet": DNSetActor, "TNSet": TNSetActor, "ProxySet": ProxySetActor}
WORKLOAD = {
    "DNSet": ("StatefulSet", "mo-dn"),
    "TNSet": ("StatefulSet", "mo-dn"),
    "ProxySet": ("Deployment", "mo-proxy"),
}


def a_set(kind: str, **spec: Any) -> Obj:
    return {
        "apiVersion": API,
        "kind": kind,
        "metadata": {
            "name": "mo",
            "namespace": "ns",
            "uid": f"uid-{kind}",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": {"replicas": 1, "image": "matrixorigin/matrixone:2.0.0", **spec},
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }


async def one_round(kind: str, obj: Obj, *cached: Obj) -> tuple[list[Any], Any]:
    env = make_env(FakeCaches(*cached))
    ctx = context(obj)
    plan = await ACTORS[kind](env).observe(ctx)
    if plan is not None:
        await plan(ctx)
    return cast(RecordingClient, env.client).calls, ctx


def written(calls: list[Any]) -> list[Obj]:
    """What the server would hold after the round's applies."""
    return [{**copy.deepcopy(c[3]), "kind": c[1]} for c in calls if c[0] == "apply"]


def _ready(ctx: Any) -> Obj:
    found = condition(ctx, "Ready")
    assert found is not None
    return found


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_set_waits_for_its_log_service_without_writing(kind: str) -> None:
    calls, ctx = await one_round(kind, a_set(kind))
    assert calls == []
    assert _ready(ctx)["status"] == "False" and _ready(ctx)["reason"] == "WaitingForLogSet"


def _shape(ctx: Any) -> tuple[set[str], set[str]]:
    """The top-level fields and the condition types of a round's status."""
    return set(ctx.status), {c["type"] for c in ctx.status.get("conditions") or ()}


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_waiting_set_reports_every_field_and_condition_it_will(kind: str) -> None:
    _, waiting = await one_round(kind, a_set(kind))
    _, running = await one_round(kind, a_set(kind), logset())
    assert _shape(waiting) == _shape(running), "what follows changes values, nothing appears"
    up_to_date = condition(waiting, "UpToDate")
    assert up_to_date is not None and (up_to_date["status"], up_to_date["reason"]) == ("False", "NotStarted")


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_set_that_reported_keeps_its_fields_while_it_waits(kind: str) -> None:
    _, running = await one_round(kind, a_set(kind), logset())
    known = {**a_set(kind), "status": copy.deepcopy(running.status)}
    _, waiting = await one_round(kind, known)
    up_to_date = condition(waiting, "UpToDate")
    assert up_to_date is not None and up_to_date["reason"] != "NotStarted"
    assert {k: v for k, v in waiting.status.items() if k != "conditions"} == {
        k: v for k, v in running.status.items() if k != "conditions"
    }


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_new_set_writes_its_config_service_and_workload_then_nothing_more(kind: str) -> None:
    obj = a_set(kind)
    calls, ctx = await one_round(kind, obj, logset())
    kinds = [(c[0], c[1]) for c in calls]
    assert kinds == [
        ("apply", "PodDisruptionBudget"),
        ("apply", "ConfigMap"),
        ("apply", "Service"),
        ("apply", WORKLOAD[kind][0]),
    ]
    workload = calls[-1][3]
    assert workload["metadata"]["name"] == WORKLOAD[kind][1]
    assert workload["metadata"]["ownerReferences"][0]["uid"] == f"uid-{kind}"
    mounted = {v.get("configMap", {}).get("name") for v in workload["spec"]["template"]["spec"]["volumes"]}
    assert calls[1][2] in mounted, "the pods run the config just written"
    assert _ready(ctx)["status"] == "False"

    again, _ = await one_round(kind, obj, logset(), *written(calls))
    assert again == [], "a round over what the last one wrote writes nothing"


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_config_change_writes_a_new_config_and_keeps_the_old_one_mid_roll(kind: str) -> None:
    first, _ = await one_round(kind, a_set(kind), logset())
    changed = a_set(kind, config="[observability]\nenableMetricToProm = false\n")
    calls, ctx = await one_round(kind, changed, logset(), *written(first))
    configs = [c[2] for c in calls if c[1] == "ConfigMap"]
    [old_config] = [c[2] for c in first if c[1] == "ConfigMap"]
    assert len(configs) == 1 and configs[0] != old_config, "a new hashed ConfigMap"
    assert not [c for c in calls if c[0] == "delete"], "the old config stays while pods may need it"
    assert [c[1] for c in calls if c[0] == "apply"][-1] == WORKLOAD[kind][0]
    up_to_date = condition(ctx, "UpToDate")
    assert up_to_date is not None and up_to_date["status"] == "False", "the roll to it is pending"


async def test_a_proxy_service_takes_the_type_and_port_asked_for() -> None:
    obj = a_set("ProxySet", serviceType="NodePort", nodePort=31429)
    calls, _ = await one_round("ProxySet", obj, logset())
    [service] = [c[3] for c in calls if c[1] == "Service"]
    assert service["spec"]["type"] == "NodePort"
    [port] = service["spec"]["ports"]
    assert (port["port"], port.get("nodePort")) == (6001, 31429)


async def test_a_tn_with_a_cache_volume_gets_one_claim_per_pod() -> None:
    calls, _ = await one_round("DNSet", a_set("DNSet", cacheVolume={"size": "10Gi"}), logset())
    [sts] = [c[3] for c in calls if c[1] == "StatefulSet"]
    [claim] = sts["spec"]["volumeClaimTemplates"]
    assert claim["spec"]["resources"]["requests"]["storage"] == "10Gi"


@pytest.mark.parametrize("kind", sorted(ACTORS))
async def test_a_set_keeps_a_budget_of_one_pod_until_its_spec_switches_it_off(kind: str) -> None:
    first, _ = await one_round(kind, a_set(kind, replicas=2), logset())
    [pdb] = [c[3] for c in first if c[1] == "PodDisruptionBudget"]
    assert pdb["apiVersion"] == "policy/v1" and pdb["metadata"]["name"] == WORKLOAD[kind][1]
    assert pdb["metadata"]["ownerReferences"][0]["uid"] == f"uid-{kind}"
    [workload] = [c[3] for c in first if c[1] == WORKLOAD[kind][0]]
    assert pdb["spec"] == {"maxUnavailable": 1, "selector": workload["spec"]["selector"]}

    stored = [{**o, "metadata": {**o["metadata"], "uid": f"uid-{o['kind']}"}} for o in written(first)]
    larger = a_set(kind, replicas=2, podDisruptionBudget={"minAvailable": "50%"})
    calls, _ = await one_round(kind, larger, logset(), *stored)
    assert [(c[0], c[1], c[3]["spec"]) for c in calls] == [
        ("apply", "PodDisruptionBudget", {"minAvailable": "50%", "selector": workload["spec"]["selector"]})
    ]
    off = a_set(kind, replicas=2, podDisruptionBudget={"enabled": False})
    calls, _ = await one_round(kind, off, logset(), *stored)
    assert [(c[0], c[1], c[2]) for c in calls] == [("delete", "PodDisruptionBudget", WORKLOAD[kind][1])]
