"""Reading a set's takeover state as a controller does: from the cache.

The caches hold the sets, their pods, ConfigMaps and our workloads. Kruise's
kinds are not watched (their CRDs may not even be installed, and a cluster
that never ran the Go operator must not pay for them): a set's Kruise
workload is read with one GET by name, and only for a set whose pods a
Kruise workload controls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.env import Env
from ..framework.meta import name_of
from .kruise import ORDER, OUR_WORKLOADS, SET_KINDS, kruise_controller, workload_name
from .optin import opted_in
from .steps import SetState, mounted_config_maps

Obj = Mapping[str, Any]
CONDITION = "Adopted"
"""False while a Kruise workload (the Go operator's) runs the set's pods or the takeover is
under way; True once the set runs under our workload alone."""

SET_RESOURCES: Mapping[Component, tuple[Resource, ...]] = {
    Component.LOG: (r.LOGSETS,),
    Component.TN: (r.DNSETS, r.TNSETS),
    Component.CN: (r.CNSETS,),
    Component.PROXY: (r.PROXYSETS,),
}


@dataclass(frozen=True)
class Member:
    """A set of a namespace's takeover: opted in, and held by Kruise or under way."""

    component: Component
    obj: Obj
    pods: Sequence[Obj]

    @property
    def held(self) -> bool:
        return holds(self.pods)

    @property
    def label(self) -> str:
        return f"{self.component.kind} {name_of(self.obj)}"


def set_pods(env: Env, component: Component, name: str, namespace: str) -> list[Obj]:
    return env.caches.list(r.PODS, namespace, labels.sub_resource_labels(component, name, namespace))


def holds(pods: Sequence[Obj]) -> bool:
    return any(kruise_controller(p) for p in pods)


def adoption_condition(status: Mapping[str, Any]) -> Mapping[str, Any] | None:
    return get_condition(status.get("conditions"), CONDITION)


def under_way(status: Mapping[str, Any]) -> bool:
    """The set's status says a takeover started and is not done."""
    found = adoption_condition(status)
    return found is not None and found.get("status") == "False"


def members(env: Env, namespace: str) -> list[Member]:
    """The sets of ``namespace`` the running operator takes over, in dependency order."""
    found = []
    for component, resources in SET_RESOURCES.items():
        for res in resources:
            for obj in env.caches.list(res, namespace):
                if not opted_in(env, obj):
                    continue
                pods = set_pods(env, component, name_of(obj), namespace)
                if holds(pods) or under_way(obj.get("status") or {}):
                    found.append(Member(component, obj, pods))
    return sorted(found, key=lambda m: (ORDER.index(m.component), name_of(m.obj)))


def state(env: Env, component: Component, obj: Obj, pods: Sequence[Obj], workload: Obj | None) -> SetState:
    """``obj``'s state from the cache, with ``workload`` as read (None: not read, not held)."""
    name, namespace = name_of(obj), str(obj["metadata"].get("namespace") or "")
    ours_res = OUR_WORKLOADS.get(component)
    ours = (
        None
        if ours_res is None
        else env.caches.get(ours_res, namespace, names.workload_name(component, name))
    )
    selector = labels.sub_resource_labels(component, name, namespace)
    return SetState(
        component,
        obj,
        workload,
        pods,
        ours,
        env.caches.list(r.CONFIGMAPS, namespace, selector),
        mounted_config_maps(env.caches.list(r.PODS, namespace)),
    )


async def read_workload(env: Env, component: Component, name: str, namespace: str) -> Obj | None:
    """The set's Kruise workload, by one GET (None when gone)."""
    return await env.client.get_or_none(
        SET_KINDS[component].workload, workload_name(component, name), namespace
    )
