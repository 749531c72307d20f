"""Read-only views over raw API objects, and the one-line accessors built on them.

Objects stay plain dicts (the cache holds them frozen, the client returns
them as decoded); what was repeated at every use was the walk into them,
``(obj.get("metadata") or {}).get("labels") or {}``, each time with its own
idea of what a missing field means. ``Body`` and ``Meta`` (kopf's
``structs/bodies.py`` is the model) walk once and always answer with a
value of the field's type: an empty string, mapping or tuple for a field
that is absent or null. They never copy and never write.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

_EMPTY: Mapping[str, Any] = MappingProxyType({})


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def _items(value: object) -> tuple[Mapping[str, Any], ...]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return ()
    return tuple(v for v in value if isinstance(v, Mapping))


class Meta:
    """``metadata`` of an object."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def name(self) -> str:
        return str(self.raw.get("name") or "")

    @property
    def namespace(self) -> str:
        return str(self.raw.get("namespace") or "")

    @property
    def uid(self) -> str:
        return str(self.raw.get("uid") or "")

    @property
    def resource_version(self) -> str:
        return str(self.raw.get("resourceVersion") or "")

    @property
    def generation(self) -> int:
        return int(self.raw.get("generation") or 0)

    @property
    def labels(self) -> Mapping[str, str]:
        return _mapping(self.raw.get("labels"))

    @property
    def annotations(self) -> Mapping[str, str]:
        return _mapping(self.raw.get("annotations"))

    @property
    def finalizers(self) -> tuple[str, ...]:
        return tuple(self.raw.get("finalizers") or ())

    @property
    def owner_references(self) -> tuple[Mapping[str, Any], ...]:
        return _items(self.raw.get("ownerReferences"))

    @property
    def controller(self) -> Mapping[str, Any] | None:
        """The owner reference marked ``controller``, if any."""
        return next((ref for ref in self.owner_references if ref.get("controller")), None)

    @property
    def deleting(self) -> bool:
        return bool(self.raw.get("deletionTimestamp"))

    @property
    def creation_timestamp(self) -> str:
        return str(self.raw.get("creationTimestamp") or "")


class Body:
    """A whole object: ``meta``, ``spec``, ``status`` and its conditions."""

    __slots__ = ("raw",)

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.raw = raw

    @property
    def api_version(self) -> str:
        return str(self.raw.get("apiVersion") or "")

    @property
    def kind(self) -> str:
        return str(self.raw.get("kind") or "")

    @property
    def meta(self) -> Meta:
        return Meta(_mapping(self.raw.get("metadata")))

    @property
    def spec(self) -> Mapping[str, Any]:
        return _mapping(self.raw.get("spec"))

    @property
    def status(self) -> Mapping[str, Any]:
        return _mapping(self.raw.get("status"))

    @property
    def conditions(self) -> tuple[Mapping[str, Any], ...]:
        return _items(self.status.get("conditions"))

    def condition(self, ctype: str) -> Mapping[str, Any] | None:
        """``status.conditions`` entry of type ``ctype``, if there is one."""
        return next((c for c in self.conditions if c.get("type") == ctype), None)


def view(obj: Mapping[str, Any]) -> Body:
    return Body(obj)


def meta_of(obj: Mapping[str, Any]) -> Meta:
    return Meta(_mapping(obj.get("metadata")))


def name_of(obj: Mapping[str, Any]) -> str:
    return meta_of(obj).name


def namespace_of(obj: Mapping[str, Any]) -> str:
    return meta_of(obj).namespace


def uid_of(obj: Mapping[str, Any]) -> str:
    return meta_of(obj).uid


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta_of(obj).labels


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta_of(obj).annotations


def is_deleting(obj: Mapping[str, Any]) -> bool:
    return meta_of(obj).deleting


def key_of(obj: Mapping[str, Any]) -> str:
    """``namespace/name`` (``name`` for a cluster-scoped object), as the cache keys it."""
    meta = meta_of(obj)
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name


def spec_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(obj.get("spec"))


def status_of(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(obj.get("status"))


def mapping_at(obj: Mapping[str, Any] | None, *path: str) -> Mapping[str, Any]:
    """The mapping ``path`` leads to below ``obj`` (``spec.resources.requests``); empty
    where ``obj`` or any step is absent, null or not a mapping, so a field read at the
    end answers as for an object that never had the field."""
    found: Mapping[str, Any] = _mapping(obj)
    for key in path:
        found = _mapping(found.get(key))
    return found


def condition_of(obj: Mapping[str, Any] | None, ctype: str) -> Mapping[str, Any] | None:
    """``status.conditions`` entry of type ``ctype`` of ``obj``; None also for no object."""
    return Body(_mapping(obj)).condition(ctype)
