"""Go's keep-alive rule for every HTTP client we run.

A pooled connection can be closed by the server at the instant a request goes
out on it: the server's idle timeout fires, it restarts, or a proxy drops it.
The client sees the write fail or the connection end before any answer, though
the server never looked at the request. Go's transport, which kube-apiserver
uses to call webhooks and client-go uses to call kube-apiserver, sends such a
request again on another connection (``persistConn.shouldRetryRequest``).
aiohttp does so only for idempotent methods and httpx not at all, so a POST
(an admission review, a create) fails for no reason of its own.

Both clients here send a request again when the exchange failed on a *reused*
connection before the answer's status line and headers arrived. The connection
that failed is closed, so each retry takes another pooled connection or a new
one; as in Go, retrying stops at the first failure on a new connection, which
is the caller's to judge, as are timeouts and anything after the headers.
``MAX_ATTEMPTS`` only bounds a pool of many stale connections.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from types import SimpleNamespace
from typing import Any

import aiohttp
import httpx2
import lightkube
from lightkube import KubeConfig
from lightkube.config.client_adapter import verify_cluster
from lightkube.config.kubeconfig import SingleConfig
from lightkube.config.models import User
from lightkube.core.exceptions import ConfigError

# ----------------------------------------------------------------- httpx

MAX_ATTEMPTS = 8
_HTTPX_STALE = (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.WriteError)


class StaleConnectionRetry(httpx2.AsyncBaseTransport):
    """An httpx transport that wraps another and applies the rule above.

    Whether a connection was reused is learnt from httpcore's ``trace``
    extension: a request that opens a connection traces ``connection.connect_*``.
    """

    def __init__(self, inner: httpx2.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        replayable = _replayable(request)
        outer_trace = request.extensions.get("trace")
        fresh = False

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            nonlocal fresh
            if event.startswith("connection.connect_"):
                fresh = True
            if outer_trace is not None:
                await outer_trace(event, info)

        request.extensions = {**request.extensions, "trace": trace}
        for attempt in range(1, MAX_ATTEMPTS + 1):
            fresh = False
            try:
                return await self.inner.handle_async_request(request)
            except _HTTPX_STALE:
                if fresh or not replayable or attempt == MAX_ATTEMPTS:
                    raise
        raise AssertionError("unreachable")

    async def aclose(self) -> None:
        await self.inner.aclose()


def _replayable(request: httpx2.Request) -> bool:
    """A body held in memory can be sent again; a streamed one cannot."""
    try:
        request.content  # noqa: B018
    except httpx2.RequestNotRead:
        return False
    return True


def keepalive_transport(config: SingleConfig, *, trust_env: bool = True) -> StaleConnectionRetry:
    """httpx's own transport, verifying the server as lightkube would for ``config``
    (a transport given to httpx replaces the client's ``verify``), under the rule."""
    verify = verify_cluster(config.cluster, config.user or User(), config.abs_file, trust_env=trust_env)
    return StaleConnectionRetry(httpx2.AsyncHTTPTransport(verify=verify, trust_env=trust_env))


def lightkube_client(config: KubeConfig | SingleConfig, **kwargs: Any) -> lightkube.AsyncClient:
    """A lightkube ``AsyncClient`` for ``config`` whose connections follow the rule."""
    single = config.get() if isinstance(config, KubeConfig) else config
    if single is None:
        raise ConfigError("the kubeconfig names no current context")
    return lightkube.AsyncClient(single, transport=keepalive_transport(single), **kwargs)


# --------------------------------------------------------------- aiohttp

AIOHTTP_STALE = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


async def _on_reuse(_session: Any, ctx: SimpleNamespace, _params: Any) -> None:
    if isinstance(ctx.trace_request_ctx, Attempt):
        ctx.trace_request_ctx.reused = True


async def _on_create(_session: Any, ctx: SimpleNamespace, _params: Any) -> None:
    if isinstance(ctx.trace_request_ctx, Attempt):
        ctx.trace_request_ctx.reused = False


class Attempt:
    """What one request learnt of its connection: the last one it was given."""

    __slots__ = ("reused",)

    def __init__(self) -> None:
        self.reused = False


def reuse_trace() -> aiohttp.TraceConfig:
    config: aiohttp.TraceConfig = aiohttp.TraceConfig()
    config.on_connection_reuseconn.append(_on_reuse)
    config.on_connection_create_start.append(_on_create)
    return config


def keepalive_session(**kwargs: Any) -> aiohttp.ClientSession:
    """An ``aiohttp.ClientSession`` whose requests made through :func:`request` know
    whether their connection came from the pool."""
    kwargs["trace_configs"] = [*kwargs.get("trace_configs", ()), reuse_trace()]
    return aiohttp.ClientSession(**kwargs)


@asynccontextmanager
async def request(
    session: aiohttp.ClientSession, method: str, url: str, **kwargs: Any
) -> AsyncIterator[aiohttp.ClientResponse]:
    """``session.request`` under the rule; ``session`` from :func:`keepalive_session`.

    ``data`` must be bytes or a string (a body that can be sent twice)."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        connection = Attempt()
        try:
            response = await session.request(method, url, trace_request_ctx=connection, **kwargs)
        except AIOHTTP_STALE:
            if not connection.reused or attempt == MAX_ATTEMPTS:
                raise
            continue
        async with response:
            yield response
        return
