"""Whether a CRD schema is structural (apiextensions ``schema.ValidateStructural``).

A structural schema declares the shape of every value outside of the logical
junctors (``allOf``, ``anyOf``, ``oneOf``, ``not``): each node has a type
(unless it is int-or-string or preserves unknown fields), junctors only add
value checks, and root ``metadata`` may restrict nothing but ``name`` and
``generateName``. Pruning and defaulting depend on that shape being known.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Any

from . import fielderrors as fe
from . import nodes
from .fielderrors import Cause
from .goregex import PatternError, compile_go
from .nodes import Schema

_INT_OR_STRING_ANY_OF = [{"type": "integer"}, {"type": "string"}]
# Keywords that are structure (kept by ``Structural``); in a junctor they are forbidden.
_NESTED_FORBIDDEN: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("type", lambda v: bool(v), "must be empty to be structural"),
    (
        "additionalProperties",
        lambda v: v is True or isinstance(v, dict),
        "must be undefined to be structural",
    ),
    ("default", lambda v: v is not None, "must be undefined to be structural"),
    ("title", lambda v: bool(v), "must be empty to be structural"),
    ("description", lambda v: bool(v), "must be empty to be structural"),
    ("nullable", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-preserve-unknown-fields", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-embedded-resource", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-int-or-string", lambda v: v is True, "must be false to be structural"),
    ("x-kubernetes-list-map-keys", lambda v: bool(v), "must be empty to be structural"),
    ("x-kubernetes-list-type", lambda v: v is not None, "must be undefined to be structural"),
    ("x-kubernetes-map-type", lambda v: v is not None, "must be undefined to be structural"),
    ("x-kubernetes-validations", lambda v: bool(v), "must be empty to be structural"),
)


class _Level(Enum):
    ROOT = "root"
    ITEM = "item"
    FIELD = "field"


_TYPE_REQUIRED = {
    _Level.ROOT: "must not be empty at the root",
    _Level.ITEM: "must not be empty for specified array items",
    _Level.FIELD: "must not be empty for specified object fields",
}


def _is_any_of_pattern(s: Schema) -> bool:
    return s.get("anyOf") == _INT_OR_STRING_ANY_OF


def _is_all_of_pattern(s: Schema) -> bool:
    all_of = nodes.subschemas(s, "allOf")
    return bool(all_of) and all_of[0].get("anyOf") == _INT_OR_STRING_ANY_OF


def _invariants(s: Schema, lvl: _Level, path: str) -> list[Cause]:
    """``validateStructuralInvariants``."""
    errs: list[Cause] = []
    stype = nodes.type_of(s)
    item_schema = nodes.items(s)
    if stype == "array" and item_schema is None:
        errs.append(fe.required(fe.child(path, "items"), "must be specified"))
    if item_schema is not None:
        errs += _invariants(item_schema, _Level.ITEM, fe.child(path, "items"))
    props = nodes.properties(s)
    for k, prop in props.items():
        errs += _invariants(prop, _Level.FIELD, fe.key(fe.child(path, "properties"), k))
    specified, extra = nodes.additional_properties(s)
    if specified:
        if lvl is _Level.ROOT:
            errs.append(fe.forbidden(fe.child(path, "additionalProperties"), "must not be used at the root"))
        if extra is not None:
            errs += _invariants(extra, _Level.FIELD, fe.child(path, "additionalProperties"))
    int_or_string, embedded = nodes.int_or_string(s), nodes.embedded(s)
    if int_or_string and nodes.preserves_unknown(s):
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-preserve-unknown-fields"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    if int_or_string and embedded:
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-embedded-resource"),
                True,
                "must be false if x-kubernetes-int-or-string is true",
            )
        )
    errs += _value_validation(s, _is_any_of_pattern(s), _is_all_of_pattern(s), path)
    if embedded and stype != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        type_path = fe.child(path, "type")
        errs.append(fe.invalid(type_path, stype, detail) if stype else fe.required(type_path, detail))
    elif not stype and not int_or_string and not nodes.preserves_unknown(s):
        errs.append(fe.required(fe.child(path, "type"), _TYPE_REQUIRED[lvl]))
    if embedded and specified:
        errs.append(
            fe.forbidden(
                fe.child(path, "additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            )
        )
    if lvl is _Level.ROOT and stype and stype != "object":
        errs.append(fe.invalid(fe.child(path, "type"), stype, "must be object at the root"))
    check_metadata = lvl is _Level.ROOT or embedded
    for meta_field in ("kind", "apiVersion"):
        if meta_field in props and check_metadata and nodes.type_of(props[meta_field]) != "string":
            field = fe.child(fe.key(fe.child(path, "properties"), meta_field), "type")
            errs.append(fe.invalid(field, nodes.type_of(props[meta_field]), "must be string"))
    if "metadata" in props:
        errs += _metadata_invariants(
            props["metadata"], check_metadata, lvl, fe.key(fe.child(path, "properties"), "metadata")
        )
    if embedded and not nodes.preserves_unknown(s) and not props:
        errs.append(
            fe.required(
                fe.child(path, "properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            )
        )
    return errs


_IGNORED_ON_ROOT_METADATA = frozenset({"type", "default", "properties"})


def _metadata_invariants(s: Schema, check_metadata: bool, lvl: _Level, path: str) -> list[Cause]:
    """``validateStructuralMetadataInvariants``: root metadata may only restrict
    name and generateName."""
    errs: list[Cause] = []
    if check_metadata and nodes.type_of(s) != "object":
        errs.append(fe.invalid(fe.child(path, "type"), nodes.type_of(s), "must be object"))
    if lvl is _Level.ROOT:
        props = set(nodes.properties(s))
        only_names = props <= {"name", "generateName"}
        other = [k for k, v in s.items() if k not in _IGNORED_ON_ROOT_METADATA and not _is_zero(k, v)]
        if other or not only_names:
            errs.append(
                fe.forbidden(
                    path,
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                )
            )
    return errs


# Keywords held by pointers in Go: present at all means set, even with 0 or false.
_POINTER_KEYWORDS = frozenset(
    {
        "maximum",
        "minimum",
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
        "multipleOf",
        "maxProperties",
        "minProperties",
        "items",
        "not",
        "additionalProperties",
        "externalDocs",
        "example",
        "x-kubernetes-list-type",
        "x-kubernetes-map-type",
    }
)


def _is_zero(keyword: str, value: Any) -> bool:
    """Whether a keyword holds Go's zero value (and so does not count as set)."""
    if keyword in _POINTER_KEYWORDS:
        return False
    return value is None or value is False or value == "" or value == [] or value == {}


