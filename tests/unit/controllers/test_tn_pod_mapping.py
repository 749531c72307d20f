"""The pods, volume claims and storage classes of a TN set map to the controller of its
kind only: DNSet and TNSet pods carry the same labels, and without looking the set up
each kind's controller would be asked to reconcile the other kind's sets."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.mappers import existing_only, set_of_pod, sets_of_storage_class
from mo_operator.kube.controller.controller import Request
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .controller_fakes import FakeCaches

Obj = dict[str, Any]
NS = "ns"


def tn_set(kind: str, name: str) -> Obj:
    return {"apiVersion": r.DNSETS.api_version, "kind": kind, "metadata": {"name": name, "namespace": NS}}


def owned(kind: str, name: str, set_name: str, **spec: Any) -> Obj:
    """A pod or volume claim of ``set_name``, labelled as the TN workload labels them."""
    obj_labels = labels.sub_resource_labels(Component.TN, set_name, NS)
    return {"kind": kind, "metadata": {"name": name, "namespace": NS, "labels": obj_labels}, "spec": spec}


def test_a_pod_maps_to_the_set_of_its_controllers_kind_only() -> None:
    caches = FakeCaches(tn_set("DNSet", "old"), tn_set("TNSet", "new"))
    dnsets = existing_only(caches, r.DNSETS, set_of_pod("DNSet"))  # type: ignore[arg-type]
    tnsets = existing_only(caches, r.TNSETS, set_of_pod("DNSet"))  # type: ignore[arg-type]
    old_pod, new_pod = owned("Pod", "old-tn-0", "old"), owned("Pod", "new-tn-0", "new")
    assert list(dnsets(old_pod)) == [Request(NS, "old")] and list(tnsets(old_pod)) == []
    assert list(tnsets(new_pod)) == [Request(NS, "new")] and list(dnsets(new_pod)) == []


def test_a_storage_class_maps_to_the_sets_of_its_controllers_kind_only() -> None:
    caches = FakeCaches(
        tn_set("DNSet", "old"),
        tn_set("TNSet", "new"),
        owned("PersistentVolumeClaim", "data-old-tn-0", "old", storageClassName="fast"),
        owned("PersistentVolumeClaim", "data-new-tn-0", "new", storageClassName="fast"),
    )
    of_class = sets_of_storage_class(caches, "DNSet")  # type: ignore[arg-type]
    fast = {"kind": "StorageClass", "metadata": {"name": "fast"}}
    assert set(of_class(fast)) == {Request(NS, "old"), Request(NS, "new")}, "both, unfiltered"
    assert list(existing_only(caches, r.TNSETS, of_class)(fast)) == [Request(NS, "new")]  # type: ignore[arg-type]
