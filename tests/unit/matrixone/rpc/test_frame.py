"""morpc frames built byte by byte from ``baseCodec.Encode``/``Decode``
(matrixone ``pkg/common/morpc/codec.go``, ``codec_header.go``, ``internal.go``), and the
malformed frames upstream's own codec tests reject (``codec_test.go``)."""

from __future__ import annotations

import contextlib
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xxhash import xxh64_intdigest as xxh64

from mo_operator.matrixone.rpc.frame import (
    FLAG_CHECKSUM,
    FLAG_COMPRESS,
    FLAG_CUSTOM_HEADER,
    FLAG_PAYLOAD,
    FLAG_PING,
    FLAG_PONG,
    FLAG_STREAMING,
    Frame,
    FrameError,
    decode_frame,
    encode_frame,
    frame_size,
)

TEN_SECONDS = "00 00 00 02 54 0b e4 00"  # int64 10_000_000_000 ns, big-endian
NO_TRACE = "18" + " 00" * 24  # SpanContext size 24, then 16-byte trace ID and 8-byte span ID, zero


def h(text: str) -> bytes:
    return bytes.fromhex(text)


def be64(value: int) -> str:
    return struct.pack(">Q", value).hex(" ")


def test_xxh64_is_the_reference_function() -> None:
    # XXH64 test vectors (seed 0), so the checksums below are the ones Go's cespare/xxhash computes
    assert xxh64(b"") == 0xEF46DB3751D8E999
    assert xxh64(b"a") == 0xD24EC4F1A98C6E5B
    assert xxh64(b"abc") == 0x44BC2CF5AD770999


def test_flag_bits() -> None:
    # codec.go: flagHashPayload byte = 1 << iota, then checksum, custom header, compress, streaming, ping, pong
    assert [1 << i for i in range(7)] == [
        FLAG_PAYLOAD,
        FLAG_CHECKSUM,
        FLAG_CUSTOM_HEADER,
        FLAG_COMPRESS,
        FLAG_STREAMING,
        FLAG_PING,
        FLAG_PONG,
    ]


def test_logservice_request_frame() -> None:
    body = h("08 01 10 0a 1a 00")  # Request{RequestID 1, Method CHECK_HAKEEPER}
    frame = encode_frame(body, timeout_ns=10_000_000_000, payload=b"")
    expected = h(
        "00 00 00 34"  # total size 52 = 1 + 8 + 4 + 8 + 25 + 6
        " 07"  # payload | checksum | custom header
        f" {be64(xxh64(body))}"  # checksum of body + (empty) payload
        " 00 00 00 00"  # payload size: RPCRequest is a PayloadMessage, so always written
        f" {TEN_SECONDS} {NO_TRACE}"  # the deadline and trace header codecs, in that order
        " 08 01 10 0a 1a 00"
    )
    assert frame == expected
    assert decode_frame(frame[4:]) == Frame(7, body, b"", 10_000_000_000, bytes(24), None)


def test_query_request_frame_has_no_payload_size() -> None:
    body = h("08 01 10 01 22 02 10 01 da 01 00")
    frame = encode_frame(body, timeout_ns=10_000_000_000)
    # size 53 = 1 + 8 + 8 + 25 + 11; flag: checksum | custom header, no payload bit (not a PayloadMessage)
    expected = h(
        f"00 00 00 35 06 {be64(xxh64(body))} {TEN_SECONDS} {NO_TRACE} 08 01 10 01 22 02 10 01 da 01 00"
    )
    assert frame == expected


def test_frame_without_checksum() -> None:
    frame = encode_frame(b"\x08\x01", timeout_ns=1, checksum=False)
    assert frame == h(f"00 00 00 24 04 00 00 00 00 00 00 00 01 {NO_TRACE} 08 01")


def test_response_with_payload_as_go_writes_it() -> None:
    # RPCResponse with records: the payload follows the body; the checksum covers both
    body, payload = h("08 09 10 02"), b"records"
    rest = (
        h("07")
        + struct.pack(">Q", xxh64(body + payload))
        + struct.pack(">I", len(payload))
        + h(f"{TEN_SECONDS} {NO_TRACE}")
        + body
        + payload
    )
    frame = decode_frame(rest)
    assert (frame.body, frame.payload, frame.timeout_ns) == (body, payload, 10_000_000_000)
    assert (
        encode_frame(body, timeout_ns=10_000_000_000, payload=payload) == struct.pack(">I", len(rest)) + rest
    )


