"""The DNSet controller: the transaction nodes (``tnset.py`` serves the same
thing under its newer name, TNSet).

What it owns, named as upstream names them: the StatefulSet ``<tn>-dn``
(with a ``mo-data`` cache volume per pod when ``cacheVolume`` is set), the
headless Service (store addresses), the metric Service (when Prometheus
discovers it, see specs/prometheus.py) and the immutable
hashed ConfigMap.

A TN needs its log service: until its LogSet is Ready (at its latest
generation, as upstream's ``GetDependencies``) the set waits, saying so in
its Ready condition; the LogSet's own progress wakes it. Its pods are Ready
as the kubelet reports them (upstream gives them no probe); the StatefulSet
rolls them one at a time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from mo_operator.api.dnset import DNSet, DNSetSpec
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import layout, names, ports
from mo_operator.matrixone.component import Component

from .framework import resources as r
from .framework.desired import stamped
from .framework.draft import Drafting
from .mappers import (
    dependents_of_logset,
    existing_only,
    news_for_dependents,
    set_of_pod,
    sets_of_storage_class,
)
from .sets import STATEFUL_OWNS, guarded_set
from .specs.podtemplate import canonical_size
from .specs.services import headless_service
from .specs.statefulsets import Rollout, overlay_claims, statefulset, volume_claim_template
from .steps.podset import STATEFUL, Desired, PodSetActor
from .steps.podset_input import SetInput, SetView
from .steps.status import Readiness, store_status
from .wiring import Wiring

Obj = dict[str, Any]

COMPONENT = Component.TN
READINESS = Readiness(
    members="TN stores registered in HAKeeper",
    not_ready="StoresNotReady",
    all_ready="AllStoresReady",
    noun="TN stores",
)
HEADLESS_PORTS = (
    ("service", ports.TN_SERVICE),
    ("lock-service", ports.TN_LOCK_SERVICE),
    ("logtail", ports.TN_LOGTAIL),
)


class DNSetActor(PodSetActor):
    model: ClassVar[type[DNSet]] = DNSet
    component = COMPONENT
    readiness = READINESS
    workload = STATEFUL

    @classmethod
    def services(cls, name: str) -> list[str]:
        return [names.headless_service_name(COMPONENT, name)]

    @classmethod
    def desired(cls, given: SetInput[DNSetSpec]) -> Desired:
        """The headless Service (store addresses), then the StatefulSet."""
        obj, spec, name = given.obj, given.spec, given.name
        headless = names.headless_service_name(COMPONENT, name)
        cache = spec.cache_volume
        template = given.pod_template(
            extra_mounts=[{"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH}] if cache else [],
            headless_service=headless,
        )
        workload = statefulset(
            obj,
            names.workload_name(COMPONENT, name),
            given.labels,
            given.selector,
            replicas=spec.replicas,
            service_name=headless,
            template=template,
            volume_claim_templates=_claim_templates(spec, given.labels),
            pvc_retention="Delete",
        )
        service = headless_service(obj, headless, given.labels, given.selector, HEADLESS_PORTS)
        return [(r.SERVICES, stamped(service)), (r.STATEFULSETS, stamped(workload))]

    @classmethod
    def first_fields(cls, obj: Mapping[str, Any], selector: Mapping[str, str]) -> Mapping[str, Any]:
        return {"availableStores": [], "failedStores": []}

    @classmethod
    def report(cls, draft: Drafting, view: SetView, roll: Rollout, selector: Mapping[str, str]) -> None:
        store_status(draft.status, view.pods, view.now)


def setup(wiring: Wiring) -> None:
    """DNSets: a StatefulSet, its Services and ConfigMaps."""
    wire_transaction_sets(wiring, "dnset", r.DNSETS, DNSetActor(wiring.env))


def wire_transaction_sets(wiring: Wiring, name: str, res: Resource, actor: DNSetActor) -> None:
    """The controller of ``res`` (DNSets or TNSets), woken by their pods and claims (of
    their own kind only: both kinds' carry the same labels), the StorageClasses of the
    claims, and their LogSet."""
    caches = wiring.caches
    tn = guarded_set(wiring, name, res, actor, COMPONENT, STATEFUL_OWNS)
    wiring.watch(tn, r.PODS, existing_only(caches, res, set_of_pod("DNSet")))
    wiring.watch(tn, r.PVCS, existing_only(caches, res, set_of_pod("DNSet")))
    of_class = sets_of_storage_class(caches, "DNSet")
    wiring.watch(tn, r.STORAGECLASSES, existing_only(caches, res, of_class))
    wiring.watch(tn, r.LOGSETS, dependents_of_logset(caches, res), news_for_dependents)


def _claim_templates(spec: DNSetSpec, obj_labels: Mapping[str, str]) -> list[Obj]:
    """The ``mo-data`` cache volume (when ``cacheVolume`` is set), then the overlay's claims."""
    claims: list[Obj] = []
    cache = spec.cache_volume
    if cache:
        claims.append(
            volume_claim_template(
                layout.DATA_VOLUME, canonical_size(cache.size), cache.storage_class_name, obj_labels
            )
        )
    claims += overlay_claims(spec)
    return claims
