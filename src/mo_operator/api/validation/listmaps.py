"""Keyed lists (``x-kubernetes-list-type: map``): no two items with the same keys,
as the API server checks them (``validate_list_sets_and_maps``)."""

from __future__ import annotations

import json
from typing import Any

from ..normalize import field_schema
from .errors import FieldError, index

__all__ = ["list_map_errors"]


def list_map_errors(obj: Any, schema: dict[str, Any] | None, path: str = "") -> list[FieldError]:
    """Every repeated key of every keyed list in ``obj`` (a schema-valid object)."""
    if schema is None:
        return []
    errs: list[FieldError] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            errs += list_map_errors(v, field_schema(schema, k), f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        keys = (
            schema.get("x-kubernetes-list-map-keys")
            if schema.get("x-kubernetes-list-type") == "map"
            else None
        )
        seen: set[str] = set()
        for i, item in enumerate(obj):
            if keys and isinstance(item, dict):
                identity = json.dumps({k: item.get(k) for k in keys}, sort_keys=True, separators=(",", ":"))
                if identity in seen:
                    errs.append(FieldError(index(path, i), f"Duplicate value: {identity}"))
                seen.add(identity)
            errs += list_map_errors(item, schema.get("items"), index(path, i))
    return errs
