"""Watch streams (Kubernetes docs, "API Concepts: Efficient detection of
changes" and "Watch bookmarks"): one JSON event per line, BOOKMARK events
when ``allowWatchBookmarks=true``, and an ``ERROR`` event whose Status has
code 410 / reason ``Expired`` (or an HTTP 410) when the resourceVersion is
too old — which we raise as ``WatchExpired``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest
from lightkube import KubeConfig
from lightkube.resources.core_v1 import Pod

from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.watch import WatchExpired, decode_event
from mo_operator.kube.meta.errors import ApiError

from .test_client import KUBECONFIG


def client_streaming(
    *chunks: bytes, status: int = 200, seen: list[httpx2.Request] | None = None
) -> ApiClient:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    def handler(request: httpx2.Request) -> httpx2.Response:
        if seen is not None:
            seen.append(request)
        if status != 200:
            return httpx2.Response(
                status, content=b"".join(chunks), headers={"Content-Type": "application/json"}
            )
        return httpx2.Response(200, content=body())

    return ApiClient(KubeConfig.from_dict(KUBECONFIG), transport=httpx2.MockTransport(handler), qps=None)


async def collect(client: ApiClient, **kw: object) -> list[tuple[str, dict[str, object]]]:
    return [e async for e in client.watch(Pod, "ns", **kw)]  # type: ignore[arg-type]


async def test_events_split_across_chunks_and_bookmarks_are_yielded() -> None:
    seen: list[httpx2.Request] = []
    c = client_streaming(
        b'{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"11"}}}\n{"type":"MODI',
        b'FIED","object":{"metadata":{"name":"a","resourceVersion":"12"}}}\n\n',
        b'{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"20"}}}\n'
        b'{"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"21"}}}',
        seen=seen,
    )
    events = await collect(c, resource_version="10", timeout_seconds=300, label_selector="app=web")
    assert [(t, o["metadata"]["resourceVersion"]) for t, o in events] == [  # type: ignore[index]
        ("ADDED", "11"),
        ("MODIFIED", "12"),
        ("BOOKMARK", "20"),
        ("DELETED", "21"),
    ]
    params = seen[0].url.params
    assert seen[0].url.path == "/api/v1/namespaces/ns/pods"
    assert (
        params["watch"],
        params["resourceVersion"],
        params["allowWatchBookmarks"],
        params["timeoutSeconds"],
        params["labelSelector"],
    ) == ("true", "10", "true", "300", "app=web")


async def test_expired_error_event_raises_watch_expired_after_earlier_events() -> None:
    c = client_streaming(
        b'{"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"11"}}}\n',
        b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",'
        b'"message":"too old resource version: 1 (50)","reason":"Expired","code":410}}\n',
    )
    received = []
    with pytest.raises(WatchExpired) as info:
        async for event in c.watch(Pod, "ns", resource_version="1"):
            received.append(event)
    assert len(received) == 1
    assert info.value.status == 410 and "too old" in info.value.message


async def test_http_410_and_other_failures() -> None:
    gone = (
        b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Gone","code":410,"message":"gone"}'
    )
    with pytest.raises(WatchExpired):
        await collect(client_streaming(gone, status=410), resource_version="1")
    forbidden = b'{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"no"}'
    with pytest.raises(ApiError) as info:
        await collect(client_streaming(forbidden, status=403))
    assert info.value.status == 403 and not isinstance(info.value, WatchExpired)


def test_error_events_other_than_expiry_are_api_errors() -> None:
    with pytest.raises(ApiError) as info:
        decode_event(
            b'{"type":"ERROR","object":{"kind":"Status","code":500,"reason":"InternalError","message":"x"}}'
        )
    assert info.value.status == 500 and not isinstance(info.value, WatchExpired)
    with pytest.raises(ValueError):
        decode_event(b'{"type":"ADDED"')
    with pytest.raises(ValueError):
        decode_event(b'{"type":"SOMETHING","object":{}}')
