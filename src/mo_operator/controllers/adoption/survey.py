"""Reading a namespace as the command needs it: each set, its Kruise workload, its pods.

Reads go straight to the API server (the command runs once, with no cache),
in dependency order, so the dry run and the takeover print and act on the
sets in the order a normal roll goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.client.client import ApiClient
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.meta import name_of
from .kruise import ORDER, OUR_WORKLOADS, SET_KINDS, workload_name
from .preflight import SetPlan, plan_set
from .steps import SetState, mounted_config_maps

Obj = dict[str, Any]


def pod_selector(component: Component, set_name: str, namespace: str) -> str:
    return ",".join(f"{k}={v}" for k, v in labels.sub_resource_labels(component, set_name, namespace).items())


async def set_pods(client: ApiClient, component: Component, set_name: str, namespace: str) -> list[Obj]:
    found = await client.list(r.PODS, namespace, label_selector=pod_selector(component, set_name, namespace))
    return list(found.items)


async def kruise_workload(
    client: ApiClient, component: Component, set_name: str, namespace: str
) -> Obj | None:
    """The Go operator's workload of the set; None when there is none (or no Kruise CRD at all)."""
    return await client.get_or_none(
        SET_KINDS[component].workload, workload_name(component, set_name), namespace
    )


async def _sets(client: ApiClient, component: Component, namespace: str) -> list[Obj]:
    found = await client.list(SET_KINDS[component].sets, namespace)
    return sorted(found.items, key=name_of)


async def survey(client: ApiClient, namespace: str) -> list[SetPlan]:
    """One plan per set of the namespace, log service first, proxy last."""
    plans = []
    for component in ORDER:
        for obj in await _sets(client, component, namespace):
            name = name_of(obj)
            workload = await kruise_workload(client, component, name, namespace)
            pods = await set_pods(client, component, name, namespace)
            plans.append(plan_set(component, obj, workload, pods))
    return plans


def refusals(plans: list[SetPlan]) -> list[str]:
    return [f"{p.kind} {p.name}: {reason}" for p in plans for reason in p.refusals]


async def read_states(client: ApiClient, namespace: str) -> list[SetState]:
    """Every set of the namespace as the takeover's decision reads it. The pods are
    read once: a set's pods and the ConfigMaps they mount come from the same list, so a
    pod that goes between two reads cannot hide a ConfigMap it still mounted."""
    every_pod = list((await client.list(r.PODS, namespace)).items)
    mounted = mounted_config_maps(every_pod)
    states = []
    for component in ORDER:
        for obj in await _sets(client, component, namespace):
            name = name_of(obj)
            selector = pod_selector(component, name, namespace)
            config_maps = await client.list(r.CONFIGMAPS, namespace, label_selector=selector)
            states.append(
                SetState(
                    component,
                    obj,
                    await kruise_workload(client, component, name, namespace),
                    _with_labels(every_pod, labels.sub_resource_labels(component, name, namespace)),
                    await _our_workload(client, component, name, namespace),
                    list(config_maps.items),
                    mounted,
                )
            )
    return states


async def _our_workload(client: ApiClient, component: Component, name: str, namespace: str) -> Obj | None:
    res = OUR_WORKLOADS.get(component)
    return (
        None
        if res is None
        else await client.get_or_none(res, names.workload_name(component, name), namespace)
    )


def _with_labels(pods: list[Obj], wanted: Mapping[str, str]) -> list[Obj]:
    return [
        p for p in pods if all(((p["metadata"].get("labels") or {}).get(k)) == v for k, v in wanted.items())
    ]
