"""What the Go operator runs a set with: OpenKruise workloads, by name and kind.

Upstream (kruise-api v1.4.0) runs a LogSet and a DNSet with an Advanced
StatefulSet (``apps.kruise.io/v1beta1``, named ``<set>-log`` / ``<set>-dn``)
and a CNSet and a ProxySet with a CloneSet (``apps.kruise.io/v1alpha1``,
``<set>-cn`` / ``<set>-proxy``). The pods carry the set's three selector
labels, exactly as ours do, so the only thing that tells whose a pod is,
is its controller reference: that is what the takeover moves.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import names
from mo_operator.matrixone.component import Component

from ..framework import resources as r

KRUISE_GROUP = "apps.kruise.io"
ADVANCED_STATEFULSETS = Resource(KRUISE_GROUP, "v1beta1", "StatefulSet", "statefulsets", True)
CLONESETS = Resource(KRUISE_GROUP, "v1alpha1", "CloneSet", "clonesets", True)

ORDER: tuple[Component, ...] = (Component.LOG, Component.TN, Component.CN, Component.PROXY)
"""Dependency order, as a normal roll goes: log service first, proxy last."""


@dataclass(frozen=True)
class SetKind:
    """One kind of set the Go operator runs with Kruise, and how."""

    component: Component
    sets: Resource
    """Our (and upstream's) custom resource of the set."""
    workload: Resource
    """The Kruise workload upstream made for it."""


SET_KINDS: Mapping[Component, SetKind] = {
    Component.LOG: SetKind(Component.LOG, r.LOGSETS, ADVANCED_STATEFULSETS),
    Component.TN: SetKind(Component.TN, r.DNSETS, ADVANCED_STATEFULSETS),
    Component.CN: SetKind(Component.CN, r.CNSETS, CLONESETS),
    Component.PROXY: SetKind(Component.PROXY, r.PROXYSETS, CLONESETS),
}

OUR_WORKLOADS: Mapping[Component, Resource] = {
    Component.LOG: r.STATEFULSETS,
    Component.TN: r.STATEFULSETS,
    Component.PROXY: r.DEPLOYMENTS,
}
"""Our workload of each kind of set, of the same name as Kruise's (a CNSet runs its pods itself)."""


def workload_name(component: Component, set_name: str) -> str:
    """Upstream's workload name, the same as ours: ``<set>-<suffix>``."""
    return names.workload_name(component, set_name)


def kruise_controller(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The controller reference of ``obj`` when a Kruise workload controls it."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
        if ref.get("controller") and str(ref.get("apiVersion") or "").startswith(f"{KRUISE_GROUP}/"):
            return ref  # type: ignore[no-any-return]
    return None
