"""One morpc client connection: requests out, responses matched back to them by ID.

morpc is message-based, not request/response: the client gives every message an ID
(``Message.SetID``: ``RequestID``, field 1 of both ``logservice.Request`` and
``query.Request``), the server copies it into the response, and the client's read loop
hands each response to the caller waiting for that ID (matrixorigin/matrixone
``pkg/common/morpc/backend.go``: ``getFuture`` sets ``nextID()``, ``readLoop`` resolves
futures by ``GetID()``; ``pkg/logservice/service.go handleRPCRequest`` sets
``resp.RequestID = rr.RequestID``; ``pkg/common/morpc/method_based.go`` does
``resp.SetID(req.GetID())``; commit 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e). So several
callers may share a connection, and a late answer to a caller that gave up is dropped.

A connection that breaks, or sends bytes we cannot decode, fails every waiting caller
and is not used again: the stream may be out of step, and morpc closes it too.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable

from mo_operator.matrixone.rpc.errors import ConnectionLost, ProtocolError, RpcError, Unreachable
from mo_operator.matrixone.rpc.frame import (
    APPROXIMATE_HEADER,
    DEFAULT_MAX_BODY,
    FLAG_STREAMING,
    LENGTH_FIELD,
    FrameError,
    decode_frame,
    encode_frame,
    frame_size,
)
from mo_operator.matrixone.rpc.protobuf import VARINT, DecodeError, iter_fields

log = logging.getLogger(__name__)

Dialer = Callable[[str, int], Awaitable[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]
"""Opens a TCP connection to ``host``, ``port``: the one seam between the client and the network.

Production dials with ``asyncio.open_connection`` (the system's resolver, so cluster DNS).
The dev kit constructs the operator with a dialer of its own that reaches the simulated
MatrixOne's servers by the names and ports a real cluster gives; nothing else changes."""


async def open_connection(host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The production dialer: ``asyncio.open_connection``."""
    return await asyncio.open_connection(host, port)


def split_address(address: str) -> tuple[str, int]:
    """``host:port`` (``[v6]:port`` too; a ``tcp://`` prefix, which MatrixOne accepts, is dropped)."""
    text = address.removeprefix("tcp://")
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise Unreachable(f"{address!r} is not a host:port address")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, int(port)


def response_id(body: bytes) -> int:
    """The ``RequestID`` (field 1, a varint) of a response body; 0 when absent."""
    for number, wire_type, value in iter_fields(body):
        if number == 1 and wire_type == VARINT and isinstance(value, int):
            return value
    return 0


class MorpcConnection:
    """A TCP connection speaking morpc to one MatrixOne service.

    ``payload_message`` says whether the service's messages are ``morpc.PayloadMessage``
    (the log service's ``RPCRequest``: yes; the query service's ``query.Request``: no). It
    changes the frame, and the server refuses a frame that gets it wrong.
    """

    def __init__(
        self,
        address: str,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        payload_message: bool,
        max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
    ) -> None:
        self.address = address
        self.payload_message = payload_message
        self._reader = reader
        self._writer = writer
        self._max_frame = max_frame
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[bytes]] = {}
        self._write_lock = asyncio.Lock()
        self._failure: RpcError | None = None
        self._read_task = asyncio.get_running_loop().create_task(
            self._read_loop(), name=f"morpc-read {address}"
        )

    @classmethod
    async def open(
        cls,
        address: str,
        *,
        payload_message: bool,
        connect_timeout: float,
        max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
        dialer: Dialer = open_connection,
    ) -> MorpcConnection:
        """Connect to ``address`` with ``dialer``; raises ``Unreachable`` when that fails within
        ``connect_timeout`` (refused, a name that does not resolve, no answer)."""
        host, port = split_address(address)
        try:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await dialer(host, port)
        except TimeoutError as e:
            raise Unreachable(f"cannot connect to {address}: timed out after {connect_timeout:g}s") from e
        except OSError as e:
            raise Unreachable(f"cannot connect to {address}: {e.strerror or e}") from e
        return cls(address, reader, writer, payload_message=payload_message, max_frame=max_frame)

    @property
    def closed(self) -> bool:
        return self._failure is not None

    async def call(self, encode: Callable[[int], bytes], deadline: float) -> bytes:
        """Send the message ``encode(request_id)`` and return the body of its response.

        ``deadline`` (event-loop time) bounds the wait and goes to the server in the
        frame's deadline header, as Go's context deadline does. Raises ``TimeoutError``
        when it passes, ``ConnectionLost``/``ProtocolError`` when the connection fails.
        """
        if self._failure is not None:
            raise type(self._failure)(str(self._failure))
        loop = asyncio.get_running_loop()
        request_id = next(self._ids)
        remaining = deadline - loop.time()
        if remaining <= 0:
            raise TimeoutError
        frame = encode_frame(
            encode(request_id),
            timeout_ns=max(1, int(remaining * 1e9)),
            payload=b"" if self.payload_message else None,
        )
        future: asyncio.Future[bytes] = loop.create_future()
        self._pending[request_id] = future
        try:
            async with asyncio.timeout_at(deadline):
                async with self._write_lock:
                    self._writer.write(frame)
                    await self._writer.drain()
                return await future
        except (ConnectionError, OSError) as e:
            self._fail(ConnectionLost(f"connection to {self.address} broke: {e}"))
            raise ConnectionLost(f"connection to {self.address} broke: {e}") from e
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: no "never retrieved" warning for an abandoned call

    async def _read_loop(self) -> None:
        failure: RpcError
        try:
            while True:
                try:
                    prefix = await self._reader.readexactly(LENGTH_FIELD)
                except asyncio.IncompleteReadError as e:
                    where = "mid-frame" if e.partial else "between frames"
                    failure = ConnectionLost(f"{self.address} closed the connection {where}")
                    break
                size = frame_size(prefix, self._max_frame)
                try:
                    data = await self._reader.readexactly(size)
                except asyncio.IncompleteReadError as e:
                    failure = ConnectionLost(
                        f"{self.address} closed the connection mid-frame ({len(e.partial)} of {size} bytes)"
                    )
                    break
                frame = decode_frame(data)
                if frame.internal or frame.flag & FLAG_STREAMING:
                    continue  # pings/pongs and stream messages: we send neither, so none are ours
                future = self._pending.get(response_id(frame.body))
                if future is not None and not future.done():
                    future.set_result(frame.body)
        except (FrameError, DecodeError) as e:
            failure = ProtocolError(f"{self.address} sent an invalid frame: {e}")
        except (ConnectionError, OSError) as e:
            failure = ConnectionLost(f"connection to {self.address} broke: {e}")
        except asyncio.CancelledError:
            failure = ConnectionLost(f"connection to {self.address} was closed")
            self._fail(failure)
            raise
        self._fail(failure)

    def _fail(self, failure: RpcError) -> None:
        """Fail every waiting caller with ``failure`` and close the socket (idempotent)."""
        if self._failure is None:
            self._failure = failure
            log.debug("morpc connection to %s ends: %s", self.address, failure)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(type(failure)(str(failure)))
        self._pending.clear()
        self._writer.close()

    def abort(self) -> None:
        """Close now, without waiting (safe in a cancelled task): waiting callers get ConnectionLost."""
        self._fail(ConnectionLost(f"connection to {self.address} was closed"))
        self._read_task.cancel()

    async def close(self) -> None:
        """Close and wait until the socket and the read loop are done."""
        self.abort()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            await self._read_task
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
