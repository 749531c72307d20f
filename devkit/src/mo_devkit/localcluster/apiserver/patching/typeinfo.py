"""How the lists and maps of one kind of object merge.

A :class:`TypeInfo` is a tree of :class:`TypeNode` mirroring the object:
each node holds the :class:`Rule` of the value at that path, the nodes of
its named fields, of its list items and of its free-form map entries. The
engines walk it alongside the object. Paths in the query methods are tuples
of field names, with ``"[]"`` for an item of a list; a name under a map of
free-form keys (labels) resolves to that map's entry type.

Built-in kinds take their rules from :mod:`.builtin_table`; custom resources
from their CRD's OpenAPI v3 schema, the way kube-apiserver derives the
structured-merge-diff schema (sigs.k8s.io/structured-merge-diff, kube-openapi
``schemaconv``): unannotated lists are atomic, maps are granular unless
``x-kubernetes-map-type: atomic``, and ``metadata`` is always ObjectMeta.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Protocol

from .builtin_table import KINDS, OBJECT_META, mount
from .typerules import (
    ATOMIC,
    ELEMENTS,
    UNTYPED,
    ListType,
    PatchMeta,
    Rule,
)

ITEM = "[]"


class TypeNode:
    """The merge rules of one value and the nodes of its children."""

    __slots__ = ("elements", "fields", "item", "rule")

    def __init__(self, rule: Rule | None = None) -> None:
        self.rule = rule or Rule()
        self.fields: dict[str, TypeNode] = {}
        self.item: TypeNode | None = None
        self.elements: TypeNode | None = None

    def child(self, key: str) -> tuple[TypeNode, bool]:
        """The node of map key ``key`` and whether it is a declared field
        (as opposed to an entry of a free-form map, which server-side apply
        tracks as a member of its own)."""
        node = self.fields.get(key)
        if node is not None:
            return node, True
        if self.elements is not None:
            return self.elements, False
        return EMPTY_NODE, True

    def list_item(self) -> TypeNode:
        return self.item or EMPTY_NODE

    @property
    def list_type(self) -> ListType:
        return self.rule.list_type

    @property
    def atomic_map(self) -> bool:
        return self.rule.atomic


EMPTY_NODE = TypeNode()
UNTYPED_NODE = TypeNode(UNTYPED)
UNTYPED_NODE.elements = UNTYPED_NODE
UNTYPED_NODE.item = UNTYPED_NODE


def _attach(node: TypeNode, rule: Rule) -> None:
    node.rule = rule
    if rule.untyped:
        node.elements = UNTYPED_NODE
        node.item = UNTYPED_NODE
    elif rule.elements and node.elements is None:
        node.elements = TypeNode()


def split_path(path: str | Sequence[str]) -> tuple[str, ...]:
    """``"spec.containers[].ports"`` -> ``("spec", "containers", "[]", "ports")``."""
    if not isinstance(path, str):
        return tuple(path)
    parts: list[str] = []
    for part in path.split(".") if path else ():
        name = part.replace(ITEM, "")
        if name:
            parts.append(name)
        parts.extend([ITEM] * part.count(ITEM))
    return tuple(parts)


class TypeInfo:
    """Merge rules for every path of one kind of object."""

    def __init__(self, root: TypeNode, *, status_subresource: bool = True) -> None:
        self.root = root
        # Whether status is written through its own subresource, so that main
        # resource writes neither set nor own it.
        self.status_subresource = status_subresource

    @classmethod
    def from_rules(
        cls, rules: Mapping[str, Rule] | Mapping[tuple[str, ...], Rule], *, status_subresource: bool = True
    ) -> TypeInfo:
        root = TypeNode()
        for path, rule in rules.items():
            _attach(_make_path(root, split_path(path)), rule)
        return cls(root, status_subresource=status_subresource)

    def node(self, path: str | Sequence[str]) -> TypeNode:
        node = self.root
        for part in split_path(path):
            node = node.list_item() if part == ITEM else node.child(part)[0]
        return node

    def list_type(self, path: str | Sequence[str]) -> ListType:
        return self.node(path).list_type

    def key_defaults(self, path: str | Sequence[str]) -> dict[str, Any]:
        return dict(self.node(path).rule.key_defaults)

    def is_atomic_map(self, path: str | Sequence[str]) -> bool:
        return self.node(path).atomic_map

    def is_element_map(self, path: str | Sequence[str]) -> bool:
        """Whether the map at ``path`` holds free-form keys (labels) rather
        than the fields of a struct."""
        return self.node(path).elements is not None

    def patch_meta(self, path: str | Sequence[str]) -> PatchMeta:
        return self.node(path).rule.patch


def _make_path(root: TypeNode, parts: tuple[str, ...]) -> TypeNode:
    node = root
    for part in parts:
        if part == ITEM:
            if node.item is None:
                node.item = TypeNode()
            node = node.item
        else:
            node = node.fields.setdefault(part, TypeNode())
    return node


@cache
def builtin_type_info(group: str, kind: str) -> TypeInfo:
    """The rules of a built-in kind (ObjectMeta only for kinds not in the table)."""
    rules = {**mount("metadata", OBJECT_META), **KINDS.get((group, kind), {})}
    return TypeInfo.from_rules(rules)


def schema_type_info(schema: Mapping[str, Any] | None, *, status_subresource: bool = True) -> TypeInfo:
    """The rules of a custom resource from its OpenAPI v3 schema."""
    root = TypeNode()
    if schema:
        _from_schema(schema, root)
    meta = root.fields.setdefault("metadata", TypeNode())
    for path, rule in OBJECT_META.items():
        _attach(_make_path(meta, split_path(path)), rule)
    return TypeInfo(root, status_subresource=status_subresource)


def _from_schema(schema: Mapping[str, Any], node: TypeNode) -> None:
    list_kind = schema.get("x-kubernetes-list-type")
    items = schema.get("items")
    rule = Rule()
    if list_kind == "set":
        rule = Rule(list_type=ListType("set"))
    elif list_kind == "map":
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
        props = items.get("properties", {}) if isinstance(items, Mapping) else {}
        defaults = tuple(
            (k, props[k]["default"])
            for k in keys
            if isinstance(props.get(k), Mapping) and "default" in props[k]
        )
        rule = Rule(list_type=ListType("map", keys), key_defaults=defaults)
    elif schema.get("x-kubernetes-map-type") == "atomic":
        rule = ATOMIC
    extra = schema.get("additionalProperties")
    if rule == Rule() and (isinstance(extra, Mapping) or extra is True):
        rule = ELEMENTS
    _attach(node, rule)
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, Mapping):
            _from_schema(sub, node.fields.setdefault(name, TypeNode()))
    if isinstance(items, Mapping):
        node.item = TypeNode()
        _from_schema(items, node.item)
    if isinstance(extra, Mapping):
        node.elements = node.elements or TypeNode()
        _from_schema(extra, node.elements)
    elif extra is True or schema.get("x-kubernetes-preserve-unknown-fields"):
        node.elements = UNTYPED_NODE


class ResourceLike(Protocol):
    """What :func:`type_info_for` needs of the server's ResourceType."""

    @property
    def group(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def schema(self) -> dict[str, Any] | None: ...
    @property
    def status_subresource(self) -> bool: ...
    @property
    def is_custom(self) -> bool: ...


_SCHEMA_CACHE: dict[int, tuple[Mapping[str, Any], bool, TypeInfo]] = {}
_SCHEMA_CACHE_SIZE = 256


def type_info_for(rt: ResourceLike) -> TypeInfo:
    """The rules of a served resource: its CRD schema for custom resources,
    the built-in table otherwise. Schema-derived rules are cached per schema
    object, which the server keeps for as long as the CRD is unchanged."""
    if not rt.is_custom:
        return builtin_type_info(rt.group, rt.kind)
    schema = rt.schema or {}
    hit = _SCHEMA_CACHE.get(id(schema))
    if hit is not None and hit[0] is schema and hit[1] == rt.status_subresource:
        return hit[2]
    info = schema_type_info(schema, status_subresource=rt.status_subresource)
    if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_SIZE:
        _SCHEMA_CACHE.clear()
    _SCHEMA_CACHE[id(schema)] = (schema, rt.status_subresource, info)
    return info
