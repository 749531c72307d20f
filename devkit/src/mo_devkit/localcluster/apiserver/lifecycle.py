"""The controllers kube-apiserver and kube-controller-manager run for object
lifecycles: the garbage collector (owner references with background,
foreground and orphan propagation), the namespace controller (deleting a
namespace deletes its contents) and the CRD controller (a CRD is served once
created, its instances are deleted with it).

They run inside the embedded server, reacting to every committed write, and
write through the same registry as any client, so their effects are visible
as ordinary watch events.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from mo_operator.kube.meta.times import now_time

from .encoding.jsonutil import clone
from .errors import StatusError
from .objects import ObjectAPI, WriteOptions
from .registry import Registry
from .resources import ResourceType

Obj = dict[str, Any]
Key = tuple[str, str, str]  # (group_resource, namespace, name)
log = logging.getLogger(__name__)

CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
_GC_AGENT = "kube-controller-manager/v1.30.0 (linux/amd64) kubernetes/localcluster/generic-garbage-collector"
_NS_AGENT = "kube-controller-manager/v1.30.0 (linux/amd64) kubernetes/localcluster/namespace-controller"
_CRD_AGENT = "kube-apiserver/v1.30.0 (linux/amd64) kubernetes/localcluster/apiextensions"


class Lifecycle:
    def __init__(self, api: ObjectAPI, registry: Registry) -> None:
        self.api = api
        self.registry = registry
        self._by_uid: dict[str, Key] = {}
        self._dependents: dict[str, set[Key]] = {}
        self._pending: set[Key] = set()
        self._pending_ns: set[str] = set()
        self._pending_crd: set[str] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        api.after_write.append(self._on_write)
        self._index_existing()

    # ------------------------------------------------------------- indexing
    def _rt(self, group_resource: str) -> ResourceType | None:
        for rt in self.registry.all():
            if rt.group_resource == group_resource:
                return rt
        return None

    def _index_existing(self) -> None:
        for resource in self.api.store.resources():
            for obj in self.api.store.list(resource):
                self._index(resource, None, obj)
                meta = obj["metadata"]
                if meta.get("ownerReferences") or meta.get("deletionTimestamp"):
                    self._pending.add(_key(resource, obj))

    def _index(self, resource: str, old: Obj | None, new: Obj | None) -> None:
        if old is not None:
            key = _key(resource, old)
            for ref in old["metadata"].get("ownerReferences") or []:
                deps = self._dependents.get(ref.get("uid", ""))
                if deps is not None:
                    deps.discard(key)
                    if not deps:
                        del self._dependents[ref["uid"]]
            if new is None:
                self._by_uid.pop(old["metadata"].get("uid", ""), None)
        if new is not None:
            key = _key(resource, new)
            self._by_uid[new["metadata"]["uid"]] = key
            for ref in new["metadata"].get("ownerReferences") or []:
                self._dependents.setdefault(ref.get("uid", ""), set()).add(key)

    def _on_write(self, rt: ResourceType, old: Obj | None, new: Obj | None) -> None:
        resource = rt.group_resource
        self._index(resource, old, new)
        if new is None:
            assert old is not None
            self._pending.update(self._dependents.get(old["metadata"]["uid"], ()))
            for ref in old["metadata"].get("ownerReferences") or []:
                owner = self._by_uid.get(ref.get("uid", ""))
                if owner is not None:
                    self._pending.add(owner)  # a foreground owner may be waiting for this one
        else:
            meta = new["metadata"]
            if meta.get("ownerReferences") or meta.get("deletionTimestamp"):
                self._pending.add(_key(resource, new))
            if (rt.group, rt.kind) == ("", "Namespace") and meta.get("deletionTimestamp"):
                self._pending_ns.add(meta["name"])
            if (rt.group, rt.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
                self._pending_crd.add(meta["name"])
        if old is not None and old["metadata"].get("namespace"):
            ns = old["metadata"]["namespace"]
            nsobj = self.api.store.get("namespaces", "", ns)
            if nsobj is not None and nsobj["metadata"].get("deletionTimestamp"):
                self._pending_ns.add(ns)
        self._wake.set()

    # ------------------------------------------------------------------ loop
    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="localcluster-lifecycle")
        for crd in self.api.store.list("customresourcedefinitions.apiextensions.k8s.io"):
            self._pending_crd.add(crd["metadata"]["name"])
        for ns in self.api.store.list("namespaces"):
            if ns["metadata"].get("deletionTimestamp"):
                self._pending_ns.add(ns["metadata"]["name"])
        self._wake.set()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            # Let the writer that woke us finish its request first.
            await asyncio.sleep(0)
            try:
                await self._drain()
            except Exception:  # never let one bad object stop the loop
                log.exception("lifecycle controllers failed; retrying")
                await asyncio.sleep(0.5)
                self._wake.set()

    async def _drain(self) -> None:
        """Work through everything pending; what is still waiting (on a
        finalizer, on dependents) is looked at again shortly."""
        again_crd: set[str] = set()
        again_obj: set[Key] = set()
        again_ns: set[str] = set()
        while self._pending_crd:
            name = self._pending_crd.pop()
            if await self._sync_crd(name):
                again_crd.add(name)
        while self._pending:
            key = self._pending.pop()
            if await self._sync_object(key):
                again_obj.add(key)
        while self._pending_ns:
            ns = self._pending_ns.pop()
            if await self._sync_namespace(ns):
                again_ns.add(ns)
        if again_crd or again_obj or again_ns:
            await asyncio.sleep(0.2)
            self._pending_crd |= again_crd
            self._pending |= again_obj
            self._pending_ns |= again_ns
            self._wake.set()

    # -------------------------------------------------------------------- GC
    def _exists(self, uid: str) -> Obj | None:
        key = self._by_uid.get(uid)
        if key is None:
            return None
        obj = self.api.store.get(*key)
        if obj is None or obj["metadata"]["uid"] != uid:
            return None
        return obj

    async def _sync_object(self, key: Key) -> bool:
        obj = self.api.store.get(*key)
        rt = self._rt(key[0])
        if obj is None or rt is None:
            return False
        meta = obj["metadata"]
        retry = False
        if meta.get("deletionTimestamp"):
            finalizers = meta.get("finalizers") or []
            if "orphan" in finalizers:
                retry |= await self._orphan_dependents(rt, obj)
            elif "foregroundDeletion" in finalizers:
                retry |= await self._foreground(rt, obj)
        refs = meta.get("ownerReferences") or []
        if not refs:
            return retry
        solid, dangling, waiting = [], [], []
        for ref in refs:
            owner = self._exists(ref.get("uid", ""))
            if owner is None or (bool(key[1]) is False and owner["metadata"].get("namespace")):
                dangling.append(ref)
            elif owner["metadata"].get("deletionTimestamp") and "foregroundDeletion" in (
                owner["metadata"].get("finalizers") or []
            ):
                waiting.append(ref)
            else:
                solid.append(ref)
        if solid:
            if dangling or waiting:
                remove = {r.get("uid") for r in dangling + waiting}
                await self._set_owner_refs(rt, obj, [r for r in refs if r.get("uid") not in remove])
            return retry
        if meta.get("deletionTimestamp"):
            return retry
        policy = "Foreground" if waiting and self._dependents.get(meta["uid"]) else "Background"
        await self._delete(rt, obj, policy, _GC_AGENT)
        return retry

    async def _set_owner_refs(self, rt: ResourceType, obj: Obj, refs: list[Obj]) -> None:
        new = clone(obj)
        if refs:
            new["metadata"]["ownerReferences"] = refs
        else:
            new["metadata"].pop("ownerReferences", None)
        await self._replace(rt, obj, new, _GC_AGENT)

    async def _foreground(self, rt: ResourceType, owner: Obj) -> bool:
        uid = owner["metadata"]["uid"]
        blocking = False
        for dep_key in list(self._dependents.get(uid, ())):
            dep = self.api.store.get(*dep_key)
            dep_rt = self._rt(dep_key[0])
            if dep is None or dep_rt is None:
                continue
            ref = next((r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") == uid), None)
            if ref is None:
                continue
            if ref.get("blockOwnerDeletion"):
                blocking = True
            if not dep["metadata"].get("deletionTimestamp"):
                others_solid = any(
                    (o := self._exists(r.get("uid", ""))) is not None
                    and not o["metadata"].get("deletionTimestamp")
                    for r in dep["metadata"].get("ownerReferences") or []
                    if r.get("uid") != uid
                )
                if others_solid:
                    await self._set_owner_refs(
                        dep_rt, dep, [r for r in dep["metadata"]["ownerReferences"] if r.get("uid") != uid]
                    )
                    continue
                await self._delete(
                    dep_rt,
                    dep,
                    "Foreground" if self._dependents.get(dep["metadata"]["uid"]) else "Background",
                    _GC_AGENT,
                )
        if blocking:
            return True
        await self._remove_finalizer(rt, owner, "foregroundDeletion", _GC_AGENT)
        return False

    async def _orphan_dependents(self, rt: ResourceType, owner: Obj) -> bool:
        uid = owner["metadata"]["uid"]
        for dep_key in list(self._dependents.get(uid, ())):
            dep = self.api.store.get(*dep_key)
            dep_rt = self._rt(dep_key[0])
            if dep is None or dep_rt is None:
                continue
            await self._set_owner_refs(
                dep_rt, dep, [r for r in dep["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            )
        await self._remove_finalizer(rt, owner, "orphan", _GC_AGENT)
        return False

    # ------------------------------------------------------------ namespaces
    async def _sync_namespace(self, name: str) -> bool:
        ns = self.api.store.get("namespaces", "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return False
        remaining = 0
        for rt in self.registry.all():
            if not rt.namespaced or rt.version != self._served_version(rt):
                continue
            for obj in self.api.store.list(rt.group_resource, name):
                remaining += 1
                if not obj["metadata"].get("deletionTimestamp"):
                    await self._delete(rt, obj, "Background", _NS_AGENT)
        if remaining:
            return True
        ns_rt = self._rt("namespaces")
        assert ns_rt is not None
        if "kubernetes" in ((ns.get("spec") or {}).get("finalizers") or []):
            new = clone(ns)
            new["spec"]["finalizers"] = [f for f in new["spec"]["finalizers"] if f != "kubernetes"]
            await self._replace(ns_rt, ns, new, _NS_AGENT)
        return False

    def _served_version(self, rt: ResourceType) -> str:
        first = self.registry.by_kind(rt.group, rt.kind)
        return first.version if first else rt.version

    # ------------------------------------------------------------------ CRDs
    async def _sync_crd(self, name: str) -> bool:
        crd_rt = self._rt("customresourcedefinitions.apiextensions.k8s.io")
        assert crd_rt is not None
        crd = self.api.store.get(crd_rt.group_resource, "", name)
        if crd is None:
            self.registry.remove_custom(name)
            return False
        if crd["metadata"].get("deletionTimestamp"):
            types = self.registry.custom_types(name)
            remaining = 0
            for rt in types[:1]:
                for obj in self.api.store.list(rt.group_resource):
                    remaining += 1
                    if not obj["metadata"].get("deletionTimestamp"):
                        await self._delete(rt, obj, "Background", _CRD_AGENT)
            if remaining:
                return True
            self.registry.remove_custom(name)
            await self._remove_finalizer(crd_rt, crd, CRD_FINALIZER, _CRD_AGENT)
            return False
        self.registry.set_custom(crd)
        new = clone(crd)
        if CRD_FINALIZER not in (new["metadata"].get("finalizers") or []):
            new["metadata"].setdefault("finalizers", []).append(CRD_FINALIZER)
            new = await self._replace(crd_rt, crd, new, _CRD_AGENT)
            crd = new
            new = clone(crd)
        spec = new.get("spec") or {}
        names = dict(spec.get("names") or {})
        status = new.setdefault("status", {})
        old_conditions = {c["type"]: c for c in status.get("conditions") or []}
        conditions = []
        for ctype, reason, message in (
            ("NamesAccepted", "NoConflicts", "no conflicts found"),
            ("Established", "InitialNamesAccepted", "the initial names have been accepted"),
        ):
            prev = old_conditions.get(ctype)
            if prev and prev.get("status") == "True":
                conditions.append(prev)
            else:
                conditions.append(
                    {
                        "type": ctype,
                        "status": "True",
                        "reason": reason,
                        "message": message,
                        "lastTransitionTime": now_time(),
                    }
                )
        status["conditions"] = conditions
        status["acceptedNames"] = names
        stored = sorted(
            {v["name"] for v in spec.get("versions") or [] if v.get("storage")}
            | set(status.get("storedVersions") or [])
        )
        status["storedVersions"] = stored
        if new != crd:
            await self._replace(crd_rt, crd, new, _CRD_AGENT, subresource="status")
        return False

    # -------------------------------------------------------------- writes
    async def _delete(self, rt: ResourceType, obj: Obj, policy: str, agent: str) -> None:
        meta = obj["metadata"]
        try:
            await self.api.delete(
                rt,
                meta.get("namespace", ""),
                meta["name"],
                {"propagationPolicy": policy, "preconditions": {"uid": meta["uid"]}},
                WriteOptions(user_agent=agent),
            )
        except StatusError as e:
            if e.code not in (404, 409):
                raise

    async def _replace(self, rt: ResourceType, old: Obj, new: Obj, agent: str, subresource: str = "") -> Obj:
        try:
            return await self.api.replace_with(rt, old, new, WriteOptions(user_agent=agent), subresource)
        except StatusError as e:
            if e.code in (404, 409):
                return old
            raise

    async def _remove_finalizer(self, rt: ResourceType, obj: Obj, finalizer: str, agent: str) -> None:
        if finalizer not in (obj["metadata"].get("finalizers") or []):
            return
        new = clone(obj)
        new["metadata"]["finalizers"] = [f for f in new["metadata"]["finalizers"] if f != finalizer]
        await self._replace(rt, obj, new, agent)


def _key(resource: str, obj: Obj) -> Key:
    meta = obj["metadata"]
    return (resource, meta.get("namespace", ""), meta["name"])
