"""The generic registry: create, update, patch, delete, get and list of any
resource, with the order of steps kube-apiserver follows (defaulting, mutating
admission, validation, validating admission, storage) and its preconditions.

HTTP concerns (paths, content types, tables, watch streams) live in
``routing.py``, ``handlers.py``, ``tables.py`` and ``storage/watch.py``; CRD
validation in ``validation/crd.py``, Service addresses in ``allocation.py``;
background controllers (garbage collection, namespaces, CRD status) in their
own modules. This module only decides what gets stored.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.times import now_time

from . import defaults, strategy
from .allocation import ServiceAllocator
from .encoding import quantities
from .encoding.go_zero_values import with_zero_values, zero_object
from .encoding.jsonutil import clone
from .errors import (
    StatusError,
    already_exists,
    bad_request,
    field_cause,
    forbidden,
    invalid,
    not_found,
    stale_conflict,
)
from .registry import Registry
from .resources import ResourceType
from .storage.store import Store
from .validation.crd import validate_crd
from .validation.kinds import validate_object

Obj = dict[str, Any]
AdmissionHook = Callable[["AdmissionRequest"], Awaitable[Obj]]

_SYSTEM_META = ("uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds")
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


@dataclass
class WriteOptions:
    field_manager: str = ""
    dry_run: bool = False
    field_validation: str = "Strict"
    user_agent: str = ""
    force: bool = False
    warnings: list[str] = field(default_factory=list)

    def manager(self) -> str:
        if self.field_manager:
            return self.field_manager
        # kube-apiserver derives a default manager from the user agent's first token.
        return (self.user_agent or "unknown").split("/", 1)[0] or "unknown"


@dataclass
class AdmissionRequest:
    rt: ResourceType
    operation: str  # CREATE, UPDATE, DELETE
    namespace: str
    name: str
    object: Obj | None
    old_object: Obj | None
    subresource: str
    options: WriteOptions
    mutating: bool


class ObjectAPI:
    """Stored-object operations shared by the HTTP layer and the internal controllers."""

    def __init__(self, store: Store, registry: Registry) -> None:
        self.store = store
        self.registry = registry
        self.admission: AdmissionHook | None = None
        self.after_write: list[Callable[[ResourceType, Obj | None, Obj | None], None]] = []
        self._allocator = ServiceAllocator()

    # ------------------------------------------------------------------ reads
    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        obj = self.store.get(rt.group_resource, namespace, name)
        if obj is None:
            raise not_found(rt.group_resource, name)
        return obj

    def find(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self.store.get(rt.group_resource, namespace, name)

    # ----------------------------------------------------------------- create
    async def create(
        self,
        rt: ResourceType,
        namespace: str,
        body: Obj,
        opts: WriteOptions,
        managed: list[Obj] | None = None,
    ) -> Obj:
        obj = clone(body)
        self._check_type(rt, obj)
        obj = self._decode_quantities(rt, obj)
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if rt.namespaced:
            if meta.get("namespace") not in (None, "", namespace):
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
            self._check_namespace(rt, namespace, meta.get("name") or meta.get("generateName", ""))
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise bad_request("resourceVersion should not be set on objects to be created")
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices(_NAME_CHARS, k=5))
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_time()
        for f in (
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "generation",
            "selfLink",
            "managedFields",
        ):
            meta.pop(f, None)
        if strategy.has_generation(rt):
            meta["generation"] = 1
        strategy.initial_status(rt, obj)
        self._default(rt, obj, opts)
        # The creator's fields are recorded here, after defaulting and before
        # what admission, the strategy and allocation add (create.go).
        tracked = clone(obj)
        defaults.apply_creation_additions(rt.group, rt.kind, obj)
        obj = await self._admit_and_validate(rt, "CREATE", None, obj, opts, "", defaulted=True)
        if self.store.get(rt.group_resource, namespace if rt.namespaced else "", meta["name"]) is not None:
            raise already_exists(rt.group_resource, meta["name"])
        self._allocator.allocate(rt, obj)
        obj["metadata"]["managedFields"] = (
            managed if managed is not None else self._managed_fields(rt, None, tracked, opts, "")
        )
        if not obj["metadata"]["managedFields"]:
            del obj["metadata"]["managedFields"]
        return self._commit(rt, None, obj, opts)

    # ----------------------------------------------------------------- update
    async def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Obj,
        opts: WriteOptions,
        subresource: str = "",
    ) -> Obj:
        old = self.get(rt, namespace, name)
        new = clone(body)
        self._check_type(rt, new)
        meta = new.get("metadata")
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if meta.get("name") not in (None, name):
            raise bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
            )
        rv = meta.get("resourceVersion")
        if rv and rv != old["metadata"]["resourceVersion"]:
            raise stale_conflict(rt.group_resource, name)
        return await self._update(rt, old, new, opts, subresource, managed=None)

    async def replace_with(
        self,
        rt: ResourceType,
        old: Obj,
        new: Obj,
        opts: WriteOptions,
        subresource: str = "",
        managed: list[Obj] | None = None,
    ) -> Obj:
        """Store ``new`` over ``old`` (already read), as after a patch."""
        return await self._update(rt, old, new, opts, subresource, managed)

    async def _update(
        self,
        rt: ResourceType,
        old: Obj,
        new: Obj,
        opts: WriteOptions,
        subresource: str,
        managed: list[Obj] | None,
    ) -> Obj:
        new = self._decode_quantities(rt, new)
        meta = new["metadata"]
        ometa = old["metadata"]
        meta["name"] = ometa["name"]
        if rt.namespaced:
            meta["namespace"] = ometa["namespace"]
        else:
            meta.pop("namespace", None)
        for f in _SYSTEM_META:
            if f in ometa:
                meta[f] = ometa[f]
            else:
                meta.pop(f, None)
        meta.pop("selfLink", None)
        meta["resourceVersion"] = ometa["resourceVersion"]
        if managed is not None:
            meta["managedFields"] = managed
        new = strategy.merge_for_subresource(rt, old, new, subresource)
        meta = new["metadata"]
        new = await self._admit_and_validate(rt, "UPDATE", old, new, opts, subresource)
        meta = new["metadata"]
        if strategy.has_generation(rt) and subresource != "status":
            meta["generation"] = ometa.get("generation", 1) + (
                1 if strategy.spec_changed(rt, old, new) else 0
            )
        if managed is None:
            mf = self._managed_fields(rt, old, new, opts, subresource)
            if mf:
                meta["managedFields"] = mf
            else:
                meta.pop("managedFields", None)
        if _same(old, new):
            return old  # kube-apiserver skips no-op writes: no new resourceVersion, no event
        if (
            meta.get("deletionTimestamp")
            and not meta.get("finalizers")
            and not _namespace_finalizers(rt, new)
        ):
            if opts.dry_run:
                return new
            return self._remove(rt, new, last=new)
        return self._commit(rt, old, new, opts)

    # ----------------------------------------------------------------- delete
    async def delete(
        self, rt: ResourceType, namespace: str, name: str, options: Obj, opts: WriteOptions
    ) -> Obj:
        old = self.get(rt, namespace, name)
        pre = options.get("preconditions") or {}
        # The messages and details of the registry's delete preconditions
        # (apiserver/pkg/registry/generic/registry/store.go).
        if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the UID in the precondition '
                f"({pre['uid']}) does not match the UID in record ({old['metadata']['uid']}). "
                "The object might have been deleted and then recreated",
                details=_kind_details(rt, name),
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != old["metadata"]["resourceVersion"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the ResourceVersion in the '
                f"precondition ({pre['resourceVersion']}) does not match the ResourceVersion in record "
                f"({old['metadata']['resourceVersion']}). The object might have been modified",
                details=_kind_details(rt, name),
            )
        if self.admission is not None:
            await self.admission(
                AdmissionRequest(rt, "DELETE", namespace, name, None, old, "", opts, mutating=False)
            )
        policy = options.get("propagationPolicy")
        if policy is None and options.get("orphanDependents") is not None:
            policy = "Orphan" if options["orphanDependents"] else "Background"
        if policy is None and (rt.group, rt.kind) in _ORPHAN_BY_DEFAULT:
            policy = "Orphan"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise invalid(
                "DeleteOptions",
                "meta.k8s.io",
                "",
                [
                    field_cause(
                        "propagationPolicy",
                        f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"',
                        "FieldValueNotSupported",
                    )
                ],
            )
        new = clone(old)
        meta = new["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        if policy == "Foreground" and "foregroundDeletion" not in finalizers:
            finalizers.append("foregroundDeletion")
            finalizers = [f for f in finalizers if f != "orphan"]
        elif policy == "Orphan" and "orphan" not in finalizers:
            finalizers.append("orphan")
            finalizers = [f for f in finalizers if f != "foregroundDeletion"]
        graceful = self._grace_period(rt, old, options)
        if finalizers or graceful is not None or _namespace_finalizers(rt, new):
            if finalizers:
                meta["finalizers"] = finalizers
            if not meta.get("deletionTimestamp"):
                meta["deletionTimestamp"] = now_time()
                meta["deletionGracePeriodSeconds"] = graceful or 0
            elif graceful is not None and graceful < (meta.get("deletionGracePeriodSeconds") or 0):
                meta["deletionGracePeriodSeconds"] = graceful
            if (rt.group, rt.kind) == ("", "Namespace"):
                new.setdefault("status", {})["phase"] = "Terminating"
            if _same(old, new):
                return old
            return self._commit(rt, old, new, opts)
        if opts.dry_run:
            return old
        if (rt.group, rt.kind) == ("", "Pod"):
            # A pod is always deleted gracefully, with a period of 0 when no
            # node runs it: its last state carries the deletion time.
            last = clone(old)
            last["metadata"].update(deletionTimestamp=now_time(), deletionGracePeriodSeconds=0)
            return self._remove(rt, old, last=last)
        return self._remove(rt, old)

    def _grace_period(self, rt: ResourceType, old: Obj, options: Obj) -> int | None:
        """Pods bound to a node are deleted gracefully: the kubelet finishes the job."""
        if (rt.group, rt.kind) != ("", "Pod"):
            return None
        spec, status = old.get("spec") or {}, old.get("status") or {}
        if not spec.get("nodeName") or status.get("phase") in ("Succeeded", "Failed"):
            return None
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = spec.get("terminationGracePeriodSeconds", 30)
        if grace == 0:
            return None
        return int(grace)

    # ----------------------------------------------------------- internals
    async def _admit_and_validate(
        self,
        rt: ResourceType,
        op: str,
        old: Obj | None,
        new: Obj,
        opts: WriteOptions,
        subresource: str,
        *,
        defaulted: bool = False,
    ) -> Obj:
        name = new["metadata"].get("name", "")
        ns = new["metadata"].get("namespace", "")
        whole = subresource in ("", "scale")  # a scale writes the object, checked whole
        if whole and not defaulted:
            self._default(rt, new, opts)
        if self.admission is not None:
            new = await self.admission(
                AdmissionRequest(rt, op, ns, name, new, old, subresource, opts, mutating=True)
            )
            new = self._decode_quantities(rt, new)  # webhook patches are decoded too
            if whole:
                self._default(rt, new, WriteOptions(field_validation="Ignore"))
        causes = strategy.validate_metadata(rt, new)
        if whole and not rt.is_custom:
            causes.extend(validate_object(rt, new))
        if rt.schema is not None:
            from .schema.validation import validate

            causes.extend(
                {"reason": c.reason, "message": c.message, "field": c.field} for c in validate(new, rt.schema)
            )
        if old is not None:
            causes.extend(strategy.validate_update(rt, old, new))
        if (rt.group, rt.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition"):
            causes.extend(validate_crd(new))
        if causes:
            raise invalid(rt.kind, rt.group, name, causes)
        if old is not None and subresource == "" and (rt.group, rt.kind) == ("", "PersistentVolumeClaim"):
            self._admit_claim_resize(rt, old, new)
        if self.admission is not None:
            await self.admission(
                AdmissionRequest(rt, op, ns, name, new, old, subresource, opts, mutating=False)
            )
        return new

    def _admit_claim_resize(self, rt: ResourceType, old: Obj, new: Obj) -> None:
        """kube-apiserver's PersistentVolumeClaimResize admission plugin: a claim grows
        only if its StorageClass says ``allowVolumeExpansion: true``."""
        if strategy.storage_request(new.get("spec") or {}) <= strategy.storage_request(old.get("spec") or {}):
            return
        class_name = (new.get("spec") or {}).get("storageClassName") or ""
        found = self.store.get("storageclasses.storage.k8s.io", "", class_name) if class_name else None
        if found is None or found.get("allowVolumeExpansion") is not True:
            raise forbidden(
                rt.group_resource,
                new["metadata"].get("name", ""),
                "only dynamically provisioned pvc can be resized and the storageclass that provisions "
                "the pvc must support resize",
            )

    def _decode_quantities(self, rt: ResourceType, obj: Obj) -> Obj:
        """A built-in kind as decoding into its Go type leaves it: quantity fields
        in canonical form (``0.5`` -> ``500m``) and the fields Go always writes
        filled with their zero values (``status.replicas: 0``); custom resources
        keep what was written. A value that does not parse fails the decoding."""
        if rt.is_custom:
            return obj
        try:
            canonical = quantities.canonicalize(rt.api_version, rt.kind, obj)
        except quantities.QuantityError as e:
            raise bad_request(
                f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {e.message}'
            ) from None
        return with_zero_values(rt.api_version, rt.kind, canonical)

    def _default(self, rt: ResourceType, obj: Obj, opts: WriteOptions) -> None:
        if rt.schema is not None:
            from .schema.defaulting import apply_defaults
            from .schema.pruning import prune

            pruned_obj, unknown = prune(obj, rt.schema)
            if unknown:
                if opts.field_validation == "Strict":
                    raise bad_request(
                        f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: strict decoding error: '
                        + ", ".join(f'unknown field "{u}"' for u in unknown)
                    )
                if opts.field_validation == "Warn":
                    opts.warnings.extend(f'unknown field "{u}"' for u in unknown)
            defaulted = apply_defaults(pruned_obj, rt.schema)
            obj.clear()
            obj.update(defaulted)
        else:
            defaults.apply_builtin_defaults(rt.group, rt.kind, obj)

    def _managed_fields(
        self, rt: ResourceType, old: Obj | None, new: Obj, opts: WriteOptions, subresource: str
    ) -> list[Obj]:
        from .patching.managed_fields import record_update
        from .patching.typeinfo import type_info_for

        if old is None and not rt.is_custom:
            old = zero_object(rt.api_version, rt.kind)
        return record_update(
            old,
            new,
            manager=opts.manager(),
            operation="Update",
            type_info=type_info_for(rt),
            now=now_time(),
            subresource=subresource,
            api_version=rt.api_version,
        )

    def _check_type(self, rt: ResourceType, obj: Obj) -> None:
        if not isinstance(obj, dict):
            raise bad_request("the request body must be a JSON object")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if api_version is None or kind is None:
            obj.setdefault("apiVersion", rt.api_version)
            obj.setdefault("kind", rt.kind)
            return
        group, _, version = api_version.rpartition("/")
        if group == rt.group and kind != rt.kind and not rt.is_custom:
            # the decoder finds the kind but cannot convert it to the resource's
            internal = rt.group.split(".")[0] or "core"
            raise bad_request(
                f'{kind} in version "{version}" cannot be handled as a {rt.kind}: '
                f"converting ({version}.{kind}) to ({internal}.{rt.kind}): unknown conversion"
            )
        if kind != rt.kind or group != rt.group:
            raise bad_request(
                f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version})"
            )
        obj["apiVersion"] = rt.api_version

    def _check_namespace(self, rt: ResourceType, namespace: str, name: str) -> None:
        ns = self.store.get("namespaces", "", namespace)
        if ns is None:
            raise not_found("namespaces", namespace)
        if ns["metadata"].get("deletionTimestamp"):
            error = forbidden(
                rt.group_resource,
                name,
                f"unable to create new content in namespace {namespace} because it is being terminated",
            )
            assert error.details is not None
            error.details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise error

    def _commit(self, rt: ResourceType, old: Obj | None, new: Obj, opts: WriteOptions) -> Obj:
        if opts.dry_run:
            return new
        stored = self.store.put(rt.group_resource, new)
        for hook in self.after_write:
            hook(rt, old, stored)
        return stored

    def _remove(self, rt: ResourceType, obj: Obj, last: Obj | None = None) -> Obj:
        meta = obj["metadata"]
        final = self.store.remove(rt.group_resource, meta.get("namespace", ""), meta["name"], last)
        for hook in self.after_write:
            hook(rt, obj, None)
        return final or obj


def _same(old: Obj, new: Obj) -> bool:
    """Equal apart from managedFields timestamps (a no-op write)."""
    if old == new:
        return True
    om, nm = old.get("metadata", {}), new.get("metadata", {})
    if {k: v for k, v in old.items() if k != "metadata"} != {k: v for k, v in new.items() if k != "metadata"}:
        return False
    if {k: v for k, v in om.items() if k != "managedFields"} != {
        k: v for k, v in nm.items() if k != "managedFields"
    }:
        return False
    return _without_times(om.get("managedFields")) == _without_times(nm.get("managedFields"))


def _without_times(managed_fields: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "time"} for e in managed_fields or []]


def _namespace_finalizers(rt: ResourceType, obj: Obj) -> bool:
    return (rt.group, rt.kind) == ("", "Namespace") and bool((obj.get("spec") or {}).get("finalizers"))


_ORPHAN_BY_DEFAULT = frozenset({("batch", "Job"), ("", "ReplicationController")})
"""Kinds whose delete orphans their dependents unless told otherwise, for
compatibility with their first API versions (DefaultGarbageCollectionPolicy
of their strategies): a Job deleted without a policy leaves its pods."""


def _kind_details(rt: ResourceType, name: str) -> Obj:
    """Status details naming the kind (not the resource), as the registry's
    precondition errors do."""
    details: Obj = {"name": name, "kind": rt.kind}
    if rt.group:
        details["group"] = rt.group
    return details
