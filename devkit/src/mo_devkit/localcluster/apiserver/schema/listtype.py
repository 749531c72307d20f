"""Uniqueness of ``x-kubernetes-list-type: set`` and ``map`` lists
(apiextensions ``schema/listtype.ValidateListSetsAndMaps``).

Server-side apply merges such lists by element (sets) or by key (maps), so a
duplicate would make the merge ambiguous; the server refuses it up front.
"""

from __future__ import annotations

from typing import Any

from . import fielderrors as fe
from . import nodes
from .fielderrors import Cause
from .goformat import go_json, go_kind
from .nodes import Schema

_UNSPECIFIED = object()


def validate_list_sets_and_maps(obj: Any, s: Schema | None, path: str = "") -> list[Cause]:
    """Duplicate-value causes for every set/map list under ``obj``."""
    if s is None or not isinstance(obj, dict):
        return []
    causes: list[Cause] = []
    extra = nodes.additional_properties(s)[1]
    if extra is not None:
        for k, v in obj.items():
            causes += _validate(v, extra, fe.key(path, k))
    props = nodes.properties(s)
    for k, v in obj.items():
        if k in props:
            causes += _validate(v, props[k], fe.child(path, k))
    return causes


def _validate(value: Any, s: Schema, path: str) -> list[Cause]:
    if isinstance(value, list):
        return _validate_array(value, s, path)
    if isinstance(value, dict):
        return validate_list_sets_and_maps(value, s, path)
    return []


def _validate_array(items: list[Any], s: Schema, path: str) -> list[Cause]:
    causes: list[Cause] = []
    list_type = nodes.list_type(s)
    if list_type == "set":
        causes += [fe.duplicate(fe.index(path, i), items[i]) for i in _first_repeats(items)]
    elif list_type == "map":
        causes += _validate_map_list(items, nodes.list_map_keys(s), path)
    item_schema = nodes.items(s)
    if item_schema is not None:
        for i, item in enumerate(items):
            causes += _validate(item, item_schema, fe.index(path, i))
    return causes


def _identity(value: Any) -> Any:
    """A hashable identity with Go's equality: compounds by their JSON text,
    scalars by Go type and value (so 1 and 1.0 differ, as int64 and float64)."""
    if value is _UNSPECIFIED:
        return ("unspecified",)
    kind = go_kind(value)
    if kind in ("map", "slice"):
        return ("json", go_json(value))
    if kind == "float64":
        return (kind, float(value))
    return (kind, value)


def _first_repeats(values: list[Any]) -> list[int]:
    """Indices where a value is seen for the second time (later repeats are not reported)."""
    seen: dict[Any, int] = {}
    repeats: list[int] = []
    for i, v in enumerate(values):
        ident = _identity(v)
        seen[ident] = seen.get(ident, 0) + 1
        if seen[ident] == 2:
            repeats.append(i)
    return repeats


def _validate_map_list(items: list[Any], keys: list[str], path: str) -> list[Cause]:
    for i, x in enumerate(items):
        if x is not None and not isinstance(x, dict):
            return [fe.invalid(fe.index(path, i), x, "must be an object for an array of list-type map")]
    if len(items) <= 1:
        return []
    if len(keys) == 1:
        key_field = keys[0]
        key_values = [x[key_field] if isinstance(x, dict) and key_field in x else _UNSPECIFIED for x in items]
        causes = []
        for i in _first_repeats(key_values):
            shown = {} if key_values[i] is _UNSPECIFIED else {key_field: key_values[i]}
            causes.append(fe.duplicate(fe.index(path, i), shown))
        return causes
    composite = [{k: x[k] for k in keys if k in x} if isinstance(x, dict) else {} for x in items]
    return [fe.duplicate(fe.index(path, i), composite[i]) for i in _first_repeats(composite)]
