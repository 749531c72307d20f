"""A change made on a set a MatrixOneCluster owns (``kubectl scale cnset mo-tp``,
``kubectl edit logset mo``) is admitted, and the cluster sets it back (its Normal
``ChildReverted`` Event); the writer learns it at once from an admission warning
naming the cluster's field to change instead, which kubectl prints::

    Warning: CNSet mo-tp belongs to MatrixOneCluster mo, which sets spec.replicas back:
    change spec.cnGroups[name=tp].replicas of MatrixOneCluster mo instead

Only a change the cluster sets back is warned about: a write by the operator itself
(the request's ``options.fieldManager`` is the operator's, as kube-apiserver passes
the writer's options to admission) is not, nor a change of a field the cluster's
apply does not own (its field manager's entry in the set's ``managedFields``), which
the set keeps.

A scale through ``/scale`` is reviewed as an ``autoscaling/v1`` Scale that names the
set but not its owner: the set is read from the API server (one GET). The cluster is
read for the field's name (``spec.tp`` of a cluster using the deprecated field). A
read that fails admits without the warning: the revert's Event still tells.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.api.ownership import CHILD_KINDS, cluster_field
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import meta_of
from mo_operator.kube.webhook.server import AdmissionRequest
from mo_operator.matrixone import labels

__all__ = ["ObjectLookup", "OwnedSets", "api_object_lookup", "changed_fields", "owned_change", "warning"]

log = logging.getLogger(__name__)

ObjectLookup = Callable[[str, str, str], Awaitable[Mapping[str, Any] | None]]
"""One of our objects by kind, namespace and name; None when there is none."""

CLUSTER_KIND = "MatrixOneCluster"
READ_SECONDS = 2.0
"""Longest a read may take: the API server waits on the answer (10 s at most by
default), and a slow read only costs the warning."""


def api_object_lookup(client: ApiClient) -> ObjectLookup:
    """Objects read from the API server (a webhook has no cache)."""

    async def lookup(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        info = KINDS[kind]
        resource = Resource(GROUP, VERSION, kind, info.plural, info.namespaced)
        return await client.get_or_none(resource, name, namespace)

    return lookup


def _spec(obj: Any) -> Mapping[str, Any]:
    spec = obj.get("spec") if isinstance(obj, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def changed_fields(old: Any, new: Any) -> list[str]:
    """The top-level spec fields that differ between two objects (set, changed or removed)."""
    a, b = _spec(old), _spec(new)
    return sorted(str(k) for k in set(a) | set(b) if a.get(k) != b.get(k))


def _applied_spec_fields(obj: Mapping[str, Any], manager: str) -> set[str] | None:
    """The top-level spec fields ``manager`` owns in ``obj``'s managedFields; None when
    it owns nothing there (a set no cluster applied yet)."""
    meta = obj.get("metadata")
    entries = meta.get("managedFields") if isinstance(meta, Mapping) else None
    owned: set[str] | None = None
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, Mapping) or entry.get("manager") != manager or entry.get("subresource"):
            continue
        fields = entry.get("fieldsV1")
        spec = fields.get("f:spec") if isinstance(fields, Mapping) else None
        owned = set() if owned is None else owned
        if isinstance(spec, Mapping):
            owned.update(k[2:] for k in spec if isinstance(k, str) and k.startswith("f:"))
    return owned


def owned_change(
    stored: Mapping[str, Any], changed: Sequence[str], manager: str
) -> tuple[str, list[str]] | None:
    """The owning cluster of the set ``stored`` (as it was before the change) and the
    fields of ``changed`` its apply sets back; None when no cluster owns the set or
    the change touches none of the cluster's fields."""
    ref = meta_of(stored).controller
    if ref is None or ref.get("kind") != CLUSTER_KIND:
        return None
    api_version = ref.get("apiVersion")
    cluster = ref.get("name")
    if not isinstance(api_version, str) or api_version.split("/")[0] != GROUP:
        return None
    if not isinstance(cluster, str) or not cluster:
        return None
    applied = _applied_spec_fields(stored, manager)
    fields = [f for f in changed if applied is None or f in applied]
    return (cluster, fields) if fields else None


def warning(
    kind: str,
    name: str,
    cluster: str,
    cluster_spec: Mapping[str, Any],
    fields: Sequence[str],
    *,
    paused: bool = False,
) -> str:
    """The admission warning: what is set back (once the cluster is resumed, when it is
    paused: it applies its sets again then), and what to change instead."""
    at = cluster_field(kind, name, cluster, cluster_spec)
    back = ", ".join(f"spec.{f}" for f in fields)
    instead = ", ".join(f"{at}.{f}" for f in fields)
    when = " once it is resumed" if paused else ""
    return (
        f"{kind} {name} belongs to MatrixOneCluster {cluster}, which sets {back} back{when}: "
        f"change {instead} of MatrixOneCluster {cluster} instead"
    )


def _paused(obj: Mapping[str, Any] | None) -> bool:
    return obj is not None and meta_of(obj).annotations.get(labels.SKIP_SYNC, "") in ("true", "True", "1")


def _replicas(scale: Any) -> Any:
    return _spec(scale).get("replicas")


class OwnedSets:
    """The warnings on a direct change of a set a MatrixOneCluster owns.

    ``lookup`` reads the set a Scale names and the owning cluster; without it a
    scale gets no warning and the field is named as in ``spec.cnGroups``.
    ``operator_manager``: the operator's field manager, whose writes are its own."""

    def __init__(self, lookup: ObjectLookup | None, operator_manager: str) -> None:
        self.lookup = lookup
        self.operator_manager = operator_manager

    async def _read(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        if self.lookup is None:
            return None
        try:
            async with asyncio.timeout(READ_SECONDS):
                return await self.lookup(kind, namespace, name)
        except Exception as e:  # admitted without the warning: the revert's Event still tells
            log.warning("cannot read %s %s/%s: %s", kind, namespace, name, e)
            return None

    async def warnings(self, kind: str, req: AdmissionRequest) -> list[str]:
        if kind not in CHILD_KINDS or req.operation != "UPDATE":
            return []
        if req.field_manager == self.operator_manager:
            return []
        if req.subresource == "scale":
            if _replicas(req.object) == _replicas(req.old_object):
                return []
            stored = await self._read(kind, req.namespace, req.name)
            changed = ["replicas"]
        elif not req.subresource:
            stored, changed = req.old_object, changed_fields(req.old_object, req.object)
        else:
            return []
        found = owned_change(stored, changed, self.operator_manager) if stored is not None else None
        if found is None:
            return []
        cluster, fields = found
        owner = await self._read(CLUSTER_KIND, req.namespace, cluster)
        return [warning(kind, req.name, cluster, _spec(owner), fields, paused=_paused(owner))]
