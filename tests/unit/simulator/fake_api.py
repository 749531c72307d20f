"""An in-memory stand-in for the simulator's API client, to run the wired
components in unit tests while no API server is at hand.

It keeps only what the simulator relies on: resourceVersions, uids,
generateName, status written only through ``/status``, graceful deletion of
bound pods, finalizers, binding, merge and JSON patches, and watches from a
resourceVersion. The same behaviours are checked against the embedded API
server by tests/integration/simulator.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import AsyncIterator
from typing import Any

from mo_devkit.localcluster.simulator.core.kinds import Kind
from mo_devkit.localcluster.simulator.core.kubeapi import KubeApi, KubeError
from mo_operator.kube.meta.times import format_time

Obj = dict[str, Any]
_STATUS_KINDS = {
    "Pod",
    "Node",
    "PersistentVolumeClaim",
    "PersistentVolume",
    "StatefulSet",
    "Deployment",
    "ReplicaSet",
    "Job",
    "Service",
}


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def json_patch(obj: Obj, ops: list[Obj]) -> Obj:
    out = copy.deepcopy(obj)
    for op in ops:
        parts = [p for p in op["path"].split("/")[1:]]
        parent: Any = out
        for p in parts[:-1]:
            parent = parent[int(p)] if isinstance(parent, list) else parent[p]
        last = parts[-1]
        if op["op"] == "test":
            cur = parent[int(last)] if isinstance(parent, list) else parent.get(last)
            if cur != op["value"]:
                raise KubeError(422, "Invalid", "test failed")
        elif op["op"] == "remove":
            if isinstance(parent, list):
                parent.pop(int(last))
            else:
                parent.pop(last)
        else:
            if isinstance(parent, list):
                parent.insert(int(last), op["value"])
            else:
                parent[last] = op["value"]
    return out


class FakeKubeApi(KubeApi):
    def __init__(self) -> None:
        super().__init__(None, "fake")  # type: ignore[arg-type]
        self.store: dict[tuple[str, str, str], Obj] = {}
        self.rv = 0
        self.events: list[tuple[int, str, str, Obj]] = []
        self.changed = asyncio.Condition()
        self.uids = itertools.count(1)
        self.writes: list[tuple[str, str, str]] = []

    def with_manager(self, field_manager: str) -> KubeApi:
        return self

    def _key(self, kind: Kind, ns: str, name: str) -> tuple[str, str, str]:
        return (kind.kind, ns if kind.namespaced else "", name)

    async def _emit(self, etype: str, kind: Kind, obj: Obj) -> None:
        self.events.append((self.rv, etype, kind.kind, copy.deepcopy(obj)))
        async with self.changed:
            self.changed.notify_all()

    def _bump(self, obj: Obj) -> Obj:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return obj

    async def list_all(
        self, kind: Kind, namespace: str | None = None, fields: dict[str, str] | None = None
    ) -> tuple[list[Obj], str]:
        items = [
            copy.deepcopy(o)
            for (k, ns, name), o in self.store.items()
            if k == kind.kind
            and (namespace is None or ns == namespace)
            and (not fields or fields.get("metadata.name") in (None, name))
        ]
        return items, str(self.rv)

    async def watch(
        self,
        kind: Kind,
        resource_version: str,
        timeout_seconds: int,
        namespace: str | None = None,
        fields: dict[str, str] | None = None,
    ) -> AsyncIterator[tuple[str, Obj]]:
        since = int(resource_version or 0)
        while True:
            for rv, etype, k, obj in list(self.events):
                if rv <= since:
                    continue
                since = rv
                if k != kind.kind:
                    continue
                m = obj["metadata"]
                if namespace is not None and m.get("namespace") != namespace:
                    continue
                if fields and fields.get("metadata.name") not in (None, m.get("name")):
                    continue
                yield etype, copy.deepcopy(obj)
            async with self.changed:
                if self.events and self.events[-1][0] > since:
                    continue
                await self.changed.wait()

    async def get(self, kind: Kind, namespace: str, name: str) -> Obj | None:
        o = self.store.get(self._key(kind, namespace, name))
        return copy.deepcopy(o) if o else None

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        o = copy.deepcopy(obj)
        m = o.setdefault("metadata", {})
        if not m.get("name"):
            m["name"] = f"{m['generateName']}{next(self.uids):05d}"
        ns = m.get("namespace", "") if kind.namespaced else ""
        key = self._key(kind, ns, m["name"])
        if key in self.store:
            raise KubeError(409, "AlreadyExists", f'{kind.plural} "{m["name"]}" already exists')
        m.update(uid=f"uid-{next(self.uids)}", creationTimestamp=format_time(0), generation=1)
        o.setdefault("apiVersion", kind.api_version)
        o.setdefault("kind", kind.kind)
        if kind.kind == "Pod":
            o["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
            o["spec"].setdefault("terminationGracePeriodSeconds", 30)
            o["spec"].setdefault("restartPolicy", "Always")
        self.store[key] = self._bump(o)
        self.writes.append(("create", kind.kind, m["name"]))
        await self._emit("ADDED", kind, o)
        return copy.deepcopy(o)

    async def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Any,
        *,
        subresource: str | None = None,
        patch_type: str = "merge",
    ) -> Obj:
        key = self._key(kind, namespace, name)
        old = self.store.get(key)
        if old is None:
            raise KubeError(404, "NotFound", f'{kind.plural} "{name}" not found')
        new = json_patch(old, patch) if patch_type == "json" else merge_patch(old, patch)
        rv = new["metadata"].get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise KubeError(409, "Conflict", "the object has been modified")
        if kind.kind in _STATUS_KINDS:
            if subresource == "status":
                new = dict(old, status=new.get("status"))
            else:
                new["status"] = old.get("status")
        if new.get("spec") != old.get("spec"):
            new["metadata"]["generation"] = old["metadata"].get("generation", 1) + 1
        if new == old:
            return copy.deepcopy(old)
        self.writes.append(("patch", kind.kind, name))
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            del self.store[key]
            self._bump(new)
            await self._emit("DELETED", kind, new)
            return copy.deepcopy(new)
        self.store[key] = self._bump(new)
        await self._emit("MODIFIED", kind, new)
        return copy.deepcopy(new)

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        key = ("Pod", namespace, name)
        pod = self.store.get(key)
        if pod is None:
            raise KubeError(404, "NotFound", "pod not found")
        if pod["spec"].get("nodeName"):
            raise KubeError(409, "Conflict", "already assigned")
        new = copy.deepcopy(pod)
        new["spec"]["nodeName"] = node
        conds = [c for c in new["status"].get("conditions") or [] if c["type"] != "PodScheduled"]
        new["status"]["conditions"] = [
            *conds,
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": format_time(0),
            },
        ]
        self.store[key] = self._bump(new)
        self.writes.append(("bind", "Pod", name))
        await self._emit("MODIFIED", Kind("", "v1", "Pod", "pods"), new)

    async def delete(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        grace_period: int | None = None,
        propagation: str | None = None,
    ) -> Obj | None:
        key = self._key(kind, namespace, name)
        old = self.store.get(key)
        if old is None:
            raise KubeError(404, "NotFound", f'{kind.plural} "{name}" not found')
        if uid and old["metadata"]["uid"] != uid:
            raise KubeError(409, "Conflict", "Precondition failed: UID")
        self.writes.append(("delete", kind.kind, name))
        new = copy.deepcopy(old)
        m = new["metadata"]
        graceful = (
            kind.kind == "Pod"
            and new["spec"].get("nodeName")
            and new["status"].get("phase") not in ("Succeeded", "Failed")
        )
        grace = (
            grace_period
            if grace_period is not None
            else (new["spec"].get("terminationGracePeriodSeconds", 30) if graceful else 0)
        )
        if m.get("finalizers") or (graceful and grace > 0):
            if not m.get("deletionTimestamp") or (
                graceful and grace < (m.get("deletionGracePeriodSeconds") or 0)
            ):
                m["deletionTimestamp"] = m.get("deletionTimestamp") or format_time(0)
                m["deletionGracePeriodSeconds"] = grace if graceful else 0
                self.store[key] = self._bump(new)
                await self._emit("MODIFIED", kind, new)
            return copy.deepcopy(self.store[key])
        del self.store[key]
        self._bump(new)
        await self._emit("DELETED", kind, new)
        return None

    def objects(self, kind: str) -> list[Obj]:
        return [copy.deepcopy(o) for (k, _, _), o in self.store.items() if k == kind]
