"""Structural defaulting of custom resources (apiextensions ``schema/defaulting``).

A default fills a field that is absent from an object that is present; it
never creates the enclosing object. Defaults reach into list items and
``additionalProperties`` values. A ``null`` where the schema is not
``nullable`` counts as absent: it is replaced by the default when there is
one and dropped when there is none (``PruneNonNullableNullsWithoutDefaults``
then ``Default``), as the CRD "Defaulting and Nullable" documentation says.
"""

from __future__ import annotations

import copy
from typing import Any

from . import nodes
from .nodes import Schema

__all__ = ["apply_defaults"]


def apply_defaults(obj: dict[str, Any], schema: Schema) -> dict[str, Any]:
    """A defaulted deep copy of ``obj``; ``obj`` itself is left untouched."""
    out = copy.deepcopy(obj)
    _prune_non_nullable_nulls(out, schema)
    _default(out, schema)
    return out


def _is_non_nullable_null(value: Any, s: Schema | None) -> bool:
    return value is None and s is not None and not nodes.nullable(s)


def _prune_non_nullable_nulls(x: Any, s: Schema | None) -> None:
    if isinstance(x, dict):
        for k in list(x):
            sub = nodes.field_schema(s, k)
            if _is_non_nullable_null(x[k], sub) and not nodes.has_default(sub):
                del x[k]
            else:
                _prune_non_nullable_nulls(x[k], sub)
    elif isinstance(x, list):
        sub = nodes.items(s)
        for item in x:
            _prune_non_nullable_nulls(item, sub)


def _default(x: Any, s: Schema | None) -> None:
    if s is None:
        return
    if isinstance(x, dict):
        props = nodes.properties(s)
        for k, prop in props.items():
            if not nodes.has_default(prop):
                continue
            if k not in x or _is_non_nullable_null(x[k], prop):
                x[k] = copy.deepcopy(prop["default"])
        specified, extra = nodes.additional_properties(s)
        for k in x:
            if k in props:
                _default(x[k], props[k])
            elif specified:
                if extra is not None and _is_non_nullable_null(x[k], extra):
                    x[k] = copy.deepcopy(extra.get("default"))
                _default(x[k], extra)
    elif isinstance(x, list):
        item_schema = nodes.items(s)
        for i, item in enumerate(x):
            if item_schema is not None and _is_non_nullable_null(item, item_schema):
                x[i] = copy.deepcopy(item_schema.get("default"))
            _default(x[i], item_schema)
