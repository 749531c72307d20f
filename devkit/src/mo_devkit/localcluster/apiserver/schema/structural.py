"""The schema checks kube-apiserver makes when a CRD is created or updated
(``validateCustomResourceDefinitionValidation`` for one version's
``openAPIV3Schema``): unsupported keywords, list and map type extensions,
structurality, and defaults. CEL rules are not compiled.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from . import fielderrors as fe
from . import nodes
from .default_validation import default_causes
from .fielderrors import Cause, GoText
from .goformat import go_quote
from .nodes import Schema
from .structural_invariants import structural_invariant_causes

__all__ = ["structural_causes", "structural_errors"]

_OPENAPI_V3_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META_FIELDS = frozenset({"metadata", "kind", "apiVersion"})
# JSONSchemaProps fields in Go declaration order, with their JSON names; the
# status-subresource root check walks them in this order and stops at the first.
_ROOT_FIELDS = [
    ("ID", "id"),
    ("Schema", "$schema"),
    ("Ref", "$ref"),
    ("Description", "description"),
    ("Type", "type"),
    ("Nullable", "nullable"),
    ("Format", "format"),
    ("Title", "title"),
    ("Default", "default"),
    ("Maximum", "maximum"),
    ("ExclusiveMaximum", "exclusiveMaximum"),
    ("Minimum", "minimum"),
    ("ExclusiveMinimum", "exclusiveMinimum"),
    ("MaxLength", "maxLength"),
    ("MinLength", "minLength"),
    ("Pattern", "pattern"),
    ("MaxItems", "maxItems"),
    ("MinItems", "minItems"),
    ("UniqueItems", "uniqueItems"),
    ("MultipleOf", "multipleOf"),
    ("Enum", "enum"),
    ("MaxProperties", "maxProperties"),
    ("MinProperties", "minProperties"),
    ("Required", "required"),
    ("Items", "items"),
    ("AllOf", "allOf"),
    ("OneOf", "oneOf"),
    ("AnyOf", "anyOf"),
    ("Not", "not"),
    ("Properties", "properties"),
    ("AdditionalProperties", "additionalProperties"),
    ("PatternProperties", "patternProperties"),
    ("Dependencies", "dependencies"),
    ("AdditionalItems", "additionalItems"),
    ("Definitions", "definitions"),
    ("ExternalDocs", "externalDocs"),
    ("Example", "example"),
    ("XPreserveUnknownFields", "x-kubernetes-preserve-unknown-fields"),
    ("XEmbeddedResource", "x-kubernetes-embedded-resource"),
    ("XIntOrString", "x-kubernetes-int-or-string"),
    ("XListMapKeys", "x-kubernetes-list-map-keys"),
    ("XListType", "x-kubernetes-list-type"),
    ("XMapType", "x-kubernetes-map-type"),
    ("XValidations", "x-kubernetes-validations"),
]
_ALLOWED_AT_STATUS_ROOT = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
]
_UNSUPPORTED_IN_STRUCTURAL = [
    ("id", "id"),
    ("$schema", "schema"),
    ("$ref", "$ref"),
    ("patternProperties", "patternProperties"),
    ("dependencies", "dependencies"),
    ("additionalItems", "additionalItems"),
    ("definitions", "definitions"),
]


@dataclass(frozen=True)
class _Context:
    """``specStandardValidatorV3``'s options as they change on the way down."""

    forbid_defaults_reason: str | None = None
    inside_resource_meta: bool = False


def _go_strings(values: list[Any]) -> GoText:
    return GoText("[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}")


