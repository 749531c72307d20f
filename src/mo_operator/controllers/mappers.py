"""Event mappers several controllers share: which of a set kind's objects a change
of a pod, a claim, a StorageClass, a LogSet or a DNSet concerns. A mapper only one
controller uses lives with that controller."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.controller import (
    Request,
    annotations_changed,
    deletion_started,
    generation_changed,
    labels_changed,
)
from mo_operator.kube.meta.objects import (
    key_of,
    mapping_at,
    meta_of,
    name_of,
    namespace_of,
    spec_of,
    status_of,
)
from mo_operator.matrixone import labels

from .framework import resources as r
from .framework.env import LOGSET_REF_INDEX, Caches
from .steps.deps import ready_at_generation
from .wiring import Mapper


def set_of_pod(component_kind: str) -> Mapper:
    """Map a pod (or a volume claim) to the set it belongs to, by its labels (pods
    and claims are owned by the set's workload, not by the set itself)."""

    def mapper(pod: Mapping[str, Any]) -> Iterable[Request]:
        meta = meta_of(pod)
        if meta.labels.get(labels.COMPONENT) != component_kind or not meta.labels.get(labels.INSTANCE):
            return []
        return [Request(meta.namespace, meta.labels[labels.INSTANCE])]

    return mapper


def existing_only(caches: Caches, res: Resource, mapper: Mapper) -> Mapper:
    """``mapper``'s requests for the objects of ``res`` in the cache: the pods of a DNSet
    and of a TNSet carry the same labels, and each kind's controller would otherwise
    reconcile, for nothing, the sets of the other kind."""

    def only(obj: Mapping[str, Any]) -> Iterable[Request]:
        return [req for req in mapper(obj) if caches.get(res, req.namespace, req.name) is not None]

    return only


def sets_of_storage_class(caches: Caches, component_kind: str) -> Mapper:
    """Map a StorageClass to the sets of ``component_kind`` with claims of that class
    (one that starts allowing expansion lets their volumes grow)."""
    of_claim = set_of_pod(component_kind)

    def mapper(storage_class: Mapping[str, Any]) -> Iterable[Request]:
        name = name_of(storage_class)
        return {
            req
            for claim in caches.list(r.PVCS)
            if spec_of(claim).get("storageClassName") == name
            for req in of_claim(claim)
        }

    return mapper


def dependents_of_logset(caches: Caches, res: Resource) -> Mapper:
    """Map a LogSet to the sets of kind ``res`` that depend on it."""

    def mapper(logset: Mapping[str, Any]) -> Iterable[Request]:
        key = key_of(logset)
        return [Request(namespace_of(d), name_of(d)) for d in caches.by_index(res, LOGSET_REF_INDEX, key)]

    return mapper


def news_for_dependents(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """A change of a LogSet or DNSet that its dependents read (``steps/deps.py``): its
    spec, labels or annotations (reserved ordinals), its deletion, its discovery address,
    or whether it is Ready at its latest generation. The rest of its status (each
    step's message, HAKeeper's view, store counts) moves several times while it
    converges, and would wake every dependent each time for nothing."""
    return (
        generation_changed(old, new)
        or labels_changed(old, new)
        or annotations_changed(old, new)
        or deletion_started(old, new)
        or status_of(old).get("discovery") != status_of(new).get("discovery")
        or ready_at_generation(old) != ready_at_generation(new)
    )


def dependents_of_dnset(caches: Caches) -> Mapper:
    """Map a DNSet (or TNSet) to the CNSets of its namespace whose ``deps.dnSet`` names it:
    a CNSet that has not started waits for it (``steps/deps.py``)."""

    def mapper(dnset: Mapping[str, Any]) -> Iterable[Request]:
        namespace, name = namespace_of(dnset), name_of(dnset)
        return [
            Request(namespace, name_of(cn))
            for cn in caches.list(r.CNSETS, namespace)
            if mapping_at(cn, "deps", "dnSet", "metadata").get("name") == name
        ]

    return mapper
