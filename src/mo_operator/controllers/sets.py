"""What the setups of the set controllers (LogSet, DNSet and TNSet, CNSet, ProxySet)
share: the Kruise takeover guard in front of each set's actor, with the caches it
reads, and the condition reasons of the set skeleton that are trouble."""

from __future__ import annotations

from collections.abc import Iterable

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Actor
from mo_operator.kube.controller.controller import Controller
from mo_operator.matrixone.component import Component

from .adoption import KruiseGuard
from .adoption.guard import REFUSED as TAKEOVER_REFUSED
from .framework import resources as r
from .framework.references import CONFIGMAP_NOT_FOUND, SECRET_NOT_FOUND
from .steps.volumes import BLOCKED as STORAGE_CLASS_CANNOT_EXPAND
from .wiring import Wiring

STATEFUL_OWNS = (r.STATEFULSETS, r.SERVICES, r.CONFIGMAPS, r.PDBS)
"""What a set that runs its pods in a StatefulSet owns."""
TAKEOVER_READS: tuple[Resource, ...] = (
    r.MATRIXONE_CLUSTERS,
    r.CNPOOLS,
    r.LOGSETS,
    r.DNSETS,
    r.TNSETS,
    r.CNSETS,
    r.PROXYSETS,
    r.PODS,
    r.CONFIGMAPS,
    r.STATEFULSETS,
    r.DEPLOYMENTS,
)
"""What the Kruise takeover guard of every set reads: whether the set's cluster (or, for
a pool's set, its CNPool) opted in, and the sets of the namespace with their pods, ConfigMaps and our workloads."""
WARNING_REASONS = frozenset(
    {
        "InvalidSpec",
        "InvalidConfig",
        "NoLogService",
        "RolloutStalled",
        STORAGE_CLASS_CANNOT_EXPAND,
        SECRET_NOT_FOUND,
        CONFIGMAP_NOT_FOUND,
        TAKEOVER_REFUSED,
    }
)
"""The trouble every set may report: a spec or config refused, a missing dependency or
reference, a stalled rollout, volumes that cannot grow, a takeover refused."""


def guarded_set(
    wiring: Wiring,
    name: str,
    res: Resource,
    actor: Actor,
    component: Component,
    owns: Iterable[Resource],
    *,
    warning_reasons: frozenset[str] = frozenset(),
    quiet_fields: frozenset[str] = frozenset(),
) -> Controller:
    """The controller of a set kind, its actor behind the takeover guard; it warns with
    the skeleton's reasons and ``warning_reasons``."""
    return wiring.actor_controller(
        name,
        res,
        KruiseGuard(actor, wiring.env, component),
        owns,
        reads=TAKEOVER_READS,
        warning_reasons=WARNING_REASONS | warning_reasons,
        quiet_fields=quiet_fields,
    )
