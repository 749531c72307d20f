"""Hand-built LogSets and BucketClaims, and the fake cache, client and event
recorder the BucketClaim tests run the actor on."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mo_operator.controllers.bucketclaim import BucketClaimActor
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import Settings
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import labels_of, status_of
from mo_operator.matrixone import buckets, labels

Obj = dict[str, Any]
NS = "ns"
S3: Obj = {"path": "bucket/mo", "s3RetentionPolicy": "Retain"}
TEMPLATE: Obj = {
    "spec": {"nodeSelector": {"pool": "mo"}, "tolerations": [{"key": "t", "operator": "Exists"}]}
}


def logset(name: str = "mo", *, ns: str = NS, cluster: str | None = "mo", discovery: bool = False) -> Obj:
    obj: Obj = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "LogSet",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": {}},
        "spec": {"replicas": 3, "sharedStorage": {"s3": dict(S3)}},
    }
    if cluster:
        obj["metadata"]["labels"][labels.CLUSTER] = cluster
    if discovery:
        obj["status"] = {"discovery": {"address": "x", "port": 32001}}
    return obj


def claim(
    name: str = "bucket-uid-mo",
    *,
    ns: str = NS,
    bound: str | None = f"{NS}/mo",
    created: str = "2024-01-01T00:00:00Z",
    deleting: bool = False,
    policy: str = "Retain",
    written: bool = False,
    cluster: str | None = "mo",
) -> Obj:
    annotations = {buckets.BIND_TO: bound or ""}
    if written:
        annotations[buckets.ANY_INSTANCE_RUNNING] = "true"
    obj_labels = {
        labels.NAMESPACE: ns,
        labels.INSTANCE: "mo",
        labels.COMPONENT: "LogSet",
        buckets.UNIQUE_ID: buckets.unique_id(S3),
    }
    if cluster:
        obj_labels[labels.CLUSTER] = cluster
    obj: Obj = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "BucketClaim",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": created,
            "labels": obj_labels,
            "annotations": annotations,
            # a deleted claim as its last round sees it: the data guard already removed
            "finalizers": [OUR_FINALIZER] if deleting else [OUR_FINALIZER, labels.BUCKET_DATA_FINALIZER],
        },
        "spec": {"s3": {**S3, "s3RetentionPolicy": policy}, "logSetSpec": TEMPLATE},
    }
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2024-01-02T00:00:00Z"
    return obj


OUR_FINALIZER = "matrixorigin.io/BucketClaim"
OLD_FINALIZER = "matrixorigin.io/bucketclaim"
"""The finalizer earlier versions of this operator put on claims."""


class FakeCaches:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Obj] = {}

    def add(self, res: Resource, obj: Obj) -> None:
        meta = obj["metadata"]
        self.objects[(res.kind, meta.get("namespace") or "", meta["name"])] = obj

    def get(self, res: Resource, namespace: str, name: str) -> Obj | None:
        return self.objects.get((res.kind, namespace, name))

    def list(
        self, res: Resource, namespace: str | None = None, match_labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        return [
            o
            for (kind, ns, _), o in self.objects.items()
            if kind == res.kind
            and (namespace is None or ns == namespace)
            and all(labels_of(o).get(k) == v for k, v in (match_labels or {}).items())
        ]


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    async def create(self, res: Resource, obj: Obj, namespace: str | None = None) -> Obj:
        self.calls.append(("create", res.kind, obj))
        return obj

    async def patch(
        self, res: Resource, name: str, patch: Obj, namespace: str | None = None, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", res.kind, patch))
        return {"metadata": {"name": name, "resourceVersion": "8"}}

    async def apply(self, obj: Obj, **kw: Any) -> Obj:
        self.calls.append(
            ("apply", str(obj["kind"]) + ("/" + kw["subresource"] if kw.get("subresource") else ""), obj)
        )
        return obj

    async def delete(self, res: Resource, name: str, namespace: str | None = None, **kw: Any) -> None:
        self.calls.append(("delete", res.kind, {"name": name, **kw}))


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.seen.append((type, reason, message))


class World:
    def __init__(self) -> None:
        from mo_operator.controllers.framework.env import Env

        self.caches = FakeCaches()
        self.client = FakeClient()
        self.events = Events()
        self.env = Env(self.client, self.caches, None, Settings(poll_seconds=5, busy_poll_seconds=1))  # type: ignore[arg-type]
        self.actor = BucketClaimActor(self.env)

    def context(self, obj: Obj) -> Context:
        log = logging.LoggerAdapter(logging.getLogger("test"), {})
        return Context(obj, "r1", log, self.events, status=dict(status_of(obj)))

    def pod(self, name: str, component: str, cluster: str = "mo", *, ns: str = NS) -> None:
        self.caches.add(
            r.PODS,
            {
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": {labels.CLUSTER: cluster, labels.COMPONENT: component},
                }
            },
        )
