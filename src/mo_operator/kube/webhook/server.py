"""The admission webhook server: HTTPS (aiohttp), AdmissionReview v1,
mutating handlers answered with a JSON patch and validating handlers
answered with allowed/denied, as kube-apiserver expects.

Handlers are plain async functions of the request; a handler that raises is
answered with a denial naming the error instead of a 500, so a bug never
takes the API down with it (the configuration's failurePolicy still applies
if the server itself is unreachable).

Anyone who can reach the port can send anything, so the server is strict
and bounded (:class:`Limits`): a body that is not an AdmissionReview v1
request (``admission_review.py``) is answered 400 with the reason, never
admitted; bodies, the time to send a request's headers and its body, the
nesting of the JSON and the connections open at once all have limits
(connections are counted and upgraded to TLS by ``connection_gate.py``). Each
refused request is logged as one line without a traceback, at most one line
per :data:`LOG_INTERVAL` (the others are counted in the next line), so no
client fills the log.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import aiohttp
from aiohttp import web

from ..metrics.metrics import WEBHOOK_IN_FLIGHT, WEBHOOK_LATENCY, WEBHOOK_REQUESTS
from .admission_review import AdmissionRequest, MalformedReview, parse_review
from .connection_gate import ConnectionGate
from .http_log import request_log
from .jsonpatch_diff import diff
from .serving_certs import CertSource

__all__ = ["AdmissionRequest", "Admitted", "Denial", "Limits", "WebhookServer"]

log = logging.getLogger(__name__)
Obj = dict[str, Any]

LOG_INTERVAL: Final = 10.0
"""Seconds between two log lines about refused requests."""
_LINGER_SECONDS: Final = 1.0
"""How long the rest of a refused body is read (so the client sees the answer) before
the connection closes (aiohttp's default, 10 s, would hold a slow client that long)."""


@dataclass(frozen=True)
class Limits:
    """What one client may ask of the server."""

    max_body_bytes: int = 7 * 1024 * 1024
    """A request body, as controller-runtime's webhook server bounds it (7 MiB:
    kube-apiserver sends an object and its old version, each at most 3 MiB)."""
    request_seconds: float = 10.0
    """To send a request's headers, from the connection's TLS handshake or the previous
    answer: also how long an idle keep-alive connection stays open."""
    body_seconds: float = 10.0
    """To send a request's body once its headers arrived (kube-apiserver's webhook
    timeout is 10 s by default, 30 s at most)."""
    handshake_seconds: float = 10.0
    """To complete the TLS handshake."""
    max_connections: int = 256
    """Connections open at once; more are reset as soon as they are accepted."""


@dataclass
class Denial:
    """A rejection: ``message`` is what kubectl shows after the webhook name."""

    message: str
    code: int = 422
    reason: str = "Invalid"
    causes: list[Obj] = field(default_factory=list)


@dataclass
class Admitted:
    """An admission with warnings, which kube-apiserver hands to the client as
    ``Warning`` headers (kubectl prints each as ``Warning: <text>`` on stderr):
    for what is allowed but deserves the user's attention."""

    warnings: list[str] = field(default_factory=list)


MutatingHandler = Callable[[AdmissionRequest], Awaitable["Obj | Denial"]]
ValidatingHandler = Callable[[AdmissionRequest], Awaitable["Denial | Admitted | None"]]


class WebhookServer:
    def __init__(
        self,
        certs: CertSource,
        *,
        host: str = "0.0.0.0",
        port: int = 9443,
        limits: Limits | None = None,
    ) -> None:
        self.certs = certs
        self.host = host
        self.port = port
        self.limits = limits or Limits()
        self._mutating: dict[str, MutatingHandler] = {}
        self._validating: dict[str, ValidatingHandler] = {}
        self._runner: web.AppRunner | None = None
        self._server: asyncio.Server | None = None
        self._gate: ConnectionGate | None = None
        self._ssl: ssl.SSLContext | None = None
        self._rotation: asyncio.Task[None] | None = None
        self._refusals = _Throttled()
        self.requests = 0

    def add_mutating(self, path: str, handler: MutatingHandler) -> None:
        self._mutating[path] = handler

    def add_validating(self, path: str, handler: ValidatingHandler) -> None:
        self._validating[path] = handler

    @property
    def paths(self) -> list[str]:
        return [*self._mutating, *self._validating]

    @property
    def open_connections(self) -> int:
        return self._gate.open if self._gate is not None else 0

    async def start(self) -> None:
        limits = self.limits
        app = web.Application(client_max_size=limits.max_body_bytes, middlewares=[self._measure])
        for path in self._mutating:
            app.router.add_post(path, self._serve_mutating)
        for path in self._validating:
            app.router.add_post(path, self._serve_validating)
        app.router.add_get("/healthz", _healthz)
        self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.certs.load_into(self._ssl)
        self._runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            keepalive_timeout=limits.request_seconds,
            lingering_time=_LINGER_SECONDS,
            logger=request_log(f"{__name__}.requests"),
        )
        await self._runner.setup()
        server = self._runner.server
        assert server is not None
        self._gate = ConnectionGate(
            server,
            self._ssl,
            max_connections=limits.max_connections,
            handshake_seconds=limits.handshake_seconds,
        )
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._gate, self.host, self.port)
        if self.port == 0:
            self.port = int(self._server.sockets[0].getsockname()[1])
        self._rotation = asyncio.create_task(self._rotate_loop(), name="webhook-cert-rotation")
        log.info("webhook server listening on %s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._rotation is not None:
            self._rotation.cancel()
            await asyncio.gather(self._rotation, return_exceptions=True)
        if self._server is not None:
            self._server.close()
        if self._gate is not None:
            self._gate.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _rotate_loop(self) -> None:
        """Reload or regenerate the serving certificate before it expires;
        new TLS handshakes use it at once (the SSL context is shared)."""
        while True:
            await asyncio.sleep(self.certs.check_interval)
            try:
                if self.certs.refresh() and self._ssl is not None:
                    self.certs.load_into(self._ssl)
                    log.info("webhook serving certificate rotated")
            except Exception:
                log.exception("webhook certificate rotation failed; keeping the current certificate")

    # ---------------------------------------------------------------- serving
    @web.middleware
    async def _measure(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        """Count and time each admission request by the path it was sent to, as
        controller-runtime does; other paths (probes, strays) are not counted, so
        no client can grow the label set."""
        path = request.path
        if path not in self._mutating and path not in self._validating:
            return await handler(request)
        started = time.perf_counter()
        in_flight = WEBHOOK_IN_FLIGHT.labels(path)
        in_flight.inc()
        code = "500"
        try:
            response = await handler(request)
            code = str(response.status)
            return response
        except web.HTTPException as e:
            code = str(e.status)
            raise
        finally:
            in_flight.dec()
            WEBHOOK_REQUESTS.labels(path, code).inc()
            WEBHOOK_LATENCY.labels(path).observe(time.perf_counter() - started)

    async def _read(self, request: web.Request) -> tuple[Obj, AdmissionRequest] | web.Response:
        """The review of a request, or the answer refusing it (logged as one line)."""
        self.requests += 1
        status, reason = 400, ""
        try:
            if (request.content_length or 0) > self.limits.max_body_bytes:
                status, reason = 413, f"the body is larger than {self.limits.max_body_bytes} bytes"
            else:
                async with asyncio.timeout(self.limits.body_seconds):
                    body = await request.read()
                return parse_review(body)
        except MalformedReview as e:
            reason = str(e)
        except web.HTTPRequestEntityTooLarge:
            status, reason = 413, f"the body is larger than {self.limits.max_body_bytes} bytes"
        except TimeoutError:
            status, reason = 408, f"the body took longer than {self.limits.body_seconds:g} s to arrive"
        except (aiohttp.ClientError, ConnectionError, aiohttp.http_exceptions.HttpProcessingError) as e:
            status, reason = 400, f"the body could not be read: {e!r}"
        self._refusals.note(
            f"webhook {request.path}: refused a request from {request.remote} ({status}): {reason}"
        )
        answer = web.Response(status=status, text=reason + "\n")
        if status != 400:
            answer.force_close()  # the rest of the body is not worth reading
        return answer

    async def _handle(
        self, request: web.Request, handlers: Mapping[str, Any], kind: str
    ) -> web.Response | tuple[Obj, Any, Any]:
        """Read the review and run its handler: the review, its request and the handler's
        answer (a handler that fails is a 500 ``Denial``), or the refusal to answer."""
        read = await self._read(request)
        if isinstance(read, web.Response):
            return read
        review, req = read
        try:
            result = await handlers[request.path](req)
        except Exception as e:
            self._refusals.note(f"{kind} webhook {request.path} failed", error=e)
            result = Denial(f"internal error in the webhook: {e}", code=500, reason="InternalError")
        return review, req, result

    async def _serve_mutating(self, request: web.Request) -> web.Response:
        handled = await self._handle(request, self._mutating, "mutating")
        if isinstance(handled, web.Response):
            return handled
        review, req, result = handled
        if isinstance(result, Denial):
            return _respond(review, _denied(req.uid, result))
        response: Obj = {"uid": req.uid, "allowed": True}
        ops = diff(req.object or {}, result)
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        return _respond(review, response)

    async def _serve_validating(self, request: web.Request) -> web.Response:
        handled = await self._handle(request, self._validating, "validating")
        if isinstance(handled, web.Response):
            return handled
        review, req, result = handled
        if isinstance(result, Denial):
            return _respond(review, _denied(req.uid, result))
        response: Obj = {"uid": req.uid, "allowed": True}
        if result is not None and result.warnings:
            response["warnings"] = list(result.warnings)
        return _respond(review, response)


class _Throttled:
    """Log lines about refused requests and failed handlers: each one line (a failed
    handler's first with its traceback, for the bug it is), at most one per
    :data:`LOG_INTERVAL`, the ones left out counted in the next."""

    def __init__(self) -> None:
        self._next = 0.0
        self._skipped = 0
        self._traced: set[str] = set()

    def note(self, what: str, *, error: Exception | None = None) -> None:
        now = time.monotonic()
        if now < self._next:
            self._skipped += 1
            return
        more = f" ({self._skipped} more since the last line)" if self._skipped else ""
        self._skipped, self._next = 0, now + LOG_INTERVAL
        if error is None:
            log.warning("%s%s", what, more)
            return
        first = type(error).__qualname__ not in self._traced
        self._traced.add(type(error).__qualname__)
        log.error("%s: %s%s", what, error, more, exc_info=error if first else None)


async def _healthz(_: web.Request) -> web.Response:
    return web.Response(text="ok")


def _denied(uid: str, d: Denial) -> Obj:
    status: Obj = {"code": d.code, "reason": d.reason, "message": d.message}
    if d.causes:
        status["details"] = {"causes": d.causes}
    return {"uid": uid, "allowed": False, "status": status}


def _respond(review: Obj, response: Obj) -> web.Response:
    return web.json_response(
        {
            "apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
            "kind": "AdmissionReview",
            "response": response,
        }
    )
