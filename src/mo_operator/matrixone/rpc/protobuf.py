"""The protobuf wire format, just as much of it as MatrixOne's admin messages use.

MatrixOne's messages are gogo-protobuf (proto3) structs. We need a handful of them, so a
small codec beats a new runtime dependency: varints, length-delimited fields (strings,
bytes, nested messages, map entries) and skipping of every field we do not know, which
is what keeps us compatible with newer MatrixOne versions that add fields.

Wire format: https://protobuf.dev/programming-guides/encoding/ (tags are
``field_number << 3 | wire_type``; varints are little-endian base-128, at most 10 bytes;
negative ``int64`` values are sent as their 64-bit two's complement).

Decoding never trusts its input: a truncated varint or field, an over-long varint, a
field number 0, a group or an unknown wire type raises ``DecodeError`` (a ``ValueError``);
every step consumes at least one byte, so malformed input cannot make it loop.
"""

from __future__ import annotations

from collections.abc import Iterator

VARINT = 0
I64 = 1
LEN = 2
START_GROUP = 3
END_GROUP = 4
I32 = 5

_U64 = (1 << 64) - 1
_MAX_FIELD = (1 << 29) - 1

FieldValue = int | bytes
"""A decoded field: an ``int`` for VARINT, I64 and I32 fields, ``bytes`` for LEN fields."""


class DecodeError(ValueError):
    """The bytes are not a valid protobuf message (or not the message we expected)."""


def encode_varint(value: int) -> bytes:
    """``value`` as a varint; negative values as 64-bit two's complement (proto ``int64``)."""
    if value < 0:
        value &= _U64
    if value > _U64:
        raise ValueError(f"{value} does not fit in 64 bits")
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def decode_varint(data: bytes, pos: int) -> tuple[int, int]:
    """The varint at ``data[pos:]`` and the position after it (an unsigned 64-bit value)."""
    result = 0
    shift = 0
    for i in range(pos, min(pos + 10, len(data))):
        byte = data[i]
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            if result > _U64:
                raise DecodeError(f"varint at offset {pos} overflows 64 bits")
            return result, i + 1
        shift += 7
    if pos + 10 <= len(data):
        raise DecodeError(f"varint at offset {pos} is longer than 10 bytes")
    raise DecodeError(f"truncated varint at offset {pos}")


def iter_fields(data: bytes) -> Iterator[tuple[int, int, FieldValue]]:
    """Each field of a message as ``(field number, wire type, value)``, in wire order."""
    pos = 0
    end = len(data)
    while pos < end:
        key, pos = decode_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0 or number > _MAX_FIELD:
            raise DecodeError(f"invalid field number {number}")
        if wire_type == VARINT:
            value, pos = decode_varint(data, pos)
            yield number, wire_type, value
        elif wire_type == LEN:
            length, pos = decode_varint(data, pos)
            if length > end - pos:
                raise DecodeError(f"field {number}: length {length} runs past the end ({end - pos} left)")
            yield number, wire_type, data[pos : pos + length]
            pos += length
        elif wire_type in (I64, I32):
            size = 8 if wire_type == I64 else 4
            if size > end - pos:
                raise DecodeError(f"field {number}: truncated fixed{size * 8}")
            yield number, wire_type, int.from_bytes(data[pos : pos + size], "little")
            pos += size
        else:
            raise DecodeError(f"field {number}: unsupported wire type {wire_type}")


def _want(number: int, wire_type: int, expected: int) -> None:
    if wire_type != expected:
        raise DecodeError(f"field {number}: wire type {wire_type}, expected {expected}")


def as_uint(number: int, wire_type: int, value: FieldValue) -> int:
    """A ``uint64``/``uint32``/enum field."""
    _want(number, wire_type, VARINT)
    assert isinstance(value, int)
    return value


def as_int64(number: int, wire_type: int, value: FieldValue) -> int:
    """An ``int64`` field (two's complement on the wire)."""
    raw = as_uint(number, wire_type, value)
    return raw - (1 << 64) if raw >= 1 << 63 else raw


def as_bool(number: int, wire_type: int, value: FieldValue) -> bool:
    return as_uint(number, wire_type, value) != 0


def as_bytes(number: int, wire_type: int, value: FieldValue) -> bytes:
    """A ``bytes`` field or the body of a nested message."""
    _want(number, wire_type, LEN)
    assert isinstance(value, bytes)
    return value


def as_str(number: int, wire_type: int, value: FieldValue) -> str:
    """A ``string`` field. gogo does not check UTF-8, so neither do we: bad bytes are replaced."""
    return as_bytes(number, wire_type, value).decode("utf-8", errors="replace")


class Writer:
    """Builds a message field by field; proto3 rules: zero scalars are left out."""

    def __init__(self) -> None:
        self._out = bytearray()

    def _tag(self, number: int, wire_type: int) -> None:
        self._out += encode_varint(number << 3 | wire_type)

    def uint(self, number: int, value: int) -> Writer:
        """A ``uint64``/``uint32``/``int64``/enum/``bool`` field (nothing when zero)."""
        if value:
            self._tag(number, VARINT)
            self._out += encode_varint(int(value))
        return self

    def bytes_field(self, number: int, value: bytes, *, always: bool = False) -> Writer:
        """A ``bytes`` field (nothing when empty, unless ``always``: map keys are always sent)."""
        if value or always:
            self._tag(number, LEN)
            self._out += encode_varint(len(value))
            self._out += value
        return self

    def string(self, number: int, value: str, *, always: bool = False) -> Writer:
        """A ``string`` field (nothing when empty, unless ``always``)."""
        return self.bytes_field(number, value.encode(), always=always)

    def message(self, number: int, body: bytes | None) -> Writer:
        """A nested message: ``None`` leaves it out, ``b""`` sends a present empty message.

        Presence matters: MatrixOne handlers test ``req.X != nil`` (a gogo pointer field),
        and gogo always writes non-nullable message fields, even empty.
        """
        if body is not None:
            self._tag(number, LEN)
            self._out += encode_varint(len(body))
            self._out += body
        return self

    def getvalue(self) -> bytes:
        return bytes(self._out)
