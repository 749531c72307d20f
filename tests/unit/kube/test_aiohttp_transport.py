"""The operator's transport: httpx's requests sent over aiohttp, answered with httpx's
types and errors, streaming as they arrive, under Go's keep-alive rule."""

from __future__ import annotations

import asyncio
import http.server
import socket
import threading
from collections.abc import AsyncIterator

import httpx2
import pytest
from aiohttp import web

from mo_operator.kube.client.aiohttp_transport import AiohttpTransport

from .closing_server import BODY, ClosingServer


class Server:
    """An aiohttp server on loopback whose handlers a test sets."""

    def __init__(self) -> None:
        self.app = web.Application()
        self.seen: list[tuple[str, str, bytes, dict[str, str]]] = []
        self.release = asyncio.Event()
        self.app.router.add_route("*", "/echo", self.echo)
        self.app.router.add_get("/watch", self.watch)
        self.app.router.add_get("/slow", self.slow)
        self.url = ""

    async def echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.seen.append((request.method, request.path_qs, body, dict(request.headers)))
        return web.json_response({"got": len(body)}, status=201, reason="Made", headers={"X-Seen": "yes"})

    async def watch(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        await response.write(b'{"type":"ADDED"}\n')
        await self.release.wait()
        await response.write(b'{"type":"DELETED"}\n')
        await response.write_eof()
        return response

    async def slow(self, request: web.Request) -> web.Response:
        await self.release.wait()
        return web.Response(text="late")


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    s = Server()
    runner = web.AppRunner(s.app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    s.url = f"http://127.0.0.1:{port}"
    try:
        yield s
    finally:
        s.release.set()
        await runner.cleanup()


async def test_a_request_and_its_answer_go_through_as_httpx_sent_and_would_read_them(server: Server) -> None:
    async with httpx2.AsyncClient(transport=AiohttpTransport(False), base_url=server.url) as client:
        response = await client.patch(
            "/echo", params={"fieldManager": "op"}, content=BODY, headers={"Content-Type": "application/json"}
        )
    assert (response.status_code, response.reason_phrase) == (201, "Made")
    assert response.json() == {"got": len(BODY)}
    assert response.headers["x-seen"] == "yes"
    method, path, body, headers = server.seen[0]
    assert (method, path, body) == ("PATCH", "/echo?fieldManager=op", BODY)
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Length"] == str(len(BODY)), "one Content-Length, aiohttp's"


async def test_a_watch_reads_each_event_as_it_arrives(server: Server) -> None:
    async with httpx2.AsyncClient(transport=AiohttpTransport(False), base_url=server.url) as client:
        request = client.build_request("GET", "/watch", timeout=httpx2.Timeout(5, read=None))
        response = await client.send(request, stream=True)
        chunks = response.aiter_raw()
        first = await asyncio.wait_for(anext(chunks), 5)
        assert first == b'{"type":"ADDED"}\n', "the first event came before the server ended the stream"
        server.release.set()
        rest = b"".join([chunk async for chunk in chunks])
        await response.aclose()
    assert rest == b'{"type":"DELETED"}\n'


async def test_a_post_goes_again_on_a_new_connection_when_the_kept_alive_one_was_closed(
    closing: ClosingServer,
) -> None:
    async with httpx2.AsyncClient(transport=AiohttpTransport(False)) as client:
        for _ in range(2):
            response = await client.post(closing.url, content=BODY)
            assert response.json() == {"ok": True}
    assert closing.connections == 2
    assert closing.requests == [BODY, BODY, BODY]


async def test_a_failure_on_a_new_connection_is_not_retried_and_reads_as_httpx_error(
    silent: ClosingServer,
) -> None:
    async with httpx2.AsyncClient(transport=AiohttpTransport(False)) as client:
        with pytest.raises((httpx2.RemoteProtocolError, httpx2.ReadError)):
            await client.post(silent.url, content=BODY)
    assert silent.connections == 1


async def test_a_port_nobody_listens_on_is_a_connect_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    async with httpx2.AsyncClient(transport=AiohttpTransport(False)) as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")


async def test_an_answer_slower_than_the_read_timeout_is_a_read_timeout(server: Server) -> None:
    async with httpx2.AsyncClient(transport=AiohttpTransport(False), base_url=server.url) as client:
        with pytest.raises(httpx2.ReadTimeout):
            await client.get("/slow", timeout=httpx2.Timeout(5, read=0.2))


class _Ok(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return None


def test_one_transport_serves_one_event_loop_after_another() -> None:
    """An aiohttp session belongs to the loop that made it: a client made before any
    loop runs, used by one ``asyncio.run`` after another, makes one per loop."""
    listener = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Ok)
    threading.Thread(target=listener.serve_forever, daemon=True).start()
    transport = AiohttpTransport(False)
    client = httpx2.AsyncClient(transport=transport)
    url = f"http://127.0.0.1:{listener.server_address[1]}/"

    async def once() -> int:
        return (await client.get(url)).status_code

    try:
        assert [asyncio.run(once()) for _ in range(2)] == [204, 204]
    finally:
        asyncio.run(transport.aclose())
        listener.shutdown()
