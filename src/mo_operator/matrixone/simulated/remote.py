"""The simulated MatrixOne's admin interface over HTTP, for an operator in
another process.

The simulated MatrixOne runs where the workload simulator runs (the
``mo-operator control-plane`` process, or a test process driving a real API
server), but the operator may run elsewhere: as ``mo-operator run``, or as
a child process a fault test kills. ``AdminServer`` serves the admin calls
on loopback (bearer token), ``RemoteAdminProvider`` is the ``MOAdminProvider``
an operator uses to reach it. Its address travels in the kubeconfig, as a
cluster extension kubectl ignores, so ``mo-operator run --kubeconfig FILE``
against a simulated cluster needs no other flag.

Errors keep their meaning across the wire: ``StoreNotFound`` stays
``StoreNotFound``, everything else (unreachable HAKeeper, timeouts, the
server itself gone) is ``AdminError``.
"""

from __future__ import annotations

import enum
import secrets
from collections.abc import Mapping
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import aiohttp
import yaml
from aiohttp import web

from mo_operator.kube import keepalive
from mo_operator.kube.keepalive import keepalive_session
from mo_operator.matrixone.admin import (
    AdminError,
    CNLoad,
    CNStore,
    HAKeeperPhase,
    HAKeeperState,
    LogStore,
    MOAdminProvider,
    NodeState,
    StoreNotFound,
    TNStore,
    WorkState,
)
from mo_operator.matrixone.advertised_admin import EXTENSION, advertised_admin

Obj = dict[str, Any]


