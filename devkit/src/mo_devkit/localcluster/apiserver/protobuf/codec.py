"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``)
decoded into the JSON objects the rest of the server handles.

Why: kubectl's generator commands (``kubectl create secret generic``,
``create deployment``, ``create role``...) and every client-go typed client
send built-in kinds as protobuf, and kube-apiserver accepts them. Custom
resources have no protobuf form; the caller keeps refusing those with 415.

A body is the magic ``k8s\\x00`` then a ``runtime.Unknown`` whose ``typeMeta``
names the kind and whose ``raw`` is the object's message
(k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go). Messages are
read with the table generated from the Kubernetes sources (``schema``)
and rendered as Go's encoding/json renders the struct kube-apiserver decodes
them into, except that what Go would write as ``null`` and zero ``omitempty``
structs are left out: Go cannot tell those from unset either, and this
server's JSON path treats absent fields as unset (defaults fill them). Go's
generated marshallers write every non-pointer field, zero or not, so presence
on the wire only means "set" for pointer fields (``replicas: 0`` is kept,
``generateName: ""`` is not).
"""

from __future__ import annotations

import base64
import datetime
import math
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from ..encoding.jsonutil import loads
from . import schema
from .wire import BYTES, NUMERIC, ProtobufError, fields, packed, scalar

__all__ = ["CONTENT_TYPE", "ProtobufError", "decode"]

CONTENT_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_MAX_DEPTH = 100  # nested messages; a CRD schema uses one or two per level
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_GO_ZERO_TIME = -62135596800  # time.Time{}.Unix(): encoded as null
# resource.ParseQuantity's syntax (k8s.io/apimachinery/pkg/api/resource/quantity.go).
_QUANTITY = re.compile(r"^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")

Rendered = tuple[Any, bool]  # (JSON value, whether the Go value is zero)


class _Field(NamedTuple):
    number: int
    json: str
    label: str
    type: str
    mode: str


_SPECS: dict[str, dict[int, _Field]] = {}


def _spec(name: str) -> dict[int, _Field]:
    spec = _SPECS.get(name)
    if spec is None:
        spec = _SPECS[name] = {f[0]: _Field(*f) for f in schema.MESSAGES[name]}
    return spec


def _is_message(type_: str) -> bool:
    return type_ in schema.MESSAGES


def _zero(type_: str) -> Any:
    if _is_message(type_) or type_ == "bytes":
        return b""
    return "" if type_ == "string" else (False if type_ == "bool" else 0)


def _one(f: _Field, wire: int, raw: int | bytes) -> Any:
    if _is_message(f.type):
        if wire != BYTES or not isinstance(raw, bytes):
            raise ProtobufError(f"wrong wireType = {wire} for field {f.json}")
        return raw
    return scalar(f.type, wire, raw, f.json)


def _map_entry(f: _Field, wire: int, raw: int | bytes) -> tuple[str, Any]:
    if wire != BYTES or not isinstance(raw, bytes):
        raise ProtobufError(f"wrong wireType = {wire} for field {f.json}")
    key, value = "", _zero(f.type)
    for number, w, v in fields(raw):
        if number == 1:
            key = str(scalar("string", w, v, f.json))
        elif number == 2:
            value = value + v if _is_message(f.type) and isinstance(v, bytes) else _one(f, w, v)
    return key, value


def _read(name: str, data: bytes) -> dict[int, Any]:
    """Field number -> value: the last scalar, the concatenated bytes of a
    message (occurrences merge), a list, or a dict. Unknown fields are
    skipped, as gogo-protobuf's generated Unmarshal skips them."""
    spec = _spec(name)
    values: dict[int, Any] = {}
    for number, wire, raw in fields(data):
        f = spec.get(number)
        if f is None:
            continue
        if f.label == "map":
            key, value = _map_entry(f, wire, raw)
            values.setdefault(number, {})[key] = value
        elif f.label == "rep":
            items = values.setdefault(number, [])
            if f.type in NUMERIC and wire == BYTES and isinstance(raw, bytes):
                items.extend(packed(f.type, raw, f.json))
            else:
                items.append(_one(f, wire, raw))
        elif _is_message(f.type):
            values[number] = values.get(number, b"") + _one(f, wire, raw)
        else:
            values[number] = _one(f, wire, raw)
    return values


