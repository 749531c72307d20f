"""Field errors as ``k8s.io/apimachinery/pkg/util/validation/field`` builds them.

A :class:`Cause` is what lands in ``Status.details.causes``: the reason
(``FieldValueInvalid``...), the message (``ErrorBody()``: ``Invalid value:
"x": detail``) and the field path. The value printing follows the v1.30
``ErrorBody`` (the version our server reports): scalars with ``%v``,
strings with ``%q``, everything else with ``%#v``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .goformat import go_quote, go_scalar_v, go_sharp_v

#: The field of an error reported against a nil ``*field.Path`` (the object root).
NIL_PATH = "<nil>"

_TITLES = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
_NO_VALUE = frozenset({"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"})


@dataclass(frozen=True)
class Cause:
    """One field error: ``reason`` is the Kubernetes cause type."""

    reason: str
    message: str
    field: str

    def error(self) -> str:
        """The one-line form (``field: message``), as ``field.Error.Error()``."""
        return f"{self.field}: {self.message}"


class GoText(str):
    """A value already printed the Go way (``[]string{"a"}``); shown as is."""


def _value_text(value: Any) -> str:
    if isinstance(value, GoText):
        return str(value)
    if value is None:
        return go_quote("null")
    if isinstance(value, bool | int | float):
        return go_scalar_v(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_sharp_v(value)


def make(reason: str, field: str, value: Any = "", detail: str = "") -> Cause:
    """A cause with ``ErrorBody()``'s message."""
    body = _TITLES[reason]
    if reason not in _NO_VALUE:
        body = f"{body}: {_value_text(value)}"
    if detail:
        body = f"{body}: {detail}"
    return Cause(reason, body, field)


def required(field: str, detail: str = "") -> Cause:
    return make("FieldValueRequired", field, detail=detail)


def forbidden(field: str, detail: str) -> Cause:
    return make("FieldValueForbidden", field, detail=detail)


def invalid(field: str, value: Any, detail: str) -> Cause:
    return make("FieldValueInvalid", field, value, detail)


def type_invalid(field: str, value: Any, detail: str) -> Cause:
    return make("FieldValueTypeInvalid", field, value, detail)


def duplicate(field: str, value: Any) -> Cause:
    return make("FieldValueDuplicate", field, value)


def not_supported(field: str, value: Any, valid: list[str]) -> Cause:
    detail = ""
    if valid:
        detail = "supported values: " + ", ".join(go_quote(v) for v in valid)
    return make("FieldValueNotSupported", field, value, detail)


def too_long(field: str, max_length: int) -> Cause:
    return make("FieldValueTooLong", field, detail=f"must have at most {max_length} bytes")


def too_many(field: str, actual: int, max_quantity: int) -> Cause:
    detail = f"must have at most {max_quantity} items" if max_quantity >= 0 else "has too many items"
    if actual >= 0:
        return make("FieldValueTooMany", field, actual, detail)
    return Cause("FieldValueTooMany", f"Too many: {detail}", field)


def child(path: str, name: str) -> str:
    """``Path.Child(name)``: ``spec`` + ``replicas`` = ``spec.replicas``."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """``Path.Index(i)``: ``spec.items[0]``."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """``Path.Key(k)``: ``properties[spec]`` (no quotes, as Kubernetes prints it)."""
    return f"{path}[{k}]"
