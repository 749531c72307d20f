"""The admission webhook server: HTTPS (aiohttp), AdmissionReview v1,
mutating handlers answered with a JSON patch and validating handlers
answered with allowed/denied, as kube-apiserver expects.

Handlers are plain async functions of the request; a handler that raises is
answered with a denial naming the error instead of a 500, so a bug never
takes the API down with it (the configuration's failurePolicy still applies
if the server itself is unreachable).
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from .jsonpatch_diff import diff
from .metrics import WEBHOOK_IN_FLIGHT, WEBHOOK_LATENCY, WEBHOOK_REQUESTS
from .webhook_certs import CertSource

log = logging.getLogger(__name__)
Obj = dict[str, Any]


@dataclass
class AdmissionRequest:
    """The parts of an AdmissionReview request handlers use."""

    uid: str
    operation: str
    kind: Obj
    namespace: str
    name: str
    object: Obj | None
    old_object: Obj | None
    dry_run: bool
    raw: Obj = field(repr=False)

    @classmethod
    def from_review(cls, review: Obj) -> AdmissionRequest:
        req = review.get("request") or {}
        return cls(
            uid=req.get("uid", ""),
            operation=req.get("operation", ""),
            kind=req.get("kind") or {},
            namespace=req.get("namespace") or "",
            name=req.get("name") or "",
            object=req.get("object"),
            old_object=req.get("oldObject"),
            dry_run=bool(req.get("dryRun")),
            raw=req,
        )


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
    def __init__(self, certs: CertSource, *, host: str = "0.0.0.0", port: int = 9443) -> None:
        self.certs = certs
        self.host = host
        self.port = port
        self._mutating: dict[str, MutatingHandler] = {}
        self._validating: dict[str, ValidatingHandler] = {}
        self._runner: web.AppRunner | None = None
        self._ssl: ssl.SSLContext | None = None
        self._rotation: asyncio.Task[None] | None = None
        self.requests = 0

    def add_mutating(self, path: str, handler: MutatingHandler) -> None:
        self._mutating[path] = handler

    def add_validating(self, path: str, handler: ValidatingHandler) -> None:
        self._validating[path] = handler

    @property
    def paths(self) -> list[str]:
        return [*self._mutating, *self._validating]

    async def start(self) -> None:
        app = web.Application(client_max_size=16 * 1024 * 1024, middlewares=[self._measure])
        for path in self._mutating:
            app.router.add_post(path, self._serve_mutating)
        for path in self._validating:
            app.router.add_post(path, self._serve_validating)
        app.router.add_get("/healthz", _healthz)
        self._ssl = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.certs.load_into(self._ssl)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self._ssl)
        await site.start()
        if self.port == 0:
            server = site._server
            assert server is not None
            sockets = getattr(server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1])
        self._rotation = asyncio.create_task(self._rotate_loop(), name="webhook-cert-rotation")
        log.info("webhook server listening on %s:%d", self.host, self.port)

    async def stop(self) -> None:
        if self._rotation is not None:
            self._rotation.cancel()
            await asyncio.gather(self._rotation, return_exceptions=True)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

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

    async def _read(self, request: web.Request) -> tuple[Obj, AdmissionRequest]:
        review = await request.json()
        if not isinstance(review, dict):
            raise web.HTTPBadRequest(text="AdmissionReview expected")
        return review, AdmissionRequest.from_review(review)

    async def _serve_mutating(self, request: web.Request) -> web.Response:
        self.requests += 1
        review, req = await self._read(request)
        handler = self._mutating[request.path]
        try:
            result = await handler(req)
        except Exception as e:
            log.exception("mutating webhook %s failed", request.path)
            result = Denial(f"internal error in the webhook: {e}", code=500, reason="InternalError")
        if isinstance(result, Denial):
            return _respond(review, _denied(req.uid, result))
        response: Obj = {"uid": req.uid, "allowed": True}
        ops = diff(req.object or {}, result)
        if ops:
            response["patchType"] = "JSONPatch"
            response["patch"] = base64.b64encode(json.dumps(ops).encode()).decode()
        return _respond(review, response)

    async def _serve_validating(self, request: web.Request) -> web.Response:
        self.requests += 1
        review, req = await self._read(request)
        handler = self._validating[request.path]
        try:
            result = await handler(req)
        except Exception as e:
            log.exception("validating webhook %s failed", request.path)
            result = Denial(f"internal error in the webhook: {e}", code=500, reason="InternalError")
        if isinstance(result, Denial):
            return _respond(review, _denied(req.uid, result))
        response: Obj = {"uid": req.uid, "allowed": True}
        if result is not None and result.warnings:
            response["warnings"] = list(result.warnings)
        return _respond(review, response)


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
