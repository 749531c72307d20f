"""Metadata of the objects the operator creates: owner references and labels.

Every created object has its creator as controller owner (so it is garbage
collected with it and its changes re-queue the creator) and the three
labels upstream selects by, plus the cluster label when the set belongs to
a MatrixOneCluster (so ``kubectl get all -l matrixorigin.io/cluster=mo``
shows a whole cluster).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.meta.objects import is_deleting as is_deleting
from mo_operator.kube.meta.objects import labels_of, mapping_at, meta_of
from mo_operator.kube.meta.objects import name_of as name_of
from mo_operator.kube.meta.objects import namespace_of as namespace_of
from mo_operator.kube.meta.objects import uid_of as uid_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]


def owner_reference(owner: Mapping[str, Any]) -> Obj:
    """A controller owner reference to ``owner`` that blocks its foreground deletion."""
    meta = owner["metadata"]
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def cluster_of(obj: Mapping[str, Any]) -> str | None:
    """The MatrixOneCluster a set belongs to (its cluster label), if any."""
    return labels_of(obj).get(labels.CLUSTER)


def set_labels(component: Component, owner: Mapping[str, Any]) -> dict[str, str]:
    """Labels of every object a set owns: the selector labels, plus its cluster's."""
    meta = owner["metadata"]
    out = labels.sub_resource_labels(component, meta["name"], meta.get("namespace") or "")
    cluster = cluster_of(owner)
    if cluster:
        out.update(labels.cluster_labels(cluster))
    return out


def child_metadata(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    annotations: Mapping[str, str] | None = None,
) -> Obj:
    """``metadata`` of an object ``owner`` creates in its own namespace."""
    meta: Obj = {
        "name": name,
        "namespace": owner["metadata"].get("namespace") or "",
        "labels": dict(obj_labels),
        "ownerReferences": [owner_reference(owner)],
    }
    if annotations:
        meta["annotations"] = dict(annotations)
    return meta


def logset_ref(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(namespace, name)`` of the LogSet a set's ``deps`` names (in the set's
    namespace when the reference names none), if it names one."""
    ref = meta_of(mapping_at(obj, "deps", "logSet"))
    if not ref.name:
        return None
    return ref.namespace or namespace_of(obj), ref.name


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    """Whether ``owner`` (by uid) is ``obj``'s controller owner."""
    controller = meta_of(obj).controller
    return controller is not None and controller.get("uid") == owner["metadata"].get("uid")