def _standard(s: Schema, path: str, ctx: _Context) -> list[Cause]:
    """``specStandardValidatorV3.validate``: keywords CRDs do not support."""
    errs: list[Cause] = []
    stype = s.get("type")
    if isinstance(stype, str) and stype and stype not in _OPENAPI_V3_TYPES:
        errs.append(fe.not_supported(fe.child(path, "type"), stype, _OPENAPI_V3_TYPES))
    if "default" in s and s["default"] is not None and ctx.forbid_defaults_reason is not None:
        errs.append(fe.forbidden(fe.child(path, "default"), f"must not be set {ctx.forbid_defaults_reason}"))
    for keyword, name in (
        ("id", "id"),
        ("additionalItems", "additionalItems"),
        ("patternProperties", "patternProperties"),
        ("definitions", "definitions"),
        ("dependencies", "dependencies"),
        ("$ref", "$ref"),
    ):
        if s.get(keyword) not in (None, "", {}):
            errs.append(fe.forbidden(fe.child(path, keyword), f"{name} is not supported"))
    if stype == "null":
        errs.append(
            fe.forbidden(fe.child(path, "type"), "type cannot be set to null, use nullable as an alternative")
        )
    if isinstance(s.get("items"), list):
        errs.append(fe.forbidden(fe.child(path, "items"), "items must be a schema object and not an array"))
    if ctx.inside_resource_meta and nodes.embedded(s):
        errs.append(
            fe.forbidden(
                fe.child(path, "x-kubernetes-embedded-resource"), "must not be used inside of resource meta"
            )
        )
    return errs


