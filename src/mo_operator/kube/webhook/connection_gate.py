"""TLS connections up to a limit, for a server anyone on the network can reach.

asyncio's own TLS server accepts every connection and holds each for its whole
handshake (60 s by default) before the application sees it, so a client that
opens thousands and says nothing holds thousands of sockets. Here the server
listens in plain TCP: each accepted connection is counted, refused at once
(reset) when :attr:`ConnectionGate.max_connections` are open, and otherwise
upgraded to TLS (``loop.start_tls``) within ``handshake_seconds``; only then is
it handed to the application's protocol (aiohttp's request handler), as
``loop.create_server(ssl=...)`` would hand it. As Go's
``netutil.LimitListener``, the limit counts connections from accept to close.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable

__all__ = ["ConnectionGate"]

log = logging.getLogger(__name__)


class ConnectionGate:
    """The protocol factory of a plain TCP server that serves TLS through ``inner``."""

    def __init__(
        self,
        inner: Callable[[], asyncio.Protocol],
        context: ssl.SSLContext,
        *,
        max_connections: int,
        handshake_seconds: float,
    ) -> None:
        self.inner = inner
        self.context = context
        self.max_connections = max_connections
        self.handshake_seconds = handshake_seconds
        self.open = 0
        """Connections accepted and not yet closed (handshakes under way included)."""
        self.refused = 0
        """Connections reset at once because ``max_connections`` were open."""
        self._handshakes: set[asyncio.Task[None]] = set()

    def __call__(self) -> asyncio.Protocol:
        return _Gated(self)

    def close(self) -> None:
        """Abandon the handshakes under way (the server is stopping)."""
        for task in self._handshakes:
            task.cancel()


class _Gated(asyncio.Protocol):
    """One connection: counted, upgraded to TLS, then relayed to the application's protocol."""

    def __init__(self, gate: ConnectionGate) -> None:
        self.gate = gate
        self.inner: asyncio.Protocol | None = None
        self.early: list[bytes] = []
        """Data decrypted between the handshake and the application's protocol taking over."""
        self.eof = False
        self.counted = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        gate = self.gate
        assert isinstance(transport, asyncio.Transport)
        if gate.open >= gate.max_connections:
            gate.refused += 1
            if gate.refused == 1 or gate.refused % 1000 == 0:
                log.warning(
                    "%d connections refused: %d are open, the most this server takes",
                    gate.refused,
                    gate.max_connections,
                )
            transport.abort()
            return
        gate.open += 1
        self.counted = True
        task = asyncio.get_running_loop().create_task(self._upgrade(transport))
        gate._handshakes.add(task)
        task.add_done_callback(gate._handshakes.discard)

    async def _upgrade(self, transport: asyncio.Transport) -> None:
        loop = asyncio.get_running_loop()
        try:
            tls = await loop.start_tls(
                transport,
                self,
                self.gate.context,
                server_side=True,
                ssl_handshake_timeout=self.gate.handshake_seconds,
            )
        except (OSError, TimeoutError, asyncio.CancelledError) as e:
            # A client that speaks no TLS, a wrong certificate, silence past the deadline.
            log.debug("TLS handshake failed: %r", e)
            transport.abort()
            self._release()
            return
        if tls is None:  # closed during the handshake
            self._release()
            return
        inner = self.gate.inner()
        self.inner = inner
        inner.connection_made(tls)
        for data in self.early:
            inner.data_received(data)
        self.early.clear()
        if self.eof:
            inner.eof_received()

    def _release(self) -> None:
        if self.counted:
            self.counted = False
            self.gate.open -= 1

    # What the TLS transport tells the application, passed on once it exists.
    def data_received(self, data: bytes) -> None:
        if self.inner is None:
            self.early.append(data)
        else:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.inner is None:
            self.eof = True
            return None
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if self.inner is not None:
            inner, self.inner = self.inner, None
            inner.connection_lost(exc)
