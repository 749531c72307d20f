"""Small helpers on decoded JSON values shared by the patch engines."""

from __future__ import annotations

from typing import Any

from ..schema.goformat import go_scalar_v


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: numbers compare by value (1 == 1.0) but
    ``true`` is not ``1``, and an object never equals a list."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return (
            isinstance(b, list)
            and len(a) == len(b)
            and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(b, dict | list):
        return False
    return bool(a == b)


def clone(value: Any) -> Any:
    """A deep copy of a JSON value."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def go_v(value: Any) -> str:
    """``fmt.Sprintf("%v", value)`` of a decoded JSON value, as Go prints the
    maps and slices of an ``interface{}`` in error messages."""
    if value is None:
        return "<nil>"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_v(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_v(v) for v in value) + "]"
    return go_scalar_v(value)


def go_type(value: Any) -> str:
    """``reflect.TypeOf(value)`` of a decoded JSON value, as printed by ``%s``."""
    if value is None:
        return "<nil>"
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    return "int64" if isinstance(value, int) else "float64"
