"""MatrixOne's ``morpc`` frames: what goes on the TCP stream around each protobuf message.

Source: matrixorigin/matrixone ``pkg/common/morpc/codec.go`` (``baseCodec.Encode`` and
``Decode``), ``codec_header.go`` (the two header codecs every codec installs),
``internal.go`` (ping/pong), at commit 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e; identical
in the parts we use at fa8af5c4dad4d7bc3c5ab24776ae60d0d0c418f0 (the MatrixOne the Go
operator builds against) and unchanged since 2023 but for stricter bounds checks. Integers
are big-endian (goetty ``buf.Int2BytesTo``/``Int64ToBytesTo``/``Byte2Uint64``,
matrixorigin/goetty ``buf/convert.go``). A frame is::

    total size    4 bytes   size of everything after this field (goetty ``length`` codec,
                            offset 0, no adjustment; must be > 0)
    flag          1 byte    bit 0 payload, 1 checksum, 2 custom headers, 3 compressed,
                            4 streaming, 5 ping, 6 pong
    checksum      8 bytes   if flag bit 1: XXH64 (seed 0) of body + payload
    payload size  4 bytes   if flag bit 0: set for every ``morpc.PayloadMessage``
                            (logservice ``RPCRequest``/``RPCResponse``), even when 0
    deadline      8 bytes   if flag bit 2: the sender's remaining timeout, int64 ns
    trace         1 + n     if flag bit 2: n, then a ``trace.SpanContext`` (n = 24:
                            16-byte trace ID, 8-byte span ID; zeros when not tracing)
    stream seq    4 bytes   if flag bit 4
    body          the protobuf message (may be empty only when there is no payload)
    payload       payload-size bytes

The order above is the code's, not the comment's in ``NewMessageCodec`` (which lists the
stream sequence before the custom headers). Every codec installs the deadline and trace
header codecs, so flag bit 2 is always set and the server *requires* the 8 + 1 + n bytes;
both the log service (``pkg/logservice/service.go``, ``client.go getRPCClient``) and the
query service (``morpc.Config.NewClient``) enable checksums. Compression (LZ4, flag bit 3)
is off unless MatrixOne's ``rpc.enable-compress`` is set; a compressed frame is refused
here with a clear error rather than misread.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from xxhash import xxh64_intdigest as xxh64

FLAG_PAYLOAD = 0x01
FLAG_CHECKSUM = 0x02
FLAG_CUSTOM_HEADER = 0x04
FLAG_COMPRESS = 0x08
FLAG_STREAMING = 0x10
FLAG_PING = 0x20
FLAG_PONG = 0x40

LENGTH_FIELD = 4
SPAN_CONTEXT_SIZE = 24
DEFAULT_MAX_BODY = 100 * 1024 * 1024
"""morpc's ``defaultMaxBodyMessageSize`` and the log service's ``defaultMaxMessageSize``."""
APPROXIMATE_HEADER = 10 * 1024 * 1024
"""morpc allows a frame of max body + ``approximateHeaderSize``."""


class FrameError(ValueError):
    """Bytes that are not a valid morpc frame."""


@dataclass(frozen=True)
class Frame:
    """One decoded frame (everything after the total-size field)."""

    flag: int
    body: bytes
    payload: bytes = b""
    timeout_ns: int | None = None
    """The deadline header: how long the sender was prepared to wait."""
    span_context: bytes = b""
    stream_sequence: int | None = None

    @property
    def internal(self) -> bool:
        """A ping or pong: morpc's own keep-alive, not a message for the application."""
        return bool(self.flag & (FLAG_PING | FLAG_PONG))


