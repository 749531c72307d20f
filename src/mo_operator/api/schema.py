"""OpenAPI v3 schemas of our models, in the *structural* form CRDs require.

A structural schema has a ``type`` on every node (except int-or-string and
preserve-unknown nodes), no ``$ref``, and no type inside ``anyOf``/``oneOf``
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema).
pydantic's own JSON Schema has none of these properties, so we walk the model
fields ourselves: each field's annotation gives the type, ``annotated_types``
constraints give bounds and lengths, and :class:`~mo_operator.api.fields.CRDHint`
markers give what only Kubernetes knows (formats, int-or-string, list and map
types, schema defaults).
"""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .fields import NO_DEFAULT, CRDHint

__all__ = ["field_json_name", "model_schema", "resource_schema", "type_schema"]

Schema = dict[str, Any]


def _description(model: type[BaseModel]) -> str:
    """A model's docstring as one paragraph (``kubectl explain`` rewraps it anyway)."""
    return " ".join(inspect.cleandoc(model.__doc__ or "").split())


def field_json_name(name: str, field: FieldInfo) -> str:
    """The JSON name of a field: its alias, or the Python name when it has none."""
    return field.alias or name


def _merge_hints(constraints: list[Any]) -> CRDHint:
    """One hint from several: later (inner) markers fill what earlier ones leave unset."""
    merged: dict[str, Any] = {}
    for c in constraints:
        if isinstance(c, CRDHint):
            for key, value in vars(c).items():
                unset = (
                    value is NO_DEFAULT
                    if key == "default"
                    else value is None or value is False or value == ()
                )
                if not unset:
                    merged.setdefault(key, value)
    return CRDHint(**merged)


def _flatten(constraints: list[Any]) -> list[Any]:
    """Constraint objects, with a nested FieldInfo (from ``Annotated[x, Field(...)]``) opened up."""
    out: list[Any] = []
    for c in constraints:
        if isinstance(c, FieldInfo):
            out.extend(c.metadata)
        else:
            out.append(c)
    return out


def _apply_constraints(schema: Schema, constraints: list[Any]) -> None:
    kind = schema.get("type")
    for c in constraints:
        if isinstance(c, at.Ge):
            schema["minimum"] = c.ge
        elif isinstance(c, at.Gt):
            schema["minimum"], schema["exclusiveMinimum"] = c.gt, True
        elif isinstance(c, at.Le):
            schema["maximum"] = c.le
        elif isinstance(c, at.Lt):
            schema["maximum"], schema["exclusiveMaximum"] = c.lt, True
        elif isinstance(c, at.MinLen):
            schema["minItems" if kind == "array" else "minLength"] = c.min_length
        elif isinstance(c, at.MaxLen):
            schema["maxItems" if kind == "array" else "maxLength"] = c.max_length
        elif not isinstance(c, CRDHint) and getattr(c, "pattern", None) is not None:
            schema["pattern"] = c.pattern


def _apply_hint(schema: Schema, hint: CRDHint) -> None:
    if hint.format:
        schema["format"] = hint.format
    if hint.pattern:
        schema["pattern"] = hint.pattern
    if hint.preserve_unknown:
        schema["x-kubernetes-preserve-unknown-fields"] = True
    if hint.list_type:
        schema["x-kubernetes-list-type"] = hint.list_type
    if hint.list_map_keys:
        schema["x-kubernetes-list-map-keys"] = list(hint.list_map_keys)
    if hint.map_type:
        schema["x-kubernetes-map-type"] = hint.map_type
    if hint.default is not NO_DEFAULT:
        schema["default"] = hint.default


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def type_schema(tp: Any, constraints: list[Any]) -> Schema:
    """The schema of a (possibly annotated, possibly optional) type with its constraints."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        inner, *extra = get_args(tp)
        return type_schema(inner, constraints + _flatten(list(extra)))
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return type_schema(args[0], constraints)
        hint = _merge_hints(constraints)
        if not hint.int_or_string:
            raise TypeError(f"a union must be int-or-string to have a structural schema: {tp}")
        schema: Schema = {"x-kubernetes-int-or-string": True}
        _apply_hint(schema, hint)
        return schema
    hint = _merge_hints(constraints)
    schema = _plain_schema(tp, origin, hint)
    _apply_constraints(schema, constraints)
    _apply_hint(schema, hint)
    return schema


def _plain_schema(tp: Any, origin: Any, hint: CRDHint) -> Schema:
    if origin is Literal:
        return {"type": "string", "enum": list(get_args(tp))}
    if origin is list:
        (item,) = get_args(tp)
        items = type_schema(item, [])
        if _is_model(item):
            items.setdefault("description", _description(item))
        return {"type": "array", "items": items}
    if origin is dict:
        key, value = get_args(tp)
        if key is not str:
            raise TypeError(f"map keys must be strings: {tp}")
        if value is Any:
            return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
        return {"type": "object", "additionalProperties": type_schema(value, [])}
    if _is_model(tp):
        return model_schema(tp)
    simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
    if tp in simple:
        return {"type": simple[tp]}
    raise TypeError(f"no structural schema for {tp!r}")


def model_schema(model: type[BaseModel]) -> Schema:
    """The object schema of a model: its fields by JSON name, required ones listed."""
    properties: Schema = {}
    required: list[str] = []
    for name, field in model.model_fields.items():
        json_name = field_json_name(name, field)
        prop = type_schema(field.annotation, list(field.metadata))
        if field.description:
            prop["description"] = field.description
        properties[json_name] = prop
        if field.is_required():
            required.append(json_name)
    schema: Schema = {"type": "object", "properties": properties}
    if required:
        schema["required"] = sorted(required)
    if model.model_config.get("extra") == "allow":
        schema["x-kubernetes-preserve-unknown-fields"] = True
    hint = getattr(model, "crd_hint", None)
    if isinstance(hint, CRDHint):
        _apply_hint(schema, hint)
    return schema


_ROOT_FIELDS: Schema = {
    "apiVersion": {
        "type": "string",
        "description": "The versioned schema of this object; servers convert recognised schemas to the "
        "latest internal value and may reject unrecognised ones.",
    },
    "kind": {
        "type": "string",
        "description": "The REST resource this object represents, in CamelCase; servers may infer it from the "
        "endpoint the client submits to. Cannot be updated.",
    },
    "metadata": {"type": "object"},
}


def resource_schema(model: type[BaseModel]) -> Schema:
    """The ``openAPIV3Schema`` of a top-level kind: the model's schema with the standard
    apiVersion, kind and metadata, and the kind's description at the root."""
    schema = model_schema(model)
    schema["properties"].update(_ROOT_FIELDS)
    schema["description"] = _description(model)
    return schema
