"""The CNSet controller's wiring, and the finalizer of the CN stores of its pods."""

from __future__ import annotations

from mo_operator.kube.controller.controller import Controller, deletion_started
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..mappers import (
    dependents_of_dnset,
    dependents_of_logset,
    news_for_dependents,
    set_of_pod,
    sets_of_storage_class,
)
from ..sets import guarded_set
from ..steps.rpchealth import WARNING_REASONS as RPC_WARNING_REASONS
from ..wiring import Wiring
from .actor import CNSetActor
from .store_finalizer import CNStoreFinalizer

WARNING_REASONS = RPC_WARNING_REASONS
"""Besides the sets' own: MatrixOne out of reach, or refusing what we asked."""


def setup(wiring: Wiring) -> None:
    """CN sets: their pods (owned directly), Services, ConfigMaps and claims, woken by
    their LogSet and the DNSet or TNSet they wait for, their claims and the claims'
    StorageClasses; and the finalizer that removes a deleted CN pod's store from HAKeeper."""
    caches = wiring.caches
    cn = guarded_set(
        wiring,
        "cnset",
        r.CNSETS,
        CNSetActor(wiring.env),
        Component.CN,
        (r.PODS, r.SERVICES, r.CONFIGMAPS, r.PVCS, r.PDBS),
        warning_reasons=WARNING_REASONS,
    )
    wiring.watch(cn, r.LOGSETS, dependents_of_logset(caches, r.CNSETS), news_for_dependents)
    for tn_res in (r.DNSETS, r.TNSETS):
        wiring.watch(cn, tn_res, dependents_of_dnset(caches), news_for_dependents)
    wiring.watch(cn, r.PVCS, set_of_pod("CNSet"))
    wiring.watch(cn, r.STORAGECLASSES, sets_of_storage_class(caches, "CNSet"))
    stores = Controller(
        "cnstore", CNStoreFinalizer(wiring.env, wiring.recorder), max_concurrent=wiring.workers
    )
    for informer in caches.informers(r.PODS):
        stores.for_(informer, predicate=deletion_started)
    wiring.reads(stores, r.LOGSETS)
    wiring.add(stores)