def encode_frame(
    body: bytes,
    *,
    timeout_ns: int,
    payload: bytes | None = None,
    checksum: bool = True,
    span_context: bytes = bytes(SPAN_CONTEXT_SIZE),
) -> bytes:
    """A whole frame, total-size prefix included, for a message with protobuf ``body``.

    ``payload`` is None for a message that is not a ``morpc.PayloadMessage`` (query
    service messages) and ``b""`` for one without payload bytes (every logservice request
    we send): the flag and the 4-byte size are written for any PayloadMessage.
    ``timeout_ns`` fills the deadline header; MatrixOne cancels the request's context when
    it runs out, so it must be the caller's remaining time and positive.
    """
    if timeout_ns <= 0:
        raise ValueError("a morpc request needs a positive timeout")
    if len(span_context) > 0xFF:
        raise ValueError("span context longer than 255 bytes")
    flag = FLAG_CUSTOM_HEADER
    header = bytearray()
    if checksum:
        flag |= FLAG_CHECKSUM
        header += struct.pack(">Q", xxh64(body + (payload or b"")))
    if payload is not None:
        flag |= FLAG_PAYLOAD
        header += struct.pack(">I", len(payload))
    header += struct.pack(">q", timeout_ns)
    header += bytes([len(span_context)]) + span_context
    rest = bytes([flag]) + bytes(header) + body + (payload or b"")
    return struct.pack(">I", len(rest)) + rest


def frame_size(prefix: bytes, max_frame: int) -> int:
    """The size announced by a 4-byte total-size field, checked like goetty's length codec."""
    if len(prefix) != LENGTH_FIELD:
        raise FrameError(f"a frame starts with {LENGTH_FIELD} size bytes, got {len(prefix)}")
    size = int.from_bytes(prefix, "big")
    if size == 0:
        raise FrameError(f"invalid frame size {size}")
    if size > max_frame:
        raise FrameError(f"frame of {size} bytes is larger than the maximum {max_frame}")
    return size


def _need(data: bytes, offset: int, size: int, what: str) -> None:
    if size > len(data) - offset:
        raise FrameError(f"truncated {what} at offset {offset}: need {size} bytes, frame has {len(data)}")


def decode_frame(data: bytes) -> Frame:
    """Decode the bytes after a frame's total-size field, as ``baseCodec.Decode`` does."""
    _need(data, 0, 1, "flag")
    flag = data[0]
    offset = 1
    if flag & FLAG_COMPRESS:
        raise FrameError(
            "the peer sent an LZ4-compressed frame; compressed morpc is not supported "
            "(MatrixOne's rpc.enable-compress must stay off)"
        )
    expected_checksum = None
    if flag & FLAG_CHECKSUM:
        _need(data, offset, 8, "checksum")
        (expected_checksum,) = struct.unpack_from(">Q", data, offset)
        offset += 8
    payload_size = 0
    if flag & FLAG_PAYLOAD:
        _need(data, offset, 4, "payload size")
        (payload_size,) = struct.unpack_from(">I", data, offset)
        offset += 4
    timeout_ns = None
    span_context = b""
    if flag & FLAG_CUSTOM_HEADER:
        _need(data, offset, 8, "deadline header")
        (timeout_ns,) = struct.unpack_from(">q", data, offset)
        offset += 8
        _need(data, offset, 1, "trace header")
        span_size = data[offset]
        _need(data, offset + 1, span_size, "trace header")
        span_context = bytes(data[offset + 1 : offset + 1 + span_size])
        offset += 1 + span_size
    stream_sequence = None
    if flag & FLAG_STREAMING:
        _need(data, offset, 4, "stream sequence")
        (stream_sequence,) = struct.unpack_from(">I", data, offset)
        offset += 4
    internal = bool(flag & (FLAG_PING | FLAG_PONG))
    if offset == len(data) and payload_size == 0:
        if internal:
            raise FrameError("ping/pong frame without its 8-byte message ID")
        body, payload = b"", b""
    else:
        # codec.go readMessage: the body may not be empty when anything follows the headers
        if offset >= len(data) or payload_size >= len(data) - offset:
            raise FrameError(
                f"invalid body: headers end at {offset}, frame has {len(data)} bytes, payload {payload_size}"
            )
        body = bytes(data[offset : len(data) - payload_size])
        payload = bytes(data[len(data) - payload_size :])
        if internal and len(body) < 8:
            raise FrameError("ping/pong frame without its 8-byte message ID")
    if expected_checksum is not None:
        actual = xxh64(body + payload)
        if actual != expected_checksum:
            raise FrameError(f"checksum mismatch: frame says {expected_checksum:#x}, content is {actual:#x}")
    return Frame(flag, body, payload, timeout_ns, span_context, stream_sequence)
