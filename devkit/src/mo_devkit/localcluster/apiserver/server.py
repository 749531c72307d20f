"""The embedded API server: HTTPS on 127.0.0.1 with its own CA and a bearer
token, serving discovery, OpenAPI and every registered resource through the
generic registry, plus the lifecycle controllers and the test-only fault
hooks and request log."""

from __future__ import annotations

import asyncio
import base64
import logging
import secrets
import ssl
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from mo_operator.kube.certs.certs import KeyPair, make_ca, make_serving_cert
from mo_operator.kube.webhook.http_log import request_log

from ..private_files import private_dir, write_private
from .admission import Admission
from .errors import StatusError, internal, not_found, unauthorized
from .eviction import Evictions
from .faults import Faults, RequestRecord
from .handlers import ResourceHandlers, json_response
from .lifecycle import Lifecycle
from .objects import ObjectAPI, WriteOptions
from .registry import Registry
from .routing import UnknownResource, parse_resource_path
from .storage.store import Store
from .storage.watch import BOOKMARK_INTERVAL, WatchSettings

_MAX_HEADER_BYTES = 1 << 20
"""Go's ``http.DefaultMaxHeaderBytes``, which kube-apiserver keeps."""
log = logging.getLogger(__name__)

KUBERNETES_VERSION = {
    "major": "1",
    "minor": "30",
    "gitVersion": "v1.30.0-localcluster",
    "gitCommit": "localcluster",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.22",
    "compiler": "gc",
    "platform": "linux/amd64",
}
_INITIAL_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")


