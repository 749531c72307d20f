"""CN pods as the CNSet creates them, and what it reads back from them.

A CN pod is the set's pod template plus what makes it one member:
``hostname``/``subdomain`` (its DNS name, from which its store UUID is
derived), the template hash it was built from (a pod of an older hash is
outdated and rolls), the store UUID and the CN labels, the HAKeeper it
registers with and the LogSet behind it (so its store can be deleted from
HAKeeper when the pod goes, even after its CNSet is gone), and the
``matrixorigin.io/cn-draining`` finalizer guarding that store.

The CN labels are left out of the template hash: they are synced to
HAKeeper in place, as upstream does, and never restart a CN.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.meta.objects import annotations_of, labels_of, meta_of, spec_of
from mo_operator.matrixone import identity, labels, layout, names
from mo_operator.matrixone.component import Component

from ..framework.desired import content_hash
from ..framework.meta import child_metadata, owner_reference

Obj = dict[str, Any]

TEMPLATE_HASH = "matrixorigin.io/template-hash"
"""Label: the hash of the pod template a CN pod was built from."""
HAKEEPER_ANNOTATION = "matrixorigin.io/hakeeper-discovery"
"""Annotation: the HAKeeper address the CN registers with."""
LOGSET_ANNOTATION = "matrixorigin.io/logset"
"""Annotation: ``namespace/name`` of the LogSet behind that HAKeeper (absent for an external one)."""

COMPONENT = Component.CN


def template_hash(template: Mapping[str, Any]) -> str:
    return content_hash(template)


def cache_claim_name(pod: str) -> str:
    """The cache volume claim of a CN pod (as a CloneSet names it: ``<template>-<pod>``)."""
    return f"{layout.DATA_VOLUME}-{pod}"


def cn_pod(
    owner: Mapping[str, Any],
    template: Mapping[str, Any],
    digest: str,
    index: int,
    *,
    discovery: str,
    logset: str | None,
    cn_labels: str,
    cache_volume: bool,
) -> Obj:
    """Pod ``<cn>-cn-<index>`` of CNSet ``owner`` from ``template`` (whose hash is ``digest``)."""
    set_name, namespace = owner["metadata"]["name"], owner["metadata"].get("namespace") or ""
    name = names.pod_name(COMPONENT, set_name, index)
    tmeta = meta_of(template)
    pod_labels = {
        **tmeta.labels,
        TEMPLATE_HASH: digest,
        labels.CN_UUID: identity.cn_store_uuid(name, set_name, namespace),
    }
    annotations = {
        **tmeta.annotations,
        labels.CN_LABEL: cn_labels,
        HAKEEPER_ANNOTATION: discovery,
    }
    if logset:
        annotations[LOGSET_ANNOTATION] = logset
    meta = child_metadata(owner, name, pod_labels, annotations)
    meta["finalizers"] = [labels.CN_DRAINING_FINALIZER]
    spec = copy.deepcopy(dict(spec_of(template)))
    spec["hostname"] = name
    spec["subdomain"] = names.headless_service_name(COMPONENT, set_name)
    if cache_volume:
        spec["volumes"] = [
            *spec.get("volumes", []),
            {"name": layout.DATA_VOLUME, "persistentVolumeClaim": {"claimName": cache_claim_name(name)}},
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def cache_claim(
    owner: Mapping[str, Any],
    pod: Mapping[str, Any],
    size: str,
    storage_class: str | None,
    obj_labels: Mapping[str, str],
    *,
    reuse: bool,
) -> Obj:
    """The cache volume claim of ``pod``: owned by the pod (it goes with it), or by
    the CNSet when ``reusePVC`` keeps it for the next pod of the same name."""
    spec: Obj = {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": size}},
    }
    if storage_class:
        spec["storageClassName"] = storage_class
    meta = child_metadata(owner, cache_claim_name(pod["metadata"]["name"]), obj_labels)
    if not reuse:
        ref = owner_reference(pod)
        meta["ownerReferences"] = [{**ref, "apiVersion": "v1", "kind": "Pod"}]
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def cn_labels_json(spec: CNSetSpec) -> str:
    """The ``matrixone.cloud/cn-label`` annotation: the set's cnLabels as JSON."""
    cn_labels = [dump(item) for item in spec.cn_labels or ()]
    return json.dumps(cn_labels, separators=(",", ":"), sort_keys=True)


def index_of(pod: Mapping[str, Any]) -> int:
    found = names.pod_ordinal(pod["metadata"]["name"])
    return found if found is not None else -1


def store_uuid(pod: Mapping[str, Any]) -> str:
    return str(labels_of(pod).get(labels.CN_UUID) or "")


def draining_since(pod: Mapping[str, Any]) -> str | None:
    return annotations_of(pod).get(labels.STORE_DRAINING_START)