def _value_validation(s: Schema, skip_any_of: bool, skip_first_all_of_any_of: bool, path: str) -> list[Cause]:
    """``validateValueValidation``: junctors must not carry structure."""
    errs: list[Cause] = []
    if not skip_any_of:
        for i, sub in enumerate(nodes.subschemas(s, "anyOf")):
            errs += _nested(sub, False, fe.index(fe.child(path, "anyOf"), i))
    for i, sub in enumerate(nodes.subschemas(s, "allOf")):
        errs += _nested(sub, skip_first_all_of_any_of and i == 0, fe.index(fe.child(path, "allOf"), i))
    for i, sub in enumerate(nodes.subschemas(s, "oneOf")):
        errs += _nested(sub, False, fe.index(fe.child(path, "oneOf"), i))
    not_schema = s.get("not")
    if isinstance(not_schema, dict):
        errs += _nested(not_schema, False, fe.child(path, "not"))
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            compile_go(pattern)
        except PatternError as e:
            errs.append(
                fe.invalid(
                    fe.child(path, "pattern"), pattern, f"must be a valid regular expression, but isn't: {e}"
                )
            )
    return errs


def _nested(v: Schema, skip_any_of: bool, path: str) -> list[Cause]:
    """``validateNestedValueValidation``."""
    errs = _value_validation(v, skip_any_of, False, path)
    item_schema = nodes.items(v)
    if item_schema is not None:
        errs += _nested(item_schema, False, fe.child(path, "items"))
    props = nodes.properties(v)
    for k, prop in props.items():
        errs += _nested(prop, False, fe.key(fe.child(path, "properties"), k))
    for keyword, is_set, detail in _NESTED_FORBIDDEN:
        if is_set(v.get(keyword)):
            errs.append(fe.forbidden(fe.child(path, keyword), detail))
    if "metadata" in props:
        errs.append(
            fe.forbidden(
                fe.key(fe.child(path, "properties"), "metadata"), "must not be specified in a nested context"
            )
        )
    return errs


def _completeness(v: Schema, s: Schema, s_path: str, v_path: str) -> list[Cause]:
    """``validateValueValidationCompleteness``: whatever a junctor talks about
    must exist in the structural part of the schema."""
    errs: list[Cause] = []
    not_schema = v.get("not")
    if isinstance(not_schema, dict):
        errs += _nested_completeness(not_schema, s, s_path, fe.child(v_path, "not"))
    for keyword in ("allOf", "anyOf", "oneOf"):
        for i, sub in enumerate(nodes.subschemas(v, keyword)):
            errs += _nested_completeness(sub, s, s_path, fe.index(fe.child(v_path, keyword), i))
    return errs


def _nested_completeness(v: Schema, s: Schema | None, s_path: str, v_path: str) -> list[Cause]:
    if s is None:
        return [fe.required(s_path, f"because it is defined in {v_path}")]
    errs = _completeness(v, s, s_path, v_path)
    v_items = nodes.items(v)
    if v_items is not None:
        errs += _nested_completeness(
            v_items, nodes.items(s), fe.child(s_path, "items"), fe.child(v_path, "items")
        )
    s_props = nodes.properties(s)
    for k, v_prop in nodes.properties(v).items():
        s_field = fe.key(fe.child(s_path, "properties"), k)
        v_field = fe.key(fe.child(v_path, "properties"), k)
        if k not in s_props:
            errs.append(fe.required(s_field, f"because it is defined in {v_field}"))
        else:
            errs += _nested_completeness(v_prop, s_props[k], s_field, v_field)
    return errs


def structural_invariant_causes(schema: Schema, path: str) -> list[Cause]:
    """``ValidateStructural``: invariants and completeness, sorted by their text."""
    errs = _invariants(schema, _Level.ROOT, path) + _completeness(schema, schema, path, path)
    return sorted(errs, key=lambda c: c.error())
