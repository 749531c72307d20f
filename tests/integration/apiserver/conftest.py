"""Raw HTTP access to the embedded API server, for the semantics tests that
need exact status codes, headers and watch streams."""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client import keepalive

from .raw_http import RawClient


class Raw(RawClient):
    """The embedded server's raw client, with its control plane at hand for
    tests that tune it (watch settings, fault hooks)."""

    def __init__(self, cp: ControlPlane, session: aiohttp.ClientSession) -> None:
        tls = ssl.create_default_context(cadata=cp.server.ca.cert_pem.decode())
        super().__init__(cp.server.url, session, tls, cp.server.token, "raw-test/1.0")
        self.cp = cp

    async def watch(
        self, path: str, params: dict[str, str], *, max_events: int = 1000, timeout: float = 5.0
    ) -> list[dict[str, Any]]:
        """Read watch events until the stream ends, ``max_events`` or the timeout."""
        events: list[dict[str, Any]] = []
        p = dict(params, watch="true")

        async def read() -> None:
            async with self.session.get(
                self.base + path, params=p, headers=self.headers(), ssl=self.ssl
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
    async with keepalive.keepalive_session() as session:
        yield Raw(control_plane, session)


def cm(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data or {}}
