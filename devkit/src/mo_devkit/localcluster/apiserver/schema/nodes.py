"""Reading one node of an OpenAPI v3 schema as stored in a CRD (a JSON dict).

The stored schema is whatever the user sent, so every accessor tolerates
wrong shapes (a list where a dict belongs) and answers as if the keyword were
absent; rejecting such schemas is the job of :mod:`.structural`.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def properties(s: Schema | None) -> dict[str, Schema]:
    props = (s or {}).get("properties")
    if not isinstance(props, dict):
        return {}
    return {k: v for k, v in props.items() if isinstance(v, dict)}


def items(s: Schema | None) -> Schema | None:
    it = (s or {}).get("items")
    return it if isinstance(it, dict) else None


def additional_properties(s: Schema | None) -> tuple[bool, Schema | None]:
    """(specified, schema). A boolean is specified without a schema: Kubernetes
    then keeps the keys but treats their values as unspecified."""
    if s is None or "additionalProperties" not in s:
        return False, None
    ap = s["additionalProperties"]
    return True, (ap if isinstance(ap, dict) else None)


def additional_properties_allowed(s: Schema) -> bool:
    """``SchemaOrBool.Allows``: only a literal ``false`` forbids extra keys."""
    return s.get("additionalProperties", True) is not False


def flag(s: Schema | None, name: str) -> bool:
    return bool(s) and (s or {}).get(name) is True


def preserves_unknown(s: Schema | None) -> bool:
    return flag(s, "x-kubernetes-preserve-unknown-fields")


def embedded(s: Schema | None) -> bool:
    return flag(s, "x-kubernetes-embedded-resource")


def int_or_string(s: Schema | None) -> bool:
    return flag(s, "x-kubernetes-int-or-string")


def nullable(s: Schema | None) -> bool:
    return flag(s, "nullable")


def has_default(s: Schema | None) -> bool:
    """Whether a default applies; ``default: null`` counts as none, as in Go."""
    return s is not None and s.get("default") is not None


def type_of(s: Schema | None) -> str:
    t = (s or {}).get("type")
    return t if isinstance(t, str) else ""


def types(s: Schema) -> list[str]:
    """The type list kube-openapi validates against: int-or-string becomes
    ``["integer", "string"]``."""
    if int_or_string(s):
        return ["integer", "string"]
    t = type_of(s)
    return [t] if t else []


def subschemas(s: Schema, keyword: str) -> list[Schema]:
    value = s.get(keyword)
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, dict)]


def list_type(s: Schema | None) -> str | None:
    lt = (s or {}).get("x-kubernetes-list-type")
    return lt if isinstance(lt, str) else None


def list_map_keys(s: Schema | None) -> list[str]:
    keys = (s or {}).get("x-kubernetes-list-map-keys")
    if not isinstance(keys, list):
        return []
    return [k for k in keys if isinstance(k, str)]


def field_schema(s: Schema | None, name: str) -> Schema | None:
    """The schema of object field ``name``: its property, else additionalProperties."""
    if s is None:
        return None
    props = properties(s)
    if name in props:
        return props[name]
    return additional_properties(s)[1]
