"""httpx's requests sent over aiohttp: the operator's connection to its API server.

The operator's client builds its requests with httpx, as lightkube does (its
kubeconfig, TLS, rotating tokens and exec plugins come with the client), and
sends them here. httpx's own transport parses HTTP/1.1 in Python and checks
every pooled connection with a system call on each request; per request it
costs about 1 ms of CPU where this transport costs under half that (aiohttp
parses in C and keeps idle connections per host). Writes and watch events are
the larger part of the operator's CPU, so this is where it is spent least.

The transport answers with httpx's types: a response streams its body (a watch
reads it as it comes; an ordinary request reads it whole), and aiohttp's
failures are raised as the httpx errors the client classifies (a connection
that could not be opened is ``ConnectError``, one that dropped ``ReadError``
or ``RemoteProtocolError``, a timeout by its phase). Go's keep-alive rule
(``keepalive.py``) applies: a request that failed on a reused connection before
any answer is sent again on another.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import ssl
from collections.abc import AsyncIterator, Mapping

import aiohttp
import httpx2
from lightkube.config.client_adapter import verify_cluster
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import User

from .keepalive import AIOHTTP_STALE, MAX_ATTEMPTS, Attempt, reuse_trace

TLS_READ_BUFFER = 32 * 1024
"""What asyncio's TLS protocol reads into at a time, per connection. Its default,
256 KiB (``SSLProtocol.max_size``), is held by every open connection: the
operator keeps one per informer's watch for minutes, and four dozen of them held
12 MiB, a tenth of the operator's memory at 1,000 clusters. A TLS record carries
at most 16 KiB, so two records a read cost no more system calls than the records
take. Set for the process: the webhook server's connections are asyncio's too."""
asyncio.sslproto.SSLProtocol.max_size = TLS_READ_BUFFER

_HOP_BY_HOP = frozenset({b"host", b"content-length", b"transfer-encoding", b"connection"})
"""Headers aiohttp writes itself from the request it sends."""


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """An httpx transport over one aiohttp session, made on first use in the running
    loop (an aiohttp session belongs to the loop that made it)."""

    def __init__(self, ssl_context: ssl.SSLContext | bool = True, *, trust_env: bool = True) -> None:
        self._ssl = ssl_context
        self._trust_env = trust_env
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_now(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._loop is not loop or self._session.closed:
            connector = aiohttp.TCPConnector(ssl=self._ssl, limit=100, keepalive_timeout=30)
            self._session = aiohttp.ClientSession(
                connector=connector,
                trust_env=self._trust_env,
                auto_decompress=False,
                trace_configs=[reuse_trace()],
            )
            self._loop = loop
        return self._session

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        session = self._session_now()
        body = await request.aread()
        headers = [(k.decode(), v.decode()) for k, v in request.headers.raw if k.lower() not in _HOP_BY_HOP]
        timeout = _timeout(request.extensions.get("timeout") or {})
        for attempt in range(1, MAX_ATTEMPTS + 1):
            connection = Attempt()
            try:
                response = await session.request(
                    request.method,
                    str(request.url),
                    data=body or None,
                    headers=headers,
                    timeout=timeout,
                    allow_redirects=False,
                    trace_request_ctx=connection,
                )
            except AIOHTTP_STALE as e:
                if not connection.reused or attempt == MAX_ATTEMPTS:
                    raise _as_httpx(e, request) from e
                continue
            except (aiohttp.ClientError, TimeoutError) as e:
                raise _as_httpx(e, request) from e
            return httpx2.Response(
                response.status,
                headers=list(response.raw_headers),
                stream=_Body(response, request),
                extensions={"http_version": b"HTTP/1.1", "reason_phrase": (response.reason or "").encode()},
                request=request,
            )
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


class _Body(httpx2.AsyncByteStream):
    """An aiohttp response's body as httpx reads it, chunk by chunk as it arrives."""

    def __init__(self, response: aiohttp.ClientResponse, request: httpx2.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as e:
            raise _as_httpx(e, self._request) from e

    async def aclose(self) -> None:
        self._response.release()


def _timeout(phases: Mapping[str, float | None]) -> aiohttp.ClientTimeout:
    """httpx's timeout phases as aiohttp's: no total, connect covers waiting for a
    pooled connection too, and ``read`` bounds each wait for bytes (None: a watch)."""
    pool, connect = phases.get("pool"), phases.get("connect")
    return aiohttp.ClientTimeout(
        total=None,
        connect=None if pool is None and connect is None else (pool or 0.0) + (connect or 0.0),
        sock_connect=connect,
        sock_read=phases.get("read"),
    )


def _as_httpx(error: BaseException, request: httpx2.Request) -> httpx2.TransportError:
    """aiohttp's failure as the httpx error of the same meaning."""
    message = f"{type(error).__name__}: {error}"
    kind: type[httpx2.TransportError]
    if isinstance(error, aiohttp.ConnectionTimeoutError):
        kind = httpx2.ConnectTimeout
    elif isinstance(error, (aiohttp.ServerTimeoutError, TimeoutError)):
        kind = httpx2.ReadTimeout
    elif isinstance(error, aiohttp.ClientConnectorError):
        kind = httpx2.ConnectError
    elif isinstance(error, aiohttp.ServerDisconnectedError):
        kind = httpx2.RemoteProtocolError
    elif isinstance(error, (aiohttp.ClientPayloadError, aiohttp.ClientOSError)):
        kind = httpx2.ReadError
    else:
        kind = httpx2.NetworkError
    return kind(message, request=request)


def transport_for(config: SingleConfig, *, trust_env: bool = True) -> AiohttpTransport:
    """The transport to the API server of ``config``, verifying it (and presenting the
    user's certificate) as lightkube would."""
    verify = verify_cluster(config.cluster, config.user or User(), config.abs_file, trust_env=trust_env)
    return AiohttpTransport(verify, trust_env=trust_env)
