"""The protobuf wire format, read without the ``protobuf`` package.

Kubernetes' messages use four wire types only (varint, 64-bit, length-delimited,
32-bit) and no groups, so a reader of a few dozen lines is enough, and the
server keeps no runtime dependency for it. Integers are read as gogo-protobuf's
generated ``Unmarshal`` reads them (``int32`` keeps the low 32 bits, signed), and
repeated numbers are accepted both packed and unpacked, as every protobuf parser
must.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
NUMERIC = frozenset({"bool", "int32", "int64", "uint32", "uint64", "double", "float"})
_WIRE_TYPE = {"double": FIXED64, "float": FIXED32, "string": BYTES, "bytes": BYTES}


class ProtobufError(ValueError):
    """A body that is not a valid encoding of the message it claims to be."""


Value = int | bytes


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise ProtobufError("unexpected EOF")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
        if shift >= 64:
            raise ProtobufError("integer overflow")


def _take(data: bytes, pos: int, n: int) -> tuple[bytes, int]:
    if n < 0 or pos + n > len(data):
        raise ProtobufError("unexpected EOF")
    return data[pos : pos + n], pos + n


def fields(data: bytes) -> Iterator[tuple[int, int, Value]]:
    """``(field number, wire type, raw value)`` of each field of a message:
    an int for varints, the bytes for the others."""
    pos = 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if number <= 0:
            raise ProtobufError(f"illegal tag {number} (wire type {wire})")
        value: Value
        if wire == VARINT:
            value, pos = _varint(data, pos)
        elif wire == FIXED64:
            value, pos = _take(data, pos, 8)
        elif wire == FIXED32:
            value, pos = _take(data, pos, 4)
        elif wire == BYTES:
            length, pos = _varint(data, pos)
            value, pos = _take(data, pos, length)
        else:
            raise ProtobufError(f"illegal wireType {wire} for field {number}")
        yield number, wire, value


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def scalar(type_: str, wire: int, value: Value, name: str) -> str | bytes | int | float | bool:
    """The Python value of one scalar field (``name`` is for messages)."""
    expected = _WIRE_TYPE.get(type_, VARINT)
    if wire != expected:
        raise ProtobufError(f"wrong wireType = {wire} for field {name}")
    if isinstance(value, int):
        if type_ == "bool":
            return value != 0
        if type_ in ("int32", "int64"):
            return _signed(value, 32 if type_ == "int32" else 64)
        return value & 0xFFFFFFFF if type_ == "uint32" else value
    if type_ == "string":
        return value.decode("utf-8", errors="replace")  # Go's encoding/json does the same
    if type_ == "bytes":
        return value
    return float(struct.unpack("<d" if type_ == "double" else "<f", value)[0])


def packed(type_: str, data: bytes, name: str) -> list[str | bytes | int | float | bool]:
    """The elements of a packed repeated numeric field."""
    out: list[str | bytes | int | float | bool] = []
    pos = 0
    wire = _WIRE_TYPE.get(type_, VARINT)
    while pos < len(data):
        value: Value
        if wire == VARINT:
            value, pos = _varint(data, pos)
        else:
            value, pos = _take(data, pos, 8 if wire == FIXED64 else 4)
        out.append(scalar(type_, wire, value, name))
    return out