# ------------------------------------------------------------------- wire format
def _plain(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.name
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _labels(raw: Mapping[str, Any] | None) -> dict[str, tuple[str, ...]]:
    return {str(k): tuple(str(x) for x in v) for k, v in (raw or {}).items()}


def state_from_json(raw: Mapping[str, Any]) -> HAKeeperState:
    return HAKeeperState(
        phase=HAKeeperPhase[raw["phase"]],
        tick=int(raw["tick"]),
        log_stores=tuple(
            LogStore(s["uuid"], s["service_address"], int(s["tick"]), NodeState[s["state"]])
            for s in raw["log_stores"]
        ),
        tn_stores=tuple(
            TNStore(
                s["uuid"],
                s["service_address"],
                int(s["tick"]),
                NodeState[s["state"]],
                s.get("lock_service_address", ""),
                s.get("logtail_server_address", ""),
            )
            for s in raw["tn_stores"]
        ),
        cn_stores=tuple(
            CNStore(
                s["uuid"],
                s["service_address"],
                s["sql_address"],
                int(s["tick"]),
                NodeState[s["state"]],
                WorkState[s["work_state"]],
                s.get("lock_service_address", ""),
                s.get("query_address", ""),
                _labels(s.get("labels")),
            )
            for s in raw["cn_stores"]
        ),
    )


# ------------------------------------------------------------------------ server
class AdminServer:
    """Serves ``provider`` on ``host:port`` (0: any free port) for remote operators."""

    def __init__(self, provider: MOAdminProvider, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.provider = provider
        self.host = host
        self.port = port
        self.token = secrets.token_urlsafe(24)
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> None:
        app = web.Application(middlewares=[self._auth])
        app.router.add_post("/v1/{method}", self._call)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.TCPSite(self._runner, self.host, self.port).start()
        if self.port == 0:
            self.port = int(self._runner.addresses[0][1])

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @web.middleware
    async def _auth(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if not secrets.compare_digest(request.headers.get("Authorization", ""), f"Bearer {self.token}"):
            return web.json_response({"error": "Unauthorized", "message": "bad token"}, status=401)
        response: web.StreamResponse = await handler(request)
        return response

    async def _call(self, request: web.Request) -> web.Response:
        body = await request.json()
        admin = self.provider.admin(str(body.get("address", "")))
        method = request.match_info["method"]
        uuid = str(body.get("uuid", ""))
        try:
            if method == "hakeeper_state":
                return web.json_response(_plain(await admin.hakeeper_state()))
            if method == "cn_load":
                return web.json_response(_plain(await admin.cn_load(uuid)))
            if method == "set_cn_work_state":
                raw_labels = body.get("labels")
                await admin.set_cn_work_state(
                    uuid, WorkState[body["state"]], _labels(raw_labels) if raw_labels is not None else None
                )
            elif method == "set_cn_labels":
                await admin.set_cn_labels(uuid, _labels(body.get("labels")))
            elif method == "delete_cn_store":
                await admin.delete_cn_store(uuid)
            elif method == "can_restart_cn":
                return web.json_response({"ok": await admin.can_restart_cn(uuid)})
            elif method == "set_restart_cn":
                return web.json_response({"ok": await admin.set_restart_cn(uuid)})
            elif method == "remain_txn_count":
                return web.json_response({"count": await admin.remain_txn_count(uuid)})
            else:
                return web.json_response({"error": "NotFound", "message": f"no method {method}"}, status=404)
        except StoreNotFound as e:
            return web.json_response({"error": "StoreNotFound", "message": str(e)}, status=404)
        except AdminError as e:
            return web.json_response({"error": "AdminError", "message": str(e)}, status=503)
        return web.json_response({})


# ------------------------------------------------------------------------ client
class RemoteAdmin:
    """``MOAdmin`` of one discovery address, through an ``AdminServer``."""

    def __init__(self, provider: RemoteAdminProvider, address: str) -> None:
        self._provider = provider
        self.address = address

    async def _call(self, method: str, **body: Any) -> Any:
        return await self._provider.call(method, {"address": self.address, **body})

    async def hakeeper_state(self) -> HAKeeperState:
        return state_from_json(await self._call("hakeeper_state"))

    async def cn_load(self, uuid: str) -> CNLoad:
        raw = await self._call("cn_load", uuid=uuid)
        return CNLoad(int(raw["sessions"]), int(raw.get("pipelines", 0)), int(raw.get("replicas", 0)))

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        await self._call(
            "set_cn_work_state",
            uuid=uuid,
            state=state.name,
            labels=None if labels is None else _plain(labels),
        )

    async def set_cn_labels(self, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        await self._call("set_cn_labels", uuid=uuid, labels=_plain(labels))

    async def delete_cn_store(self, uuid: str) -> None:
        await self._call("delete_cn_store", uuid=uuid)

    async def can_restart_cn(self, uuid: str) -> bool:
        return bool((await self._call("can_restart_cn", uuid=uuid))["ok"])

    async def set_restart_cn(self, uuid: str) -> bool:
        return bool((await self._call("set_restart_cn", uuid=uuid))["ok"])

    async def remain_txn_count(self, uuid: str) -> int:
        return int((await self._call("remain_txn_count", uuid=uuid))["count"])


class RemoteAdminProvider:
    """The ``MOAdminProvider`` of an operator whose simulated MatrixOne runs elsewhere."""

    def __init__(self, url: str, token: str, *, timeout: float = 10.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._admins: dict[str, RemoteAdmin] = {}

    def admin(self, discovery_address: str) -> RemoteAdmin:
        found = self._admins.get(discovery_address)
        if found is None:
            found = self._admins[discovery_address] = RemoteAdmin(self, discovery_address)
        return found

    async def call(self, method: str, body: Obj) -> Any:
        if self._session is None:
            self._session = keepalive_session(
                headers={"Authorization": f"Bearer {self.token}"},
                timeout=aiohttp.ClientTimeout(total=self.timeout),
            )
        try:
            async with keepalive.request(self._session, "POST", f"{self.url}/v1/{method}", json=body) as resp:
                answer = await resp.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as e:
            raise AdminError(f"{method}: the simulated MatrixOne at {self.url} did not answer: {e}") from e
        if resp.status == 404 and answer.get("error") == "StoreNotFound":
            raise StoreNotFound(answer.get("message", ""))
        if resp.status >= 400:
            raise AdminError(f"{method}: {answer.get('message') or answer}")
        return answer

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


# --------------------------------------------------------------------- discovery
def publish(kubeconfig: str | Path, url: str, token: str) -> None:
    """Record the admin server in the kubeconfig's cluster(s), as an extension."""
    path = Path(kubeconfig)
    config = yaml.safe_load(path.read_text())
    for cluster in config.get("clusters") or ():
        extensions = [e for e in cluster["cluster"].get("extensions") or () if e.get("name") != EXTENSION]
        extensions.append({"name": EXTENSION, "extension": {"url": url, "token": token}})
        cluster["cluster"]["extensions"] = extensions
    path.write_text(yaml.safe_dump(config, sort_keys=False))


def discover(kubeconfig: str | Path) -> RemoteAdminProvider | None:
    """The admin server a kubeconfig's current cluster advertises, if any."""
    found = advertised_admin(kubeconfig)
    return RemoteAdminProvider(*found) if found is not None else None
