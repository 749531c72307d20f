"""Sending one API request reliably, as client-go's ``rest`` package does:
lightkube's connection (kubeconfig or in-cluster, TLS, rotating tokens, exec
plugins), a client-side rate limit, retries, metrics and typed errors.

Retry rules (client-go ``rest/request.go``, ``rest/with_retry.go``): 429,
and any 5xx that carries ``Retry-After``, are retried for every request
after the advertised delay — the server asked us to come back; other 5xx
and dropped connections only for idempotent requests, since a POST or a JSON
patch may already have been applied; a connection that could not even be
opened is retried for everything. Each attempt passes the rate limiter and
is counted in ``REST_CLIENT_*`` as client-go counts it: by HTTP method, status
code and host, and in ``API_CLIENT_REQUESTS`` by the client's verb, resource
and code.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, cast

import httpx2
import msgspec
from lightkube.config.client_adapter import AsyncClient as lightkube_http_client
from lightkube.config.client_adapter import ConnectionParams
from lightkube.config.kubeconfig import SingleConfig

from ..flowcontrol.backoff import Backoff
from ..flowcontrol.ratelimit import TokenBucket
from ..memory.collector import collector_paused
from ..meta.errors import ApiConnectionError, ApiError
from ..meta.frozen import as_json
from ..metrics.metrics import (
    API_CLIENT_REQUESTS,
    REST_CLIENT_LATENCY,
    REST_CLIENT_RATE_LIMITER_DURATION,
    REST_CLIENT_REQUESTS,
)
from .aiohttp_transport import transport_for

Params = Mapping[str, str | None]

_encoder = msgspec.json.Encoder(enc_hook=as_json)
_decoder = msgspec.json.Decoder()
_MAX_RETRY_AFTER = 60.0
_NEVER_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout)


SEND_GUARD: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "send_guard", default=None
)
"""Called before every attempt of a request made in this context; raising stops it.

