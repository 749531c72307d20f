"""The operator's health and metrics endpoint: ``/healthz`` (the process is
alive), ``/readyz`` (caches synced, and for a leader-elected replica whether
it leads, shown in the body) and ``/metrics`` (Prometheus text format)."""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from ..metrics.metrics import REGISTRY

log = logging.getLogger(__name__)
Check = Callable[[], "tuple[bool, str]"]


class ProbeServer:
    def __init__(self, *, host: str = "0.0.0.0", port: int = 8081) -> None:
        self.host = host
        self.port = port
        self._ready: dict[str, Check] = {}
        self._runner: web.AppRunner | None = None

    def add_readiness_check(self, name: str, check: Check) -> None:
        self._ready[name] = check

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/readyz", self._readyz)
        app.router.add_get("/metrics", self._metrics)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        if self.port == 0:
            server = site._server
            sockets = getattr(server, "sockets", None) or []
            self.port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, _: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def _readyz(self, _: web.Request) -> web.Response:
        lines, ok = [], True
        for name, check in self._ready.items():
            passed, detail = check()
            ok &= passed
            lines.append(f"[{'+' if passed else '-'}]{name} {detail}".rstrip())
        return web.Response(text="\n".join(lines) + "\n", status=200 if ok else 503)

    async def _metrics(self, _: web.Request) -> web.Response:
        body = generate_latest(REGISTRY)
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
