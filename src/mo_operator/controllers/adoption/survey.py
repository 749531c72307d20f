"""Reading a namespace as the takeover needs it: each set, its Kruise workload, its pods.

Reads go straight to the API server (the command runs once, with no cache),
in dependency order, so the dry run and the takeover print and act on the
sets in the order a normal roll goes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.client import ApiClient
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..common import resources as r
from ..common.meta import name_of
from .kruise import ORDER, SET_KINDS, workload_name
from .preflight import SetPlan, plan_set

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


async def survey(client: ApiClient, namespace: str) -> list[SetPlan]:
    """One plan per set of the namespace, log service first, proxy last."""
    plans = []
    for component in ORDER:
        sets = await client.list(SET_KINDS[component].sets, namespace)
        for obj in sorted(sets.items, key=name_of):
            name = name_of(obj)
            workload = await kruise_workload(client, component, name, namespace)
            pods = await set_pods(client, component, name, namespace)
            plans.append(plan_set(component, obj, workload, pods))
    return plans


def refusals(plans: list[SetPlan]) -> list[str]:
    return [f"{p.kind} {p.name}: {reason}" for p in plans for reason in p.refusals]


def has_controller(obj: Mapping[str, Any]) -> bool:
    return any(ref.get("controller") for ref in (obj.get("metadata") or {}).get("ownerReferences") or ())
