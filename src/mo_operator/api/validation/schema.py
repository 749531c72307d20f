"""Schema validation: the checks the CRD's OpenAPI schema makes, with the models.

An object the API server stores has been decoded against the CRD schema first, so
nothing past this point needs to doubt a field's type. We check the same facts
here (for objects that never met the API server, and so that every later check
may trust types), and report them at field paths, not pydantic locations.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ..base import APIModel, parse
from ..normalize import field_schema, kind_schema
from .errors import ROOT, FieldError, child, index, key

__all__ = ["schema_errors"]

Schema = dict[str, Any]


def _locate(schema: Schema | None, loc: tuple[int | str, ...]) -> tuple[str, Schema | None]:
    """The field path and the schema node of a pydantic error location."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path = index(path, part)
            schema = schema.get("items") if schema is not None else None
        elif (
            schema is not None
            and part not in schema.get("properties", {})
            and "additionalProperties" in schema
        ):
            path = key(path, part)
            schema = field_schema(schema, part)
        else:
            path = child(path, part)
            schema = field_schema(schema, part)
    return path or ROOT, schema


def _go_quote(value: Any) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


_TYPE_ERRORS = {
    "int_type": "integer",
    "int_parsing": "integer",
    "int_from_float": "integer",
    "string_type": "string",
    "bool_type": "boolean",
    "float_type": "number",
    "dict_type": "object",
    "model_type": "object",
    "model_attributes_type": "object",
    "list_type": "array",
}


def _message(err: Any, schema: Schema | None) -> str:
    kind: str = err["type"]
    ctx: dict[str, Any] = err.get("ctx") or {}
    if kind == "missing":
        return "Required value"
    if kind == "extra_forbidden":
        return f"unknown field {_go_quote(err['loc'][-1])}"
    if kind in _TYPE_ERRORS:
        return f"must be of type {_TYPE_ERRORS[kind]}"
    if kind == "literal_error" and schema is not None and "enum" in schema:
        allowed = ", ".join(_go_quote(v) for v in schema["enum"])
        return f"Unsupported value: {_go_quote(err['input'])}: supported values: {allowed}"
    if kind == "greater_than_equal":
        return f"must be greater than or equal to {ctx['ge']}"
    if kind == "less_than_equal":
        return f"must be less than or equal to {ctx['le']}"
    if kind == "string_too_long":
        return f"Too long: may not be more than {ctx['max_length']} characters"
    if kind == "string_too_short":
        return f"should be at least {ctx['min_length']} chars long"
    if kind == "string_pattern_mismatch":
        return f"should match '{ctx['pattern']}'"
    if kind == "value_error" and "error" in ctx:
        return str(ctx["error"])
    return str(err["msg"])


def schema_errors(model: type[APIModel], obj: dict[str, Any]) -> list[FieldError]:
    """Every schema violation of ``obj`` (null-pruned, see :func:`~mo_operator.api.normalize.prune_nulls`)."""
    try:
        parse(model, obj)
    except ValidationError as e:
        schema = kind_schema(model)
        errors = []
        for err in e.errors(include_url=False):
            path, node = _locate(schema, tuple(err["loc"]))
            errors.append(FieldError(path, _message(err, node)))
        return errors
    return []