class ApiServer:
    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        data_dir: str | Path | None = None,
        history_size: int = 10000,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        token: str | None = None,
        ca: KeyPair | None = None,
    ) -> None:
        from .builtins import BUILTIN_RESOURCE_TYPES

        self.host = host
        self.port = port
        self.data_dir = Path(data_dir) if data_dir else None
        self.token = token or self._load_or_make_token()
        self.ca = ca or self._load_or_make_ca()
        self.registry = Registry(BUILTIN_RESOURCE_TYPES)
        self.store = Store(history_size=history_size, data_dir=self.data_dir)
        self.api = ObjectAPI(self.store, self.registry)
        self.admission = Admission(self.api)
        self.api.admission = self.admission
        self.lifecycle = Lifecycle(self.api, self.registry)
        pods = self.registry.lookup("", "v1", "pods")
        budgets = self.registry.lookup("policy", "v1", "poddisruptionbudgets")
        assert pods is not None and budgets is not None
        self.evictions = Evictions(self.api, pods, budgets)
        self.watch_settings = WatchSettings(bookmark_interval=bookmark_interval)
        self.faults = Faults()
        self.handlers = ResourceHandlers(self.api, self.watch_settings, self.evictions)
        self._runner: web.AppRunner | None = None
        self._stopped = False
        """Set at the start of ``stop``: from then on this server answers nothing."""

    # ------------------------------------------------------------ identity
    def _load_or_make_token(self) -> str:
        if self.data_dir is not None and (self.data_dir / "token").exists():
            return (self.data_dir / "token").read_text().strip()
        token = secrets.token_urlsafe(32)
        if self.data_dir is not None:
            write_private(private_dir(self.data_dir) / "token", token.encode())
        return token

    def _load_or_make_ca(self) -> KeyPair:
        if self.data_dir is not None and (self.data_dir / "ca.crt").exists():
            return KeyPair((self.data_dir / "ca.crt").read_bytes(), (self.data_dir / "ca.key").read_bytes())
        ca = make_ca("localcluster-ca")
        if self.data_dir is not None:
            write_private(private_dir(self.data_dir) / "ca.crt", ca.cert_pem)
            write_private(self.data_dir / "ca.key", ca.key_pem)
        return ca

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self._stopped = False
        for rt_crd in self.store.list("customresourcedefinitions.apiextensions.k8s.io"):
            if not rt_crd["metadata"].get("deletionTimestamp") or rt_crd["metadata"].get("finalizers"):
                self.registry.set_custom(rt_crd)
        ns_rt = self.registry.lookup("", "v1", "namespaces")
        assert ns_rt is not None
        for ns in _INITIAL_NAMESPACES:
            if self.store.get("namespaces", "", ns) is None:
                await self.api.create(
                    ns_rt, "", {"metadata": {"name": ns}}, WriteOptions(user_agent="kube-apiserver")
                )
        self.lifecycle.start()
        app = web.Application(middlewares=[self._middleware], client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._dispatch)
        self._runner = web.AppRunner(
            app,
            access_log=None,
            handle_signals=False,
            shutdown_timeout=1.0,
            # Go's net/http takes request lines and headers up to 1 MiB (MaxHeaderBytes):
            # kube-apiserver answers a GET of a 64 KiB name 404, as it should.
            max_line_size=_MAX_HEADER_BYTES,
            max_field_size=_MAX_HEADER_BYTES,
            logger=request_log(f"{__name__}.requests"),
        )
        await self._runner.setup()
        serving = make_serving_cert(
            self.ca, [self.host, "localhost", "127.0.0.1", "kubernetes", "kubernetes.default.svc"]
        )
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as d:
            write_private(Path(d) / "tls.crt", serving.cert_pem + self.ca.cert_pem)
            write_private(Path(d) / "tls.key", serving.key_pem)
            ctx.load_cert_chain(str(Path(d) / "tls.crt"), str(Path(d) / "tls.key"))
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=ctx, reuse_address=True)
        await site.start()
        if self.port == 0:
            self.port = self._runner.addresses[0][1]
        log.info("API server listening on %s", self.url)

    async def stop(self) -> None:
        self._stopped = True
        self.store.drop_watchers()
        await self.lifecycle.stop()
        await self.admission.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self.store.close()

    # ------------------------------------------------------------ kubeconfig
    def kubeconfig(self, *, context: str = "localcluster", namespace: str = "default") -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": context,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.ca.cert_pem).decode(),
                    },
                }
            ],
            "users": [{"name": f"{context}-admin", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": context, "user": f"{context}-admin", "namespace": namespace},
                }
            ],
            "current-context": context,
        }

    def write_kubeconfig(self, path: str | Path) -> Path:
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        write_private(p, yaml.safe_dump(self.kubeconfig(), sort_keys=False).encode())
        return p

    # ------------------------------------------------------------ HTTP plumbing
    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self._stopped:
            # A connection whose TLS handshake was still under way when the server
            # stopped is unknown to aiohttp's shutdown and outlives it; a stopped
            # kube-apiserver's process has no connection left, so drop it and let
            # the client reconnect to whatever listens now.
            if request.transport is not None:
                request.transport.abort()
            raise web.HTTPServiceUnavailable()
        path = request.path
        user_agent = request.headers.get("User-Agent", "")
        started = time.time()
        code = 500
        try:
            if path not in _PUBLIC_PATHS:
                auth = request.headers.get("Authorization", "")
                if not secrets.compare_digest(auth, f"Bearer {self.token}"):
                    raise unauthorized()
            if not path.startswith("/localcluster/"):
                await self.faults.before(user_agent, request.method, path)
            resp: web.StreamResponse = await handler(request)
            code = resp.status
            return resp
        except StatusError as e:
            code = e.code
            return web.Response(
                body=_status_body(e), status=e.code, content_type="application/json", headers=e.headers
            )
        except web.HTTPException:
            raise
        except ConnectionResetError:
            code = 499  # the client went away mid-request: nobody to answer
            raise
        except Exception as e:
            log.exception("internal error serving %s %s", request.method, path)
            err = internal(str(e))
            code = 500
            return web.Response(body=_status_body(err), status=500, content_type="application/json")
        finally:
            self._record(request, user_agent, started, code)

    def _record(self, request: web.Request, user_agent: str, started: float, code: int) -> None:
        try:
            target = parse_resource_path(self.registry, request.path)
        except UnknownResource:
            target = None
        if target is None:
            return
        method = request.method
        q = request.query
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(method, "")
        if method == "GET":
            verb = "get" if target.name else ("watch" if q.get("watch") in ("true", "1") else "list")
        elif method == "DELETE":
            verb = "delete" if target.name else "deletecollection"
        self.faults.record(
            RequestRecord(
                started,
                verb,
                target.rt.group_resource,
                target.namespace,
                target.name,
                target.subresource,
                user_agent,
                q.get("fieldManager", ""),
                code,
            )
        )

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/version":
            return json_response(KUBERNETES_VERSION)
        if path.startswith("/localcluster/"):
            return await self._test_hooks(request, path)
        if path.startswith("/openapi"):
            return self._openapi(request, path)
        if path == "/api":
            return json_response(self.registry.api_versions(f"{self.host}:{self.port}"))
        if path == "/apis":
            return json_response(self.registry.api_group_list())
        parts = [p for p in path.split("/") if p]
        if not parts or not self._served(parts):
            # kube-apiserver's mux answers a path outside every group
            # version in plain text, not with a Status.
            return web.Response(status=404, text="404 page not found\n")
        if parts[0] == "api" and len(parts) == 2:
            rl = self.registry.resource_list("", parts[1])
            if rl is None:
                raise not_found("", parts[1])
            return json_response(rl)
        if parts[0] == "apis" and len(parts) == 2:
            group = self.registry.api_group(parts[1])
            if group is None:
                raise StatusError(404, "NotFound", "the server could not find the requested resource")
            return json_response(group)
        if parts[0] == "apis" and len(parts) == 3:
            rl = self.registry.resource_list(parts[1], parts[2])
            if rl is None:
                raise StatusError(404, "NotFound", "the server could not find the requested resource")
            return json_response(rl)
        try:
            target = parse_resource_path(self.registry, path)
        except UnknownResource as e:
            raise StatusError(
                404, "NotFound", "the server could not find the requested resource", details={}
            ) from e
        if target is None:
            raise StatusError(404, "NotFound", "the server could not find the requested resource", details={})
        return await self.handlers.handle(request, target)

    def _served(self, parts: list[str]) -> bool:
        """Whether the path is in a served group version (or is a discovery root)."""
        if parts[0] == "api":
            return len(parts) == 1 or parts[1] in self.registry.group_versions().get("", ())
        if parts[0] == "apis":
            if len(parts) == 1:
                return True
            versions = self.registry.group_versions().get(parts[1], ())
            return bool(versions) and (len(parts) == 2 or parts[2] in versions)
        return False

    def _openapi(self, request: web.Request, path: str) -> web.Response:
        from .openapi.document import openapi_document, openapi_index, openapi_v2

        types = self.registry.all()
        if path == "/openapi/v2":
            body, content_type = openapi_v2(request.headers.get("Accept", ""))
            return web.Response(body=body, headers={"Content-Type": content_type})
        if path == "/openapi/v3":
            return json_response(openapi_index(types))
        if path.startswith("/openapi/v3/"):
            parts = path[len("/openapi/v3/") :].split("/")
            if parts[0] == "api" and len(parts) == 2:
                doc = openapi_document("", parts[1], types)
            elif parts[0] == "apis" and len(parts) == 3:
                doc = openapi_document(parts[1], parts[2], types)
            else:
                doc = None
            if doc is not None:
                return json_response(doc)
        raise StatusError(404, "NotFound", "the server could not find the requested resource")

    # ------------------------------------------------------------ test hooks
    async def _test_hooks(self, request: web.Request, path: str) -> web.Response:
        """Fault injection and the request log, for tests running out of process."""
        action = path[len("/localcluster/") :]
        q = request.query
        if action == "faults/fail" and request.method == "POST":
            self.faults.fail_next(
                int(q.get("count", "1")),
                int(q.get("code", "500")),
                retry_after=int(q.get("retryAfter", "1")),
                hang=q.get("hang") == "true",
                user_agent=q.get("userAgent", ""),
            )
        elif action == "faults/drop-watches" and request.method == "POST":
            self.store.drop_watchers()
        elif action == "faults/expire-history" and request.method == "POST":
            self.store.expire_history()
        elif action == "faults/stall-watches" and request.method == "POST":
            self.watch_settings.stalled = q.get("stalled", "true") == "true"
        elif action == "faults/delay" and request.method == "POST":
            self.faults.delay = float(q.get("seconds", "0"))
        elif action == "requests" and request.method == "GET":
            since = float(q.get("since", "0"))
            records = [r.__dict__ for r in self.faults.log if r.time >= since]
            return json_response({"items": records})
        else:
            raise StatusError(404, "NotFound", f"no test hook {action}")
        return json_response({"status": "ok"})


def _status_body(e: StatusError) -> bytes:
    from .encoding.jsonutil import dumps

    return dumps(e.status())


async def serve_forever(server: ApiServer) -> None:
    await server.start()
    try:
        await asyncio.Event().wait()
    finally:
        await server.stop()