def _scalar_json(type_: str, value: Any) -> Rendered:
    """JSON of a present scalar, as Go's encoding/json writes it."""
    if type_ == "bytes":
        return base64.b64encode(value).decode(), not value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ProtobufError(f"json: unsupported value: {value}")
        return (int(value) if value.is_integer() and abs(value) < 1e21 else value), value == 0
    return value, not value


def _render_value(type_: str, value: Any, depth: int) -> Rendered:
    if _is_message(type_):
        return _render(type_, value, depth + 1)
    return _scalar_json(type_, value)


def _render(name: str, data: bytes, depth: int) -> Rendered:
    """The JSON of message ``name`` and whether its Go value is zero (which
    decides whether an ``omitempty`` field holding it is written)."""
    if depth > _MAX_DEPTH:
        raise ProtobufError("exceeded max depth")
    values = _read(name, data)
    codec = schema.SPECIAL.get(name)
    if codec is not None:
        return _CODECS[codec](values, data, depth)
    out: dict[str, Any] = {}
    zero = True
    for f in _spec(name).values():
        present = f.number in values
        if f.label:
            items = values.get(f.number)
            if items:
                if f.label == "map":
                    out[f.json] = {k: _render_value(f.type, v, depth)[0] for k, v in items.items()}
                else:
                    out[f.json] = [_render_value(f.type, v, depth)[0] for v in items]
                zero = False
            continue
        if present:
            value, is_zero = _render_value(f.type, values[f.number], depth)
        elif f.mode not in ("keep", "inline"):
            continue  # unset, and its zero value is not written (nor, for pointers, built)
        elif _is_message(f.type):
            value, is_zero = _render(f.type, b"", depth + 1)
        else:  # Go's zero value; a nil []byte is null
            value, is_zero = (None if f.type == "bytes" else _zero(f.type)), True
        if f.mode == "ptr":
            is_zero = not present
            emit = present
        elif f.mode == "inline":
            out.update(value if isinstance(value, dict) else {})
            emit = False
        else:
            emit = f.mode == "keep" or (f.mode == "omit" and not is_zero)
        if emit and value is not None:
            out[f.json] = value
        zero = zero and is_zero
    return out, zero


# ---------------------------------------------------------------- codecs
# Messages whose Go type has its own MarshalJSON, converted by field number.
Codec = Callable[[dict[int, Any], bytes, int], Rendered]


def _time(values: dict[int, Any], data: bytes, depth: int, micro: bool = False) -> Rendered:
    """metav1.Time (RFC 3339, seconds; Go drops the nanos it receives) and
    metav1.MicroTime (microseconds): time_proto.go, micro_time_proto.go."""
    seconds = values.get(1, 0)
    if not data or seconds == _GO_ZERO_TIME:
        return None, True
    nanos = int(values.get(2, 0)) if micro else 0
    micros = nanos // 1000 if nanos >= 0 else -(-nanos // 1000)  # Duration.Truncate
    try:
        t = _EPOCH + datetime.timedelta(seconds=seconds, microseconds=micros)
    except OverflowError as e:
        raise ProtobufError(f"Time.MarshalJSON: year outside of range [0,9999]: {seconds}") from e
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return (f"{text}.{t.microsecond:06d}Z" if micro else f"{text}Z"), False


