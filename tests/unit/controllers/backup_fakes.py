"""Hand-built snapshots for the backup and restore controllers: a client that records
writes over ``controller_fakes.FakeCaches``, and the objects (jobs, Jobs, pods,
Backups) in the shapes the API serves."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, cast

from mo_operator.api.kinds import API_VERSION
from mo_operator.controllers.framework.env import Caches, Env, Settings
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone import labels

from .controller_fakes import FakeCaches

Obj = dict[str, Any]
NS = "ns"
NOW = 1_700_000_000.0
META = (
    "4d21b228-10dd-11ef-9497-26dd28356ef2,1048576,backups/daily,2023-11-14T22:13:20Z,1s,2023-11-14T22:13:21Z"
)


class FakeClient:
    """Records writes; ``create`` of a name the cache holds answers AlreadyExists."""

    def __init__(self, caches: FakeCaches) -> None:
        self.caches = caches
        self.calls: list[tuple[str, str, Any]] = []

    async def create(self, res: Resource, obj: Mapping[str, Any], namespace: str | None = None) -> Obj:
        meta = obj["metadata"]
        if self.caches.get(res, meta.get("namespace") or "", meta["name"]) is not None:
            raise ApiError(409, "AlreadyExists", f"{res.kind} {meta['name']} already exists")
        self.calls.append(("create", res.kind, copy.deepcopy(dict(obj))))
        return dict(obj)

    async def get(self, res: Resource, name: str, namespace: str | None = None) -> Obj:
        found = self.caches.get(res, namespace or "", name)
        if found is None:
            raise ApiError(404, "NotFound", name)
        return found

    async def delete(self, res: Resource, name: str, namespace: str | None = None, **kw: Any) -> None:
        self.calls.append(("delete", res.kind, {"name": name, **kw}))

    async def patch(
        self, res: Resource, name: str, patch: Any, namespace: str | None = None, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", res.kind, {"name": name, "patch": patch}))
        return {}


def env(caches: FakeCaches, now: float = NOW) -> tuple[Env, FakeClient]:
    client = FakeClient(caches)
    settings = Settings(busy_poll_seconds=0.5)
    return Env(cast(Any, client), cast(Caches, caches), cast(Any, None), settings, lambda: now), client


def meta(name: str, namespace: str = NS, uid: str | None = None, **extra: Any) -> Obj:
    return {
        "name": name,
        "namespace": namespace,
        "uid": uid or f"uid-{name}",
        "generation": 1,
        "resourceVersion": "7",
        "creationTimestamp": "2023-11-14T22:13:00Z",
        **extra,
    }


def ended(status: str, reason: str, at: float, message: str = "") -> Obj:
    from mo_operator.controllers.specs.pods import format_time

    return {
        "type": "Ended",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": format_time(at),
    }


S3_TARGET = {
    "s3": {
        "path": "backups/daily",
        "type": "minio",
        "endpoint": "http://minio:9000",
        "secretRef": {"name": "s3-keys"},
    }
}


def backupjob(status: Obj | None = None, **spec: Any) -> Obj:
    body = {"source": {"clusterRef": "mo"}, "target": copy.deepcopy(S3_TARGET), **spec}
    return {
        "apiVersion": API_VERSION,
        "kind": "BackupJob",
        "metadata": meta("nightly"),
        "spec": body,
        "status": status or {},
    }


def restorejob(status: Obj | None = None, overlay: Obj | None = None, **spec: Any) -> Obj:
    body = {
        "backupName": "nightly-4d21b",
        "target": {"s3": {"path": "bucket/copy", "secretRef": {"name": "t-keys"}}},
    }
    body.update(spec)
    obj = {
        "apiVersion": API_VERSION,
        "kind": "RestoreJob",
        "metadata": meta("restore1"),
        "spec": body,
        "status": status or {},
    }
    if overlay:
        obj["overlay"] = overlay
    return obj


def source_cluster(**status: Any) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "MatrixOneCluster",
        "metadata": meta("mo"),
        "spec": {},
        "status": {"host": "mo-proxy.ns", "port": 6001, "credentialRef": {"name": "mo-credential"}, **status},
    }


def backup_object(
    name: str = "nightly-4d21b", backup_id: str = "4d21b228-10dd-11ef-9497-26dd28356ef2"
) -> Obj:
    return {
        "apiVersion": API_VERSION,
        "kind": "Backup",
        "metadata": {"name": name, "uid": f"uid-{name}"},
        "meta": {
            "id": backup_id,
            "location": copy.deepcopy(S3_TARGET),
            "atTime": "2023-11-14T22:13:20Z",
            "completeTime": "2023-11-14T22:13:21Z",
            "sourceRef": "matrixonecluster/ns/mo",
            "raw": META if backup_id in META else f"{backup_id},1",
        },
    }


def job_of(owner: Mapping[str, Any], *, failed: str | None = None, complete: bool = False) -> Obj:
    kind = owner["kind"]
    conditions = []
    if failed:
        conditions.append({"type": "Failed", "status": "True", "reason": failed, "message": "too bad"})
    if complete:
        conditions.append({"type": "Complete", "status": "True"})
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            **meta(owner["metadata"]["name"], uid="uid-job"),
            "labels": {labels.COMPONENT: kind, labels.INSTANCE: owner["metadata"]["name"]},
            "ownerReferences": [
                {
                    "kind": kind,
                    "name": owner["metadata"]["name"],
                    "uid": owner["metadata"]["uid"],
                    "controller": True,
                }
            ],
        },
        "spec": {},
        "status": {"conditions": conditions},
    }


def job_pod(owner: Mapping[str, Any], state: Obj, phase: str = "Running") -> Obj:
    name = owner["metadata"]["name"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            **meta(f"{name}-x7k2p"),
            "labels": {labels.COMPONENT: owner["kind"], labels.INSTANCE: name},
            "ownerReferences": [{"kind": "Job", "name": name, "uid": "uid-job", "controller": True}],
        },
        "spec": {},
        "status": {"phase": phase, "containerStatuses": [{"name": "br", "state": state}]},
    }


def terminated(code: int, message: str = "") -> Obj:
    term: Obj = {
        "exitCode": code,
        "reason": "Completed" if code == 0 else "Error",
        "startedAt": "2023-11-14T22:13:20Z",
        "finishedAt": "2023-11-14T22:13:22Z",
    }
    if message:
        term["message"] = message
    return {"terminated": term}
