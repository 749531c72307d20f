"""The objects a converged cluster consists of, captured through the API
(``capture``) so that they can be created again, renamed, without the
operator (``replicate``, ``create_objects``)."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_devkit.testing import bounded
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import MANAGED_SELECTOR, OUR_KINDS, OWNED_KINDS
from mo_operator.controllers.operator import FIELD_MANAGER
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import AlreadyExists
from support_clusters import ClusterRef

Obj = dict[str, Any]

CACHED_KINDS: tuple[Resource, ...] = tuple(res for res in OUR_KINDS + OWNED_KINDS if res.namespaced)
"""What the operator caches (our kinds in full, the built-in kinds it owns by
label), namespaced ones: what a MatrixOneCluster consists of."""
STATUS_KINDS = {*OUR_KINDS, r.PODS, r.STATEFULSETS, r.DEPLOYMENTS, r.PVCS}
"""Kinds whose status a create leaves out (written through ``/status`` after)."""

_SERVER_SET = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "ownerReferences",  # the uids of another server's objects
    "finalizers",  # nothing would remove ours
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def clean(obj: Mapping[str, Any]) -> tuple[Obj, Obj | None]:
    """``obj`` as a client creates it (no server-set metadata, no owner
    references, no finalizers), and its status apart."""
    body = copy.deepcopy(dict(obj))
    meta = body["metadata"]
    for key in _SERVER_SET:
        meta.pop(key, None)
    status = body.pop("status", None)
    spec = body.get("spec") or {}
    if body.get("kind") == "Pod":
        spec.pop("nodeName", None)  # bound to a node that may not exist there
    if body.get("kind") == "PersistentVolumeClaim":
        spec.pop("volumeName", None)
    if body.get("kind") == "Service" and spec.get("clusterIP") != "None":
        # the server allocates a copy its own address; a headless Service's "None"
        # is its spec, which a copy without it could never be applied back to
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    return body, status


@dataclass(frozen=True)
class Captured:
    res: Resource
    body: Obj
    status: Obj | None
    by_operator: bool
    """Made by the operator, not by a workload controller (the pods of
    StatefulSets...) or by the user (see ``made_by_operator``)."""


def made_by_operator(obj: Mapping[str, Any]) -> bool:
    """The object's controller owner is one of our kinds; or it has none (a
    BucketClaim outlives its LogSet on purpose), is not a MatrixOneCluster
    (the user's), and the operator's field manager manages some of it."""
    meta = obj["metadata"]
    owner = next((ref for ref in meta.get("ownerReferences") or () if ref.get("controller")), None)
    if owner is not None:
        return owner.get("kind") in {res.kind for res in OUR_KINDS}
    managers = {entry.get("manager") for entry in meta.get("managedFields") or ()}
    return obj.get("kind") != r.MATRIXONE_CLUSTERS.kind and FIELD_MANAGER in managers


async def capture(client: ApiClient, namespaces: Iterable[str]) -> list[Captured]:
    """Every object of ``namespaces`` the operator caches, in creation order."""
    found: list[tuple[int, Captured]] = []
    for ns in namespaces:
        for res in CACHED_KINDS:
            selector = MANAGED_SELECTOR if res in OWNED_KINDS else None
            for obj in (await client.list(res, ns, label_selector=selector)).items:
                by_operator = made_by_operator(obj)
                body, status = clean(obj)
                rv = int(obj["metadata"]["resourceVersion"])
                found.append((rv, Captured(res, body, status, by_operator)))
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def replicate(template: Sequence[Captured], old: ClusterRef, new: ClusterRef) -> list[Captured]:
    """The objects of cluster ``old`` as those of cluster ``new`` (the name
    substituted everywhere, the namespace set)."""
    text = json.dumps([[c.body, c.status] for c in template])
    text = text.replace(old.name, new.name).replace(old.namespace, new.namespace)
    out = []
    for c, (body, status) in zip(template, json.loads(text), strict=True):
        meta = body["metadata"]
        meta["namespace"] = new.namespace
        if new.name not in meta["name"]:  # not named after its cluster (a BucketClaim): make it unique
            meta["name"] = f"{meta['name'][: 62 - len(new.name)]}-{new.name}"
        out.append(Captured(c.res, body, status, c.by_operator))
    return out


async def create_objects(
    client: ApiClient, objects: Sequence[Captured], concurrency: int, *, with_status: bool
) -> None:
    """Create ``objects`` (then write their status, when asked), ``concurrency`` at a time.

    An object that already exists counts as created: on a real control plane
    the StatefulSet controller makes a set's pods as soon as the set exists,
    often before the loop reaches the captured copies."""

    async def one(c: Captured) -> None:
        with contextlib.suppress(AlreadyExists):
            await client.create(c.res, c.body)
        if with_status and c.status and c.res in STATUS_KINDS:
            meta = c.body["metadata"]
            await client.patch(
                c.res, meta["name"], {"status": c.status}, meta["namespace"], subresource="status"
            )

    await bounded(concurrency, [lambda c=c: one(c) for c in objects])