The leader election fence sets it around each write: checking only when the
write is asked for would let an attempt that waited (rate limit, retry backoff,
a process frozen meanwhile) go out after the lease was lost."""


def default_backoff() -> Backoff:
    return Backoff(initial=0.2, cap=10.0, factor=2.0, jitter=0.5)


class RestTransport:
    def __init__(
        self,
        config: SingleConfig,
        *,
        user_agent: str,
        qps: float | None = 50.0,
        burst: int = 100,
        rate_limiter: TokenBucket | None = None,
        max_retries: int = 5,
        retry_backoff: Callable[[], Backoff] = default_backoff,
        timeout: float = 30.0,
        transport: httpx2.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.max_retries = max_retries
        self._retry_backoff = retry_backoff
        self._sleep = sleep
        self._limiter = rate_limiter or (TokenBucket(qps, burst) if qps else None)
        self._http = _http_client(config, user_agent, timeout, transport or transport_for(config))
        self._streams = (
            _http_client(config, user_agent, timeout, transport_for(config))
            if transport is None
            else self._http
        )
        """Watches hold their connections for minutes, so they have a pool of their own:
        they never take from the connections the requests may open."""
        self._stream_timeout = httpx2.Timeout(timeout, read=None)
        self._base = str(self._http.base_url).rstrip("/")
        self._host = urllib.parse.urlsplit(config.cluster.server).netloc or "none"
        """The ``host`` label: client-go's (the base URL's host:port, ``none`` without one)."""
        self.requests_made: collections.Counter[tuple[str, str]] = collections.Counter()
        """Attempts by (verb, resource) from this client alone (the metrics are process-wide):
        lets a test compare what the operator did with what its RBAC grants."""

    async def close(self) -> None:
        await self._http.aclose()
        if self._streams is not self._http:
            await self._streams.aclose()

    async def request(
        self,
        verb: str,
        resource: str,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Any = None,
        content_type: str = "application/json",
        idempotent: bool = True,
    ) -> Any:
        """Send with retries; return the decoded JSON body (None if empty).
        ``resource`` is the metrics label."""
        content = _encoder.encode(body) if body is not None else None
        headers = {"Content-Type": content_type} if content is not None else None
        backoff: Backoff | None = None
        attempt = 0
        while True:
            attempt += 1
            await self._rate_limit(method)
            guard = SEND_GUARD.get()
            if guard is not None:
                guard()
            request = self._http.build_request(
                method, self._url(path, params), content=content, headers=headers
            )
            started = time.perf_counter()
            try:
                response = await self._http.send(request)
            except httpx2.TransportError as e:
                self._observe(verb, resource, method, "<error>", started)
                if attempt > self.max_retries or not (idempotent or isinstance(e, _NEVER_SENT)):
                    raise ApiConnectionError(f"{method} {path}: {type(e).__name__}: {e}") from e
                backoff = backoff or self._retry_backoff()
                await self._sleep(backoff.next())
                continue
            self._observe(verb, resource, method, str(response.status_code), started)
            if response.is_success:
                return decode_body(response.content)
            error = error_from_response(response)
            if attempt > self.max_retries or not _should_retry(error, idempotent):
                raise error
            backoff = backoff or self._retry_backoff()
            delay = backoff.next()
            if error.retry_after is not None:
                delay = min(error.retry_after, _MAX_RETRY_AFTER)
            await self._sleep(delay)

    async def open_stream(self, verb: str, resource: str, path: str, params: Params) -> httpx2.Response:
        """Open a streaming GET (a watch) without a read timeout and without
        retries: the caller resumes on its own terms. Non-2xx answers are
        read and raised as ``ApiError``; the caller closes the response."""
        await self._rate_limit("GET")
        request = self._streams.build_request("GET", self._url(path, params), timeout=self._stream_timeout)
        started = time.perf_counter()
        try:
            response = await self._streams.send(request, stream=True)
        except httpx2.TransportError:
            self._observe(verb, resource, "GET", "<error>", started)
            raise
        self._observe(verb, resource, "GET", str(response.status_code), started)
        if not response.is_success:
            try:
                await response.aread()
            finally:
                await response.aclose()
            raise error_from_response(response)
        return response

    def _url(self, path: str, params: Params | None) -> str:
        """The request's whole URL, made once: httpx parses a URL character by
        character each time it joins a path to the base or adds a query, which cost
        as much as sending the request."""
        query = urllib.parse.urlencode(_clean(params or {}), quote_via=urllib.parse.quote)
        return f"{self._base}{path}?{query}" if query else f"{self._base}{path}"

    async def _rate_limit(self, method: str) -> None:
        if self._limiter is None:
            return
        delay = self._limiter.reserve()
        REST_CLIENT_RATE_LIMITER_DURATION.labels(method, self._host).observe(delay)
        if delay > 0:
            await self._sleep(delay)

    def _observe(self, verb: str, resource: str, method: str, code: str, started: float) -> None:
        self.requests_made[(verb, resource)] += 1
        REST_CLIENT_REQUESTS.labels(code, method, self._host).inc()
        API_CLIENT_REQUESTS.labels(verb, resource, code).inc()
        REST_CLIENT_LATENCY.labels(method, self._host).observe(time.perf_counter() - started)


def _http_client(
    config: SingleConfig, user_agent: str, timeout: float, transport: httpx2.AsyncBaseTransport
) -> httpx2.AsyncClient:
    # lightkube annotates the transport as the sync kind but hands it to httpx's AsyncClient.
    params = ConnectionParams(timeout=httpx2.Timeout(timeout), transport=cast(Any, transport))
    client: httpx2.AsyncClient = lightkube_http_client(config, params)
    client.headers["User-Agent"] = user_agent
    return client


def decode_body(content: bytes) -> Any:
    """A response body's JSON (None if empty), decoded with the cyclic
    collector paused: a list page is hundreds of thousands of acyclic objects
    (see ``collector.py``)."""
    if not content:
        return None
    with collector_paused():
        return _decoder.decode(content)


def _should_retry(error: ApiError, idempotent: bool) -> bool:
    if error.status == 429:
        return True
    if error.status >= 500:
        return idempotent or error.retry_after is not None
    return False


def _clean(params: Params) -> dict[str, str]:
    return {k: v for k, v in params.items() if v is not None}


def error_from_response(response: httpx2.Response) -> ApiError:
    """The ``Status`` in the body when there is one, else the HTTP status line."""
    retry_after: float | None = None
    header = response.headers.get("Retry-After")
    if header:
        try:
            retry_after = max(0.0, float(header))
        except ValueError:
            retry_after = None  # an HTTP date: fall back to our own backoff
    try:
        status = _decoder.decode(response.content) if response.content else {}
    except msgspec.DecodeError:
        status = {}
    if isinstance(status, dict) and status.get("kind") == "Status":
        return ApiError.from_status(status, response.status_code, retry_after=retry_after)
    text = response.content[:500].decode(errors="replace")
    reason = response.reason_phrase.replace(" ", "")
    return ApiError(response.status_code, reason, text, retry_after=retry_after)
