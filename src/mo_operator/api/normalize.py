"""What the API server does to an object before anyone validates or defaults it:
drop non-nullable ``null`` fields, and refuse absurd nesting. Shared by validation
and defaulting, which must both see the object the API server would see."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .schema import resource_schema

__all__ = ["MAX_DEPTH", "kind_schema", "prune_nulls", "too_deep_at"]

MAX_DEPTH = 100
"""Deepest nesting we look into; real objects stay far below it (a pod spec is ~15)."""

Schema = dict[str, Any]


@functools.cache
def kind_schema(model: type[BaseModel]) -> Schema:
    """The ``openAPIV3Schema`` of a kind's model, computed once."""
    return resource_schema(model)


def too_deep_at(obj: Any) -> str | None:
    """The path of the first value nested deeper than :data:`MAX_DEPTH`, found without recursion."""
    stack: list[tuple[Any, str, int]] = [(obj, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            return path
        if isinstance(value, Mapping):
            stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value))
    return None


def field_schema(schema: Schema | None, name: Any) -> Schema | None:
    """The schema of a field of an object node, from its properties or additionalProperties."""
    if schema is None:
        return None
    props = schema.get("properties", {})
    if name in props:
        sub: Schema = props[name]
        return sub
    extra = schema.get("additionalProperties")
    return extra if isinstance(extra, dict) else None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text(s: str) -> str:
    """A string as Go's JSON decoder reads it: a lone UTF-16 surrogate becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", s) if _SURROGATE.search(s) else s


def prune_nulls(obj: Any, schema: Schema | None) -> Any:
    """A copy of ``obj`` as the API server decodes it: without the ``null`` fields it
    drops, and with strings it can represent.

    A ``null`` where the schema is not nullable counts as absent (the CRD
    "Defaulting and Nullable" rules), so ``version: null`` reads as "no version".
    Free-form parts (no schema below them) keep their nulls.
    """
    if isinstance(obj, Mapping):
        out = {}
        for k, v in obj.items():
            sub = field_schema(schema, k)
            if v is None and sub is not None:
                continue
            out[_text(k) if isinstance(k, str) else k] = prune_nulls(v, sub)
        return out
    if isinstance(obj, list):
        items = schema.get("items") if schema is not None else None
        return [prune_nulls(v, items) for v in obj]
    if isinstance(obj, str):
        return _text(obj)
    return obj
