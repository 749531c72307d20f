"""The protobuf wire codec: varints and fields against bytes worked out from the encoding
spec (https://protobuf.dev/programming-guides/encoding/), and malformed input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.matrixone.rpc.protobuf import (
    I32,
    I64,
    LEN,
    VARINT,
    DecodeError,
    Writer,
    as_bool,
    as_int64,
    as_str,
    as_uint,
    decode_varint,
    encode_varint,
    iter_fields,
)


@pytest.mark.parametrize(
    ("value", "wire"),
    [
        (0, "00"),
        (1, "01"),
        (127, "7f"),
        (128, "80 01"),
        (150, "96 01"),  # the spec's own example
        (300, "ac 02"),
        (2**63, "80 80 80 80 80 80 80 80 80 01"),
        (2**64 - 1, "ff ff ff ff ff ff ff ff ff 01"),
        (-1, "ff ff ff ff ff ff ff ff ff 01"),  # int64 -1: two's complement, 10 bytes
        (-2, "fe ff ff ff ff ff ff ff ff 01"),
    ],
)
def test_varint_known_bytes(value: int, wire: str) -> None:
    assert encode_varint(value).hex(" ") == wire
    decoded, end = decode_varint(bytes.fromhex(wire), 0)
    assert decoded == value & (2**64 - 1)
    assert end == len(bytes.fromhex(wire))


def test_varint_too_large_to_encode() -> None:
    with pytest.raises(ValueError):
        encode_varint(2**64)


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ("", "truncated"),
        ("80", "truncated"),
        ("ff ff ff", "truncated"),
        ("ff ff ff ff ff ff ff ff ff ff 01", "longer than 10 bytes"),
        ("ff ff ff ff ff ff ff ff ff 02", "overflows"),
    ],
)
def test_malformed_varint(wire: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        decode_varint(bytes.fromhex(wire), 0)


def test_fields_of_a_known_message() -> None:
    # 1: varint 150; 2: "testing" (the spec's examples); 3: fixed64 1; 4: fixed32 2; 5: an empty message
    data = bytes.fromhex(
        "08 96 01 12 07 74 65 73 74 69 6e 67 19 01 00 00 00 00 00 00 00 25 02 00 00 00 2a 00"
    )
    assert list(iter_fields(data)) == [
        (1, VARINT, 150),
        (2, LEN, b"testing"),
        (3, I64, 1),
        (4, I32, 2),
        (5, LEN, b""),
    ]


@pytest.mark.parametrize(
    ("wire", "message"),
    [
        ("00 01", "invalid field number 0"),
        ("0b", "unsupported wire type 3"),  # start group
        ("0c", "unsupported wire type 4"),  # end group
        ("0e 00", "unsupported wire type 6"),
        ("0a 05 61 62", "runs past the end"),
        ("0a", "truncated varint"),
        ("08", "truncated varint"),
        ("09 01 02", "truncated fixed64"),
        ("0d 01", "truncated fixed32"),
        ("0a ff ff ff ff 0f", "runs past the end"),  # a 4 GiB length must not allocate anything
    ],
)
def test_malformed_fields(wire: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        list(iter_fields(bytes.fromhex(wire)))


def test_typed_readers_check_the_wire_type() -> None:
    assert as_uint(1, VARINT, 5) == 5
    assert as_int64(1, VARINT, 2**64 - 3) == -3
    assert as_bool(1, VARINT, 1) is True
    assert as_str(1, LEN, "é".encode()) == "é"
    assert as_str(1, LEN, b"\xff") == "\ufffd"  # gogo does not validate UTF-8: neither do we
    with pytest.raises(DecodeError, match="wire type 2, expected 0"):
        as_uint(1, LEN, b"x")
    with pytest.raises(DecodeError, match="wire type 0, expected 2"):
        as_str(1, VARINT, 3)


def test_writer_leaves_out_zero_values_but_keeps_present_messages() -> None:
    w = Writer().uint(1, 0).string(2, "").bytes_field(3, b"").message(4, None)
    assert w.getvalue() == b""
    w = Writer().uint(1, 1).string(2, "a").message(4, b"").string(5, "", always=True)
    assert w.getvalue().hex(" ") == "08 01 12 01 61 22 00 2a 00"
    assert Writer().uint(1, -1).getvalue().hex(" ") == "08 ff ff ff ff ff ff ff ff ff 01"
    # field numbers above 15 take a two-byte tag: 27 << 3 | 2 = 218
    assert Writer().message(27, b"").getvalue().hex(" ") == "da 01 00"


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_varint_round_trip(value: int) -> None:
    assert decode_varint(encode_varint(value), 0) == (value, len(encode_varint(value)))


@given(
    st.lists(
        st.tuples(
            st.integers(min_value=1, max_value=2**29 - 1),
            st.one_of(st.integers(min_value=0, max_value=2**64 - 1), st.binary(max_size=40)),
        ),
        max_size=20,
    )
)
def test_fields_round_trip(items: list[tuple[int, int | bytes]]) -> None:
    w = Writer()
    expected = []
    for number, value in items:
        if isinstance(value, int):
            w.uint(number, value)
            if value:
                expected.append((number, VARINT, value))
        else:
            w.message(number, value)
            expected.append((number, LEN, value))
    assert list(iter_fields(w.getvalue())) == expected


@settings(max_examples=300)
@given(st.binary(max_size=64))
def test_garbage_is_decoded_or_refused_never_crashes(data: bytes) -> None:
    try:
        for _ in iter_fields(data):
            pass
    except DecodeError:
        pass
