"""One morpc server of the simulated MatrixOne: a loopback TCP listener that reads
MatrixOne's frames, checks them as morpc's server codec does, and answers through a
``Service`` (a log store, a CN query service, a TN lock service).

What it copies from matrixone 7c27538f ``pkg/common/morpc`` (``codec.go``, ``server.go``):
a frame the codec cannot decode closes the connection; client frames carry a checksum,
the deadline and trace headers, and the payload flag exactly when the message type is a
``PayloadMessage``; answers are written on the request's connection, each matched to its
request by ID, in whatever order they are ready; the answer carries the checksum and
the request's deadline header back.

``Faults`` (shared by every server of one simulated MatrixOne) make a server misbehave
on the requests a rule matches: never answer (``stall``), answer bytes that are not a
frame (``garbage``), answer MatrixOne's ``ErrNotSupported`` (``not_supported``), break off
mid-frame (``half``), flip a byte so the checksum fails (``corrupt``) or set the LZ4
flag (``compressed``); ``delay`` holds answers back. Refusing connections is the
network's to do (``network.py`` closes the listeners).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.rpc.frame import (
    FLAG_CHECKSUM,
    FLAG_COMPRESS,
    FLAG_CUSTOM_HEADER,
    FLAG_PAYLOAD,
    Frame,
    FrameError,
    decode_frame,
    encode_frame,
    frame_size,
)
from mo_operator.matrixone.rpc.protobuf import DecodeError

log = logging.getLogger(__name__)

FAULTS = ("refuse", "stall", "garbage", "not_supported", "half", "corrupt", "compressed")
MAX_FRAME = 1 << 24
"""The largest request frame the simulated servers read (the operator's are a few hundred bytes)."""
JOURNAL_SIZE = 100_000


@dataclass(frozen=True)
class Call:
    """One request a simulated MatrixOne server read, for tests to check what was asked."""

    service: str
    """``log`` (a log store, HAKeeper calls included), ``query`` (a CN) or ``lock`` (a TN)."""
    address: str
    """The address the server stands for (as MatrixOne advertises it)."""
    method: str
    """MatrixOne's name of the method: ``GET_CLUSTER_DETAILS``, ``ShowProcessList``, ..."""
    uuid: str = ""
    """The CN the request is about, if any."""
    work_state: WorkState | None = None
    """The work state a ``PATCH_CN_STORE`` or ``UPDATE_CN_WORK_STATE`` asks for."""
    request: Any = field(default=None, compare=False)
    """The decoded request."""


class Service(Protocol):
    """What a server answers: decodes a request body, answers it, or refuses it as unknown."""

    kind: str
    payload_message: bool
    address: str

    def parse(self, body: bytes) -> tuple[Any, Call]:
        """The request in ``body`` and what it asks; raises ``DecodeError``."""
        ...

    def answer(self, request: Any) -> bytes:
        """The body of the answer to ``request`` (applying what it asks)."""
        ...

    def not_supported(self, request: Any) -> bytes:
        """The body of MatrixOne's ``ErrNotSupported`` answer to ``request``."""
        ...


Matcher = Callable[[Call], bool]


@dataclass
class Faults:
    """Rules that make the servers misbehave; the first rule matching a request applies."""

    rules: list[tuple[str, Matcher]] = field(default_factory=list)
    delay: Callable[[Call], float] = lambda call: 0.0
    on_change: Callable[[], None] = lambda: None
    """Told when the rules change (the network opens or closes its listeners on ``refuse``)."""

    def set(self, kind: str, matches: Matcher | None = None) -> None:
        """From now on, ``kind`` for every request ``matches`` picks (all by default)."""
        if kind not in FAULTS:
            raise ValueError(f"unknown fault {kind!r}; one of {', '.join(FAULTS)}")
        self.rules.append((kind, matches or (lambda call: True)))
        self.on_change()

    def clear(self) -> None:
        """Every server answers properly again."""
        self.rules.clear()
        self.delay = lambda call: 0.0
        self.on_change()

    @property
    def refusing(self) -> bool:
        return any(kind == "refuse" for kind, _ in self.rules)

    def fault(self, call: Call) -> str | None:
        return next((kind for kind, matches in self.rules if kind != "refuse" and matches(call)), None)


class Journal:
    """Every request the servers read, newest last (bounded: a long benchmark keeps the last ones)."""

    def __init__(self, size: int = JOURNAL_SIZE) -> None:
        self.calls: deque[Call] = deque(maxlen=size)
        self.frame_errors: list[str] = []
        """Frames from a client that morpc's server codec would refuse (the connection is closed)."""

    def __iter__(self) -> Any:
        return iter(list(self.calls))

    def methods(self, service: str | None = None, address: str | None = None) -> list[str]:
        return [
            c.method
            for c in self.calls
            if (service is None or c.service == service) and (address is None or c.address == address)
        ]


class MorpcServer:
    """A morpc listener on 127.0.0.1 answering through ``service``."""

    def __init__(self, service: Service, faults: Faults, journal: Journal) -> None:
        self.service = service
        self.faults = faults
        self.journal = journal
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> MorpcServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def close(self) -> None:
        """Stop listening and drop every connection, as a process that stops does."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()

    async def stop(self) -> None:
        self.close()
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    def check(self, frame: Frame) -> None:
        """What morpc's server codec requires of a client frame."""
        if not frame.flag & FLAG_CHECKSUM:
            raise FrameError("client frames carry a checksum")
        if not frame.flag & FLAG_CUSTOM_HEADER or not frame.timeout_ns or frame.timeout_ns <= 0:
            raise FrameError("client frames carry a positive deadline")
        if len(frame.span_context) != 24:
            raise FrameError("trace.SpanContext is 24 bytes")
        if bool(frame.flag & FLAG_PAYLOAD) != self.service.payload_message:
            raise FrameError(f"payload flag {bool(frame.flag & FLAG_PAYLOAD)} for this message type")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        try:
            while True:
                prefix = await reader.readexactly(4)
                frame = decode_frame(await reader.readexactly(frame_size(prefix, MAX_FRAME)))
                if frame.internal:
                    continue  # the operator sends no pings; a peer's keep-alive needs no answer here
                self.check(frame)
                request, call = self.service.parse(frame.body)
                self.journal.calls.append(call)
                fault = self.faults.fault(call)
                if fault == "stall":
                    continue
                if fault == "not_supported":
                    body = self.service.not_supported(request)
                elif fault == "garbage":
                    body = b""
                else:
                    body = self.service.answer(request)
                task = asyncio.create_task(self._answer(writer, frame, body, fault, self.faults.delay(call)))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        except (FrameError, DecodeError, ValueError) as e:
            self.journal.frame_errors.append(f"{self.service.address}: {e}")
            log.warning("simulated MatrixOne at %s refused a frame: %s", self.service.address, e)
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(
        self, writer: asyncio.StreamWriter, frame: Frame, body: bytes, fault: str | None, delay: float
    ) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        if fault == "garbage":
            data = bytearray(b"\x00\x00\x00\x10" + bytes([FLAG_CHECKSUM]) + b"\xde\xad\xbe\xef" * 3 + b"mor")
        else:
            data = bytearray(
                encode_frame(
                    body,
                    timeout_ns=frame.timeout_ns or 1,
                    payload=b"" if self.service.payload_message else None,
                )
            )
        if fault == "corrupt":
            data[-1] ^= 0xFF
        if fault == "compressed":
            data[4] |= FLAG_COMPRESS
        with contextlib.suppress(ConnectionError, RuntimeError):
            if fault == "half":
                writer.write(bytes(data[: len(data) // 2]))
                await writer.drain()
                writer.close()
                return
            writer.write(bytes(data))
            await writer.drain()