def test_stream_sequence_comes_after_the_custom_headers() -> None:
    # codec.go writes 2.4 custom headers, then 2.5 the stream sequence (its doc comment says otherwise)
    rest = h(f"14 {TEN_SECONDS} 18 {'01 ' * 24} 00 00 00 05 08 01")
    frame = decode_frame(rest)
    assert frame.stream_sequence == 5
    assert frame.span_context == b"\x01" * 24
    assert frame.body == h("08 01")


def test_short_trace_header_and_empty_body() -> None:
    # a span context of another size is read by its length byte; no body at all is allowed
    frame = decode_frame(h(f"04 {TEN_SECONDS} 02 aa bb"))
    assert (frame.span_context, frame.body, frame.payload) == (h("aa bb"), b"", b"")


def test_ping_and_pong() -> None:
    ping = decode_frame(h("20 00 00 00 00 00 00 00 07"))  # flagOnlyMessage: 8-byte ID
    assert ping.internal and ping.body == h("00 00 00 00 00 00 00 07")
    pong = decode_frame(h(f"44 {TEN_SECONDS} {NO_TRACE} 00 00 00 00 00 00 00 07"))
    assert pong.internal


@pytest.mark.parametrize(
    ("rest", "message"),
    [
        ("", "truncated flag"),
        ("02 00 00 00", "truncated checksum"),
        ("01 00 00", "truncated payload size"),
        ("04 00 00 00 00", "truncated deadline"),
        ("04 00 00 00 00 00 00 00 01", "truncated trace"),
        # TestCodecRejectsTruncatedTraceHeader: the trace header declares 4 bytes, 3 follow
        ("04 00 00 00 00 00 00 00 00 04 00 00 00", "truncated trace"),
        ("10", "truncated stream sequence"),
        ("08 00 00 00 00 00 00 00 00", "compressed"),  # TestCodecRejectsCompressedMessageWhenDisabled
        ("01 00 00 00 01 08", "invalid body"),  # the payload would leave no body
        ("01 00 00 00 05 08 01", "invalid body"),  # payload larger than what is left
        ("01 ff ff ff ff 08 01", "invalid body"),
        ("20", "ping/pong"),  # TestCodecRejectsTruncatedInternalMessageBody
        ("40 00 00 00", "ping/pong"),
        ("02 00 00 00 00 00 00 00 00 08 01", "checksum mismatch"),
    ],
)
def test_malformed_frames(rest: str, message: str) -> None:
    with pytest.raises(FrameError, match=message):
        decode_frame(h(rest))


def test_checksum_mismatch_on_a_payload_byte() -> None:
    frame = bytearray(encode_frame(b"\x08\x01", timeout_ns=5, payload=b"xyz"))
    frame[-1] ^= 1
    with pytest.raises(FrameError, match="checksum mismatch"):
        decode_frame(bytes(frame[4:]))


def test_frame_size() -> None:
    assert frame_size(h("00 00 00 34"), 100) == 52
    with pytest.raises(FrameError, match="invalid frame size 0"):
        frame_size(h("00 00 00 00"), 100)
    with pytest.raises(FrameError, match="larger than the maximum"):
        frame_size(h("ff ff ff ff"), 100)  # goetty reads it as 4294967295, not -1
    with pytest.raises(FrameError, match="size bytes"):
        frame_size(h("00 01"), 100)


def test_encode_refuses_what_morpc_cannot_send() -> None:
    with pytest.raises(ValueError, match="positive timeout"):
        encode_frame(b"\x08\x01", timeout_ns=0)
    with pytest.raises(ValueError, match="255"):
        encode_frame(b"\x08\x01", timeout_ns=1, span_context=bytes(256))


@given(
    body=st.binary(min_size=1, max_size=64),
    payload=st.one_of(st.none(), st.binary(max_size=32)),
    timeout_ns=st.integers(min_value=1, max_value=2**63 - 1),
    checksum=st.booleans(),
)
def test_round_trip(body: bytes, payload: bytes | None, timeout_ns: int, checksum: bool) -> None:
    frame = encode_frame(body, timeout_ns=timeout_ns, payload=payload, checksum=checksum)
    assert frame_size(frame[:4], 1 << 20) == len(frame) - 4
    decoded = decode_frame(frame[4:])
    assert (decoded.body, decoded.payload, decoded.timeout_ns) == (body, payload or b"", timeout_ns)


@settings(max_examples=500)
@given(st.binary(max_size=80))
def test_garbage_is_decoded_or_refused_never_crashes(data: bytes) -> None:
    with contextlib.suppress(FrameError):
        decode_frame(data)