def _openapi_schema(s: Schema, path: str, ctx: _Context, is_root: bool) -> list[Cause]:
    """``ValidateCustomResourceDefinitionOpenAPISchema`` for one node and below."""
    errs = _standard(s, path, ctx)
    if s.get("uniqueItems") is True:
        errs.append(
            fe.forbidden(
                fe.child(path, "uniqueItems"),
                "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
            )
        )
    props = nodes.properties(s)
    if "additionalProperties" in s:
        ap = s["additionalProperties"]
        if props and ap is not True:
            errs.append(
                fe.forbidden(
                    fe.child(path, "additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                )
            )
        if isinstance(ap, dict):
            sub = ctx
            if ctx.inside_resource_meta:
                sub = replace(
                    ctx, forbid_defaults_reason="inside additionalProperties applying to object metadata"
                )
            errs += _openapi_schema(ap, fe.child(path, "additionalProperties"), sub, False)
    for name, prop in props.items():
        sub = ctx
        if (is_root or nodes.embedded(s)) and name in _META_FIELDS:
            sub = replace(sub, inside_resource_meta=True)
            if is_root:
                sub = replace(sub, forbid_defaults_reason=f"in top-level {name}")
        errs += _openapi_schema(prop, fe.key(fe.child(path, "properties"), name), sub, False)
    not_schema = s.get("not")
    if isinstance(not_schema, dict):
        errs += _openapi_schema(not_schema, fe.child(path, "not"), ctx, False)
    for keyword in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(nodes.subschemas(s, keyword)):
            errs += _openapi_schema(sub_schema, fe.index(fe.child(path, keyword), i), ctx, False)
    items = s.get("items")
    if isinstance(items, dict):
        errs += _openapi_schema(items, fe.child(path, "items"), ctx, False)
    elif isinstance(items, list):
        for i, item in enumerate(i for i in items if isinstance(i, dict)):
            errs += _openapi_schema(item, fe.index(fe.child(path, "items"), i), ctx, False)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(
            fe.invalid(
                fe.child(path, "x-kubernetes-preserve-unknown-fields"), False, "must be true or undefined"
            )
        )
    errs += _map_and_list_types(s, path)
    return errs


def _type_must_be(s: Schema, path: str, expected: str, because: str) -> Cause:
    detail = f"must be {expected} if {because} is specified"
    stype = nodes.type_of(s)
    type_path = fe.child(path, "type")
    return fe.invalid(type_path, stype, detail) if stype else fe.required(type_path, detail)


def _map_and_list_types(s: Schema, path: str) -> list[Cause]:
    """The ``x-kubernetes-map-type``, ``-list-type`` and ``-list-map-keys`` rules."""
    errs: list[Cause] = []
    map_type = s.get("x-kubernetes-map-type")
    if map_type is not None and nodes.type_of(s) != "object":
        errs.append(_type_must_be(s, path, "object", "x-kubernetes-map-type"))
    if map_type is not None and map_type not in ("atomic", "granular"):
        errs.append(
            fe.not_supported(fe.child(path, "x-kubernetes-map-type"), map_type, ["atomic", "granular"])
        )
    list_type = s.get("x-kubernetes-list-type")
    items = nodes.items(s)
    if list_type is not None and nodes.type_of(s) != "array":
        errs.append(_type_must_be(s, path, "array", "x-kubernetes-list-type"))
    elif list_type == "set" and items is not None:
        item_type = nodes.type_of(items)
        set_detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
        if item_type == "array" and items.get("x-kubernetes-list-type") not in (None, "atomic"):
            errs.append(
                fe.invalid(
                    fe.child(path, "items.x-kubernetes-list-type"),
                    items["x-kubernetes-list-type"],
                    set_detail,
                )
            )
        elif item_type == "object" and items.get("x-kubernetes-map-type") != "atomic":
            errs.append(
                fe.invalid(
                    fe.child(path, "items.x-kubernetes-map-type"),
                    items.get("x-kubernetes-list-type"),
                    set_detail,
                )
            )
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(
            fe.not_supported(fe.child(path, "x-kubernetes-list-type"), list_type, ["atomic", "set", "map"])
        )
    keys = s.get("x-kubernetes-list-map-keys") or []
    if keys:
        lt_path = fe.child(path, "x-kubernetes-list-type")
        if list_type is None:
            errs.append(fe.required(lt_path, "must be map if x-kubernetes-list-map-keys is non-empty"))
        elif list_type != "map":
            errs.append(
                fe.invalid(lt_path, list_type, "must be map if x-kubernetes-list-map-keys is non-empty")
            )
    if list_type == "map":
        errs += _map_list(s, path, keys if isinstance(keys, list) else [])
    if list_type in ("set", "map") and items is not None:
        errs += _map_list_keys_map_set(s, items, path, list_type)
    return errs


def _map_list(s: Schema, path: str, keys: list[Any]) -> list[Cause]:
    errs: list[Cause] = []
    keys_path = fe.child(path, "x-kubernetes-list-map-keys")
    if not keys:
        errs.append(fe.required(keys_path, "must not be empty if x-kubernetes-list-type is map"))
    raw_items = s.get("items")
    if raw_items is None:
        errs.append(
            fe.required(fe.child(path, "items"), "must have a schema if x-kubernetes-list-type is map")
        )
        return errs
    if not isinstance(raw_items, dict):
        errs.append(
            fe.invalid(
                fe.child(path, "items"),
                raw_items,
                "must only have a single schema if x-kubernetes-list-type is map",
            )
        )
        return errs
    item_type = nodes.type_of(raw_items)
    if item_type != "object":
        errs.append(
            fe.invalid(
                fe.child(path, "items.type"),
                item_type,
                "must be object if parent array's x-kubernetes-list-type is map",
            )
        )
        return errs
    item_props = nodes.properties(raw_items)
    seen: set[str] = set()
    for k in keys:
        if k in item_props:
            if nodes.type_of(item_props[k]) in ("array", "object"):
                field = fe.child(fe.key(fe.child(path, "items.properties"), str(k)), "type")
                errs.append(
                    fe.invalid(
                        field,
                        item_type,
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    )
                )
        else:
            errs.append(
                fe.invalid(keys_path, _go_strings(keys), "entries must all be names of item properties")
            )
        if k in seen:
            errs.append(fe.invalid(keys_path, _go_strings(keys), "must not contain duplicate entries"))
        seen.add(k)
    return errs


def _map_list_keys_map_set(s: Schema, items: Schema, path: str, list_type: str) -> list[Cause]:
    """``validateMapListKeysMapSet``: keys of map lists always have a value."""
    errs: list[Cause] = []
    if nodes.nullable(items):
        errs.append(
            fe.forbidden(
                fe.child(path, "items.nullable"),
                f"cannot be nullable when x-kubernetes-list-type is {list_type}",
            )
        )
    if list_type != "map":
        return errs
    required = items.get("required") or []
    item_props = nodes.properties(items)
    for k in nodes.list_map_keys(s):
        prop = item_props.get(k)
        if prop is None:
            continue
        prop_path = fe.key(fe.child(path, "items.properties"), k)
        if k not in required and not nodes.has_default(prop):
            errs.append(
                fe.required(
                    fe.child(prop_path, "default"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                )
            )
        if nodes.nullable(prop):
            errs.append(
                fe.forbidden(
                    fe.child(prop_path, "nullable"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                )
            )
    return errs


def _status_root(s: Schema, path: str) -> list[Cause]:
    """With a status subresource only some keywords may sit at the root, so
    that ``properties.status`` alone carries the status validation."""
    for go_name, keyword in _ROOT_FIELDS:
        value = s.get(keyword)
        if value is None or value is False or value == "" or value == [] or value == {}:
            continue
        if go_name == "Type":
            if value != "object":
                detail = 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled'
                return [fe.invalid(fe.child(path, "type"), value, detail)]
            continue
        if go_name not in _ALLOWED_AT_STATUS_ROOT:
            allowed = "[" + " ".join(_ALLOWED_AT_STATUS_ROOT) + "]"
            return [
                fe.invalid(
                    path,
                    s,
                    f"only {allowed} fields are allowed at the root of the schema if the status subresource is enabled",
                )
            ]
    return []


def _new_structural_error(s: Schema) -> str | None:
    """Why ``NewStructural`` cannot convert the schema, if it cannot."""
    for keyword, name in _UNSUPPORTED_IN_STRUCTURAL:
        if s.get(keyword) not in (None, "", {}, []):
            return f"OpenAPIV3Schema '{name}' is not supported"
    children = [s["not"]] if isinstance(s.get("not"), dict) else []
    for keyword in ("allOf", "anyOf", "oneOf"):
        children += nodes.subschemas(s, keyword)
    if s.get("x-kubernetes-preserve-unknown-fields") is False:
        return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    if isinstance(s.get("items"), list):
        return "OpenAPIV3Schema 'items' must be a schema, but is an array"
    children += [c for c in (nodes.items(s), nodes.additional_properties(s)[1]) if c is not None]
    children += list(nodes.properties(s).values())
    for child in children:
        if (err := _new_structural_error(child)) is not None:
            return err
    return None


def structural_causes(
    schema: Schema, path: str = "openAPIV3Schema", *, status_subresource: bool = False
) -> list[Cause]:
    """Every reason kube-apiserver would refuse ``schema`` as a CRD version's
    ``openAPIV3Schema``, with ``path`` the field of that schema in the request
    (``spec.versions[0].schema.openAPIV3Schema``)."""
    causes: list[Cause] = []
    if status_subresource:
        causes += _status_root(schema, path)
    if schema.get("nullable") is True:
        causes.append(fe.forbidden(fe.child(path, "nullable"), "nullable cannot be true at the root"))
    init_error = _new_structural_error(schema)
    if init_error is None:
        structural = structural_invariant_causes(schema, path)
        causes += structural or default_causes(schema, path)
    causes += _openapi_schema(schema, path, _Context(), True)
    if not causes and init_error is not None:
        causes.append(fe.invalid(path, "", init_error))
    return causes


def structural_errors(schema: Schema) -> list[str]:
    """The same checks as :func:`structural_causes`, as ``field: message``
    lines with fields relative to the schema root (``properties[spec].type:
    Required value: must not be empty for specified object fields``)."""
    return [f"{c.field}: {c.message}" if c.field else c.message for c in structural_causes(schema, "")]
