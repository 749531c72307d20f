"""Pruning of unknown fields (apiextensions ``schema/pruning``).

Fields the schema does not specify are dropped on the way in, unless a node
says ``x-kubernetes-preserve-unknown-fields: true`` (which holds until a
nested node specifies ``properties`` or ``additionalProperties`` again).
``apiVersion``, ``kind`` and ``metadata`` of the resource root and of embedded
resources are left to the ObjectMeta handling: at the root the server owns
them, inside embedded resources the ObjectMeta type prunes ``metadata``.
The dropped paths feed ``fieldValidation=Strict|Warn``
(``unknown field "spec.foo"``).
"""

from __future__ import annotations

import copy
from typing import Any

from . import nodes
from .nodes import Schema
from .objectmeta import coerce_embedded_metadata

__all__ = ["prune"]

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


class _Pruner:
    def __init__(self) -> None:
        self.unknown: list[str] = []

    def prune(self, x: Any, s: Schema | None, path: str, embedded: bool = False) -> None:
        if s is not None and nodes.preserves_unknown(s):
            self._skip_prune(x, s, path, embedded)
            return
        if isinstance(x, dict):
            if s is None:
                self.unknown += [_join(path, k) for k in x]
                x.clear()
                return
            self._fields(x, s, path, embedded, drop=True)
        elif isinstance(x, list):
            item_schema = nodes.items(s)
            for i, v in enumerate(x):
                self.prune(v, item_schema, f"{path}[{i}]")

    def _skip_prune(self, x: Any, s: Schema, path: str, embedded: bool) -> None:
        if isinstance(x, dict):
            self._fields(x, s, path, embedded, drop=False)
        elif isinstance(x, list):
            item_schema = nodes.items(s)
            if item_schema is None:
                return
            for i, v in enumerate(x):
                self._skip_prune(v, item_schema, f"{path}[{i}]", False)

    def _fields(self, x: dict[str, Any], s: Schema, path: str, embedded: bool, *, drop: bool) -> None:
        """Prunes each field by its property (or additionalProperties) schema;
        a field neither names is unknown, and dropped unless the object
        preserves unknown fields (``drop`` False)."""
        embedded = embedded or nodes.embedded(s)
        props = nodes.properties(s)
        specified, extra = nodes.additional_properties(s)
        for k in list(x):
            if embedded and k in _META_FIELDS:
                continue
            if k in props:
                self.prune(x[k], props[k], _join(path, k))
            elif specified:
                self.prune(x[k], extra, _join(path, k))
            elif drop:
                self.unknown.append(_join(path, k))
                del x[k]


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _coerce_embedded(x: Any, s: Schema | None, path: str) -> list[str]:
    """``objectmeta.Coerce`` below the root: ObjectMeta-prune embedded metadata."""
    if s is None:
        return []
    unknown: list[str] = []
    if isinstance(x, dict):
        if nodes.embedded(s) and isinstance(x.get("metadata"), dict):
            unknown += coerce_embedded_metadata(x["metadata"], path)
        props = nodes.properties(s)
        specified, extra = nodes.additional_properties(s)
        for k, v in x.items():
            if k in props:
                unknown += _coerce_embedded(v, props[k], _join(path, k))
            elif specified:
                unknown += _coerce_embedded(v, extra, f"{path}[{k}]")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            unknown += _coerce_embedded(v, nodes.items(s), f"{path}[{i}]")
    return unknown


def prune_in_place(x: Any, schema: Schema | None, *, resource_root: bool) -> list[str]:
    """Prune ``x`` in place (``pruning.PruneWithOptions``); the sorted dropped paths.

    With ``resource_root`` the top node is treated as an embedded resource, so
    its ``apiVersion``, ``kind`` and ``metadata`` stay.
    """
    pruner = _Pruner()
    pruner.prune(x, schema, "", embedded=resource_root)
    return sorted(pruner.unknown)


def prune(obj: dict[str, Any], schema: Schema) -> tuple[dict[str, Any], list[str]]:
    """A pruned deep copy of ``obj`` and the paths of what was dropped.

    The root is treated as a resource: its ``apiVersion``, ``kind`` and
    ``metadata`` are never pruned by the schema. Unknown keys in the metadata
    of embedded resources are dropped and reported too.
    """
    out = copy.deepcopy(obj)
    unknown = prune_in_place(out, schema, resource_root=True)
    return out, unknown + sorted(_coerce_embedded(out, schema, ""))
