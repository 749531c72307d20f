"""Field types shared by every kind, and the hints that turn them into CRD schema.

Kubernetes types several values in ways Python does not: 32-bit integers, resource
quantities that may be a number or a string, ``IntOrString``, Go durations, RFC 3339
timestamps, TOML text, and free-form embedded objects that the API server keeps as
they are. Each gets one annotated type here, so that a model field says what it is
once and both the validator (pydantic) and the CRD generator read the same facts.
The generator reads :class:`CRDHint` markers; pydantic ignores them.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from typing import Annotated, Any, Final

from annotated_types import MaxLen
from pydantic import AfterValidator, PlainValidator

from mo_operator.kube.meta.quantity import QUANTITY_PATTERN, parse_quantity

from .limits import MAX_CONFIG_LENGTH

__all__ = [
    "NO_DEFAULT",
    "CRDHint",
    "DateTime",
    "Duration",
    "FreeObject",
    "Int32",
    "Int64",
    "IntOrString",
    "Quantity",
    "TomlText",
    "parse_duration",
]

NO_DEFAULT: Final = object()
"""Marks a :class:`CRDHint` without a schema default (``None`` is a valid default)."""


@dataclass(frozen=True)
class CRDHint:
    """Schema facts a Python type cannot carry, for the CRD generator.

    ``default`` is written into the schema, so the API server applies it to stored
    objects even when no webhook runs; the pydantic default stays ``None`` so a
    parsed object never claims a field its author did not write.
    """

    format: str | None = None
    pattern: str | None = None
    int_or_string: bool = False
    preserve_unknown: bool = False
    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    default: Any = field(default=NO_DEFAULT)


_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _int32(v: int) -> int:
    if not _INT32_MIN <= v <= _INT32_MAX:
        raise ValueError(f"must be a 32-bit integer (between {_INT32_MIN} and {_INT32_MAX})")
    return v


def _int64(v: int) -> int:
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError(f"must be a 64-bit integer (between {_INT64_MIN} and {_INT64_MAX})")
    return v


_QUANTITY = re.compile(QUANTITY_PATTERN)


def _quantity(v: object) -> int | str:
    """An ``int-or-string`` quantity as the API server decodes it into ``resource.Quantity``."""
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise ValueError('must be a quantity: an integer or a string such as "500m" or "10Gi"')
    if isinstance(v, str):
        parse_quantity(v)  # raises ValueError with apimachinery's message
        if not _QUANTITY.match(v):  # the CRD's pattern, which kube-apiserver checks first: "E" has no number
            raise ValueError(f"should match '{QUANTITY_PATTERN}'")
    else:
        _int64(v)
    return v


def _int_or_string(v: object) -> int | str:
    if isinstance(v, bool) or not isinstance(v, int | str):
        raise ValueError("must be an integer or a string")
    if isinstance(v, int):
        _int32(v)  # intstr.IntOrString holds an int32
    return v


# Go's time.ParseDuration: an optional sign, then one or more decimal numbers
# each with a unit; "0" alone needs no unit.
_DURATION_UNITS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string (``"10m"``, ``"1h30m"``, ``"1.5s"``), as
    ``time.ParseDuration`` reads it; raises ValueError with Go's message."""
    error = ValueError(f'time: invalid duration "{text}"')
    body = text[1:] if text[:1] in "+-" else text
    if body == "0":
        return 0.0
    if not body:
        raise error
    total, pos = 0.0, 0
    while pos < len(body):
        m = _DURATION_PART.match(body, pos)
        if m is None or m.group(1) in ("", "."):
            raise error
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if total * 1e9 > _INT64_MAX:
        raise ValueError(f'time: invalid duration "{text}"')
    return -total if text.startswith("-") else total


def _duration(v: str) -> str:
    parse_duration(v)
    return v


_RFC3339 = re.compile(
    r"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])[Tt]([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)"
    r"(\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
)


def _date_time(v: str) -> str:
    if not _RFC3339.fullmatch(v):
        raise ValueError(f'must be an RFC 3339 date-time such as "2024-01-02T15:04:05Z", not "{v}"')
    return v


def _toml(v: str) -> str:
    try:
        tomllib.loads(v)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"must be valid TOML: {e}") from None
    return v


Int32 = Annotated[int, AfterValidator(_int32), CRDHint(format="int32")]
"""A Go ``int32``."""

Int64 = Annotated[int, AfterValidator(_int64), CRDHint(format="int64")]
"""A Go ``int64`` (and Go ``int``, which is 64 bits on every platform upstream ships)."""

Quantity = Annotated[
    int | str, PlainValidator(_quantity), CRDHint(int_or_string=True, pattern=QUANTITY_PATTERN)
]
"""A ``resource.Quantity``: ``10Gi``, ``500m``, ``2``."""

IntOrString = Annotated[int | str, PlainValidator(_int_or_string), CRDHint(int_or_string=True)]
"""An ``intstr.IntOrString`` such as a rolling update's ``maxSurge`` (``1`` or ``"25%"``)."""

Duration = Annotated[str, AfterValidator(_duration)]
"""A ``metav1.Duration``: a Go duration string such as ``10m`` or ``1h30m``."""

DateTime = Annotated[str, AfterValidator(_date_time), CRDHint(format="date-time")]
"""A ``metav1.Time``: an RFC 3339 timestamp."""

TomlText = Annotated[str, MaxLen(MAX_CONFIG_LENGTH), AfterValidator(_toml)]
"""Raw TOML configuration text (upstream's ``TomlConfig``), kept exactly as written; its
length is checked before it is parsed."""

FreeObject = Annotated[dict[str, Any], CRDHint(preserve_unknown=True)]
"""An embedded Kubernetes object (affinity, a probe, a volume, ...) that the API
server keeps as written; the Kubernetes object it becomes validates it later."""
