"""Raw HTTP access to the embedded API server, for the semantics tests that
need exact status codes, headers and watch streams."""

from __future__ import annotations

import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mo_operator.localcluster.controlplane import ControlPlane


class Raw:
    def __init__(self, cp: ControlPlane, session: aiohttp.ClientSession) -> None:
        self.cp = cp
        self.session = session
        self.base = cp.server.url
        self.ssl = ssl.create_default_context(cadata=cp.server.ca.cert_pem.decode())
        self.headers = {"Authorization": f"Bearer {cp.server.token}", "User-Agent": "raw-test/1.0"}

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        auth: bool = True,
    ) -> tuple[int, Any]:
        h = dict(self.headers if auth else {"User-Agent": "raw-test/1.0"})
        h.update(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h["Content-Type"] = content_type
        async with self.session.request(
            method, self.base + path, data=data, params=params, headers=h, ssl=self.ssl
        ) as resp:
            text = await resp.text()
            try:
                return resp.status, json.loads(text)
            except ValueError:
                return resp.status, text

    async def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.request("POST", path, body, **kw)

    async def put(self, path: str, body: Any, **kw: Any) -> tuple[int, Any]:
        return await self.request("PUT", path, body, **kw)

    async def patch(self, path: str, body: Any, content_type: str, **kw: Any) -> tuple[int, Any]:
        return await self.request("PATCH", path, body, content_type=content_type, **kw)

    async def delete(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return await self.request("DELETE", path, body, **kw)

    async def watch(
        self, path: str, params: dict[str, str], *, max_events: int = 1000, timeout: float = 5.0
    ) -> list[dict[str, Any]]:
        """Read watch events until the stream ends, ``max_events`` or the timeout."""
        import asyncio

        events: list[dict[str, Any]] = []
        p = dict(params, watch="true")

        async def read() -> None:
            async with self.session.get(
                self.base + path, params=p, headers=self.headers, ssl=self.ssl
            ) as resp:
                assert resp.status == 200, await resp.text()
                async for line in resp.content:
                    if line.strip():
                        events.append(json.loads(line))
                        if len(events) >= max_events:
                            return

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(read(), timeout)
        return events


@pytest.fixture
async def raw(control_plane: ControlPlane) -> AsyncIterator[Raw]:
    async with aiohttp.ClientSession() as session:
        yield Raw(control_plane, session)


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {}}
