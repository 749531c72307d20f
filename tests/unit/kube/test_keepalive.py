"""A kept-alive connection that the server closes between two calls: the second
call succeeds on a new connection, with both of our HTTP clients, while the
plain clients fail it (which shows the server really does close it)."""

from __future__ import annotations

import aiohttp
import httpx2
import pytest

from mo_operator.kube.client import keepalive

from .closing_server import BODY, ClosingServer


async def test_aiohttp_posts_again_on_a_new_connection_when_the_kept_alive_one_was_closed(
    closing: ClosingServer,
) -> None:
    async with keepalive.keepalive_session() as session:
        for _ in range(2):
            async with keepalive.request(session, "POST", closing.url, data=BODY) as resp:
                assert resp.status == 200
                assert await resp.json() == {"ok": True}
    assert closing.connections == 2
    assert closing.requests == [BODY, BODY, BODY]


async def test_a_plain_aiohttp_session_fails_the_same_second_post(closing: ClosingServer) -> None:
    async with aiohttp.ClientSession() as session:
        async with session.post(closing.url, data=BODY) as resp:
            assert resp.status == 200
        with pytest.raises((aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)):
            async with session.post(closing.url, data=BODY):
                pass


async def test_aiohttp_does_not_retry_a_failure_on_a_new_connection(silent: ClosingServer) -> None:
    async with keepalive.keepalive_session() as session:
        with pytest.raises((aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)):
            async with keepalive.request(session, "POST", silent.url, data=BODY):
                pass
    assert silent.connections == 1


async def test_httpx_posts_again_on_a_new_connection_when_the_kept_alive_one_was_closed(
    closing: ClosingServer,
) -> None:
    transport = keepalive.StaleConnectionRetry(httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport) as client:
        for _ in range(2):
            resp = await client.post(closing.url, content=BODY)
            assert resp.status_code == 200
            assert resp.json() == {"ok": True}
    assert closing.connections == 2
    assert closing.requests == [BODY, BODY, BODY]


async def test_a_plain_httpx_client_fails_the_same_second_post(closing: ClosingServer) -> None:
    async with httpx2.AsyncClient() as client:
        assert (await client.post(closing.url, content=BODY)).status_code == 200
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.post(closing.url, content=BODY)


async def test_httpx_does_not_retry_a_failure_on_a_new_connection(silent: ClosingServer) -> None:
    transport = keepalive.StaleConnectionRetry(httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport) as client:
        with pytest.raises(httpx2.RemoteProtocolError):
            await client.post(silent.url, content=BODY)
    assert silent.connections == 1


async def test_httpx_keeps_a_caller_trace_and_sees_every_event(closing: ClosingServer) -> None:
    events: list[str] = []

    async def trace(name: str, info: object) -> None:
        events.append(name)

    transport = keepalive.StaleConnectionRetry(httpx2.AsyncHTTPTransport())
    async with httpx2.AsyncClient(transport=transport) as client:
        await client.post(closing.url, content=BODY, extensions={"trace": trace})
    assert "connection.connect_tcp.started" in events