def _quantity(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    """resource.Quantity is its string (the zero Quantity is ``"0"``); the
    registry puts it in canonical form, as it does for quantities sent as
    JSON (``encoding/quantities.py``)."""
    text = values.get(1)
    if text is None:
        return "0", True
    if not _QUANTITY.match(text):
        raise ProtobufError(
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        )
    return text, False


def _int_or_string(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    kind, number, text = values.get(1, 0), values.get(2, 0), values.get(3, "")
    if kind not in (0, 1):
        raise ProtobufError("impossible IntOrString.Type")
    return (number if kind == 0 else text), not (kind or number or text)


def _raw_json(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    """runtime.RawExtension, metav1.FieldsV1, apiextensions JSON: JSON bytes."""
    raw = values.get(1)
    if not raw:
        return None, True
    try:
        return loads(raw), False
    except Exception as e:
        raise ProtobufError(f"embedded raw value is not JSON: {e}") from e


def _schema(values: dict[int, Any], number: int, depth: int) -> Any:
    return _render("apiextensions.v1.JSONSchemaProps", values[number], depth + 1)[0]


def _schema_or_array(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    if values.get(2):
        return [_render("apiextensions.v1.JSONSchemaProps", s, depth + 1)[0] for s in values[2]], False
    return (_schema(values, 1, depth), False) if 1 in values else (None, True)


def _schema_or_bool(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    if 2 in values:
        return _schema(values, 2, depth), False
    return bool(values.get(1, False)), not values.get(1, False)


def _schema_or_string_array(values: dict[int, Any], data: bytes, depth: int) -> Rendered:
    if values.get(2):
        return list(values[2]), False
    return (_schema(values, 1, depth), False) if 1 in values else (None, True)


_CODECS: dict[str, Codec] = {
    "time": _time,
    "microtime": lambda values, data, depth: _time(values, data, depth, micro=True),
    "quantity": _quantity,
    "intorstring": _int_or_string,
    "rawjson": _raw_json,
    "schema_or_array": _schema_or_array,
    "schema_or_bool": _schema_or_bool,
    "schema_or_string_array": _schema_or_string_array,
}
assert set(schema.SPECIAL.values()) <= set(_CODECS), "protobuf.schema names a codec this module lacks"


# ---------------------------------------------------------------- bodies
class DecodeError(ProtobufError):
    """A decoding failure with the kind the body claimed, for kube-apiserver's
    message ``<kind> in version "<v>" cannot be handled as a <expected>: ...``."""

    def __init__(self, message: str, api_version: str = "", kind: str = "") -> None:
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind

    def describe(self, expected_kind: str) -> str:
        if not self.kind:
            return f"the object provided is unrecognized (must be of type {expected_kind}): {self}"
        version = self.api_version.rpartition("/")[2]
        return f'{self.kind} in version "{version}" cannot be handled as a {expected_kind}: {self}'


def decode(body: bytes) -> dict[str, Any]:
    """The JSON object of a protobuf request body, with its apiVersion and kind.

    Built-in kinds of ``schema.KINDS`` and DeleteOptions (under any
    apiVersion) are known; anything else raises :class:`DecodeError`.
    """
    if not body.startswith(MAGIC):
        raise DecodeError(
            f"provided data does not appear to be a protobuf message, expected prefix {list(MAGIC)}"
        )
    try:
        envelope = _read(schema.ENVELOPE, body[len(MAGIC) :])
        type_meta = _read("runtime.TypeMeta", envelope.get(1, b""))
    except ProtobufError as e:
        raise DecodeError(str(e)) from e
    api_version, kind = str(type_meta.get(1, "")), str(type_meta.get(2, ""))
    if envelope.get(3):
        raise DecodeError(f"unsupported content encoding {envelope[3]!r}", api_version, kind)
    message = schema.DELETE_OPTIONS if kind == "DeleteOptions" else schema.KINDS.get((api_version, kind))
    if message is None:
        raise DecodeError(f'no kind "{kind}" is registered for version "{api_version}"', api_version, kind)
    try:
        obj, _ = _render(message, envelope.get(2, b""), 0)
    except (ProtobufError, RecursionError) as e:
        raise DecodeError(f"proto: {e}", api_version, kind) from e
    assert isinstance(obj, dict)
    return {"apiVersion": api_version, "kind": kind, **obj}
