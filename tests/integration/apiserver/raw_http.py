"""Raw HTTP access to an API server (the embedded one or a real
kube-apiserver), for tests that need exact status codes, headers, bodies
and watch streams rather than what a client library makes of them."""

from __future__ import annotations

import json
import ssl
from typing import Any, NamedTuple

import aiohttp

from mo_operator.kube.client import keepalive

JSON = "application/json"


class Reply(NamedTuple):
    """One HTTP answer: the code and the decoded JSON body (text if not JSON).
    A tuple, so ``code, body = await raw.get(...)`` reads it too."""

    code: int
    body: Any

    def record(self) -> dict[str, Any]:
        return {"code": self.code, "body": self.body}


class RawClient:
    """Requests with a bearer token over the server's TLS, bodies sent as
    given (bytes or text) or as JSON."""

    def __init__(
        self, base: str, session: aiohttp.ClientSession, tls: ssl.SSLContext, token: str, user_agent: str
    ) -> None:
        self.base = base
        self.session = session
        self.ssl = tls
        self.token = token
        self.user_agent = user_agent

    def headers(self, *, auth: bool = True) -> dict[str, str]:
        h = {"User-Agent": self.user_agent}
        if auth:
            h["Authorization"] = f"Bearer {self.token}"
        return h

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = JSON,
        accept: str | None = None,
        headers: dict[str, str] | None = None,
        auth: bool = True,
    ) -> Reply:
        h = self.headers(auth=auth)
        if accept:
            h["Accept"] = accept
        h.update(headers or {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            h["Content-Type"] = content_type
        async with keepalive.request(
            self.session, method, self.base + path, data=data, params=params, headers=h, ssl=self.ssl
        ) as resp:
            text = await resp.text()
        try:
            return Reply(resp.status, json.loads(text))
        except ValueError:
            return Reply(resp.status, text)

    async def get(self, path: str, **kw: Any) -> Reply:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body: Any, **kw: Any) -> Reply:
        return await self.request("POST", path, body, **kw)

    async def put(self, path: str, body: Any, **kw: Any) -> Reply:
        return await self.request("PUT", path, body, **kw)

    async def patch(self, path: str, body: Any, content_type: str, **kw: Any) -> Reply:
        return await self.request("PATCH", path, body, content_type=content_type, **kw)

    async def delete(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return await self.request("DELETE", path, body, **kw)
