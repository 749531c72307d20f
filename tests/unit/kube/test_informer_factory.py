"""One informer per (resource, namespace, selector), shared by all who ask,
started and synced together (client-go ``informers/factory.go``,
controller-runtime ``pkg/cache/informer_cache.go``: an informer requested
after start is started at once). Also the thin ListerWatcher over the
client, end to end through an ``httpx.MockTransport``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from lightkube import KubeConfig
from lightkube.resources.core_v1 import ConfigMap, Namespace

from mo_operator.kube.cache.informer import PAGE_SIZE
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource

from .fakes import FakeListerWatcher, FakeServer
from .informer_helpers import eventually
from .test_client import KUBECONFIG


def factory_on(server: FakeServer, made: list[tuple[Resource, str | None, str | None]]) -> InformerFactory:
    def source(res: Resource, namespace: str | None, selector: str | None) -> FakeListerWatcher:
        made.append((res, namespace, selector))
        return FakeListerWatcher(server, namespace=namespace)

    return InformerFactory(lister_watcher=source)


async def test_informers_are_shared_per_scope_and_synced_together() -> None:
    server = FakeServer()
    server.create("a", namespace="x")
    made: list[tuple[Resource, str | None, str | None]] = []
    f = factory_on(server, made)
    one = f.informer(ConfigMap)
    assert f.informer(Resource.of(ConfigMap)) is one
    assert f.informer(ConfigMap, label_selector={"matchLabels": {"app": "web"}}) is f.informer(
        ConfigMap, label_selector="app=web"
    )
    scoped = f.informer(ConfigMap, "x")
    assert scoped is not one
    assert f.informer(Namespace, "ignored-for-cluster-scoped") is f.informer(Namespace)
    assert len(f.informers) == 4 and len(made) == 4
    assert made[1][2] == "app=web"
    assert not f.has_synced()
    await f.start()
    try:
        assert await f.wait_synced(2)
        assert f.has_synced()
        assert scoped.get("x", "a") is not None
        late = f.informer(ConfigMap, "y")  # asked for after start: runs at once
        assert await f.wait_synced(2) and late.has_synced() and late.running
    finally:
        await f.stop()
    assert not any(i.running for i in f.informers)


async def test_wait_synced_times_out_while_an_informer_cannot_list() -> None:
    server = FakeServer()
    f = InformerFactory(lister_watcher=lambda r, n, s: _NeverLists())
    f.informer(ConfigMap)
    await f.start()
    try:
        assert await f.wait_synced(0.05) is False
        assert not f.has_synced()
    finally:
        await f.stop()
    del server


async def test_indexers_requested_through_the_factory() -> None:
    server = FakeServer()
    server.create("a", v="1")
    f = factory_on(server, [])

    def by_value(o: Any) -> list[str]:
        return [o.get("data", {}).get("v", "")]

    inf = f.informer(ConfigMap, indexers={"v": by_value})
    assert f.informer(ConfigMap, indexers={"v": by_value}) is inf  # same function again: fine
    await f.start()
    try:
        await f.wait_synced(2)
        assert [o["metadata"]["name"] for o in inf.by_index("v", "1")] == ["a"]
    finally:
        await f.stop()


class _NeverLists:
    async def list(self, *, limit: int | None, continue_: str | None) -> Any:
        raise ConnectionRefusedError("api down")

    def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[Any]:
        raise AssertionError("never reached")


async def test_client_lister_watcher_lists_then_watches_with_bookmarks() -> None:
    requests: list[httpx2.Request] = []

    async def stream() -> AsyncIterator[bytes]:
        yield (
            json.dumps(
                {
                    "type": "ADDED",
                    "object": {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {"name": "b", "namespace": "ns", "resourceVersion": "8", "uid": "u2"},
                    },
                }
            ).encode()
            + b"\n"
        )
        await asyncio.Event().wait()  # then quiet until the informer stops

    def handler(request: httpx2.Request) -> httpx2.Response:
        requests.append(request)
        if request.url.params.get("watch") == "true":
            return httpx2.Response(200, content=stream())
        return httpx2.Response(
            200,
            json={
                "kind": "ConfigMapList",
                "apiVersion": "v1",
                "metadata": {"resourceVersion": "7"},
                "items": [
                    {
                        "metadata": {
                            "name": "a",
                            "namespace": "ns",
                            "resourceVersion": "5",
                            "uid": "u1",
                            "managedFields": [{"manager": "x"}],
                        }
                    }
                ],
            },
        )

    client = ApiClient(KubeConfig.from_dict(KUBECONFIG), transport=httpx2.MockTransport(handler), qps=None)
    f = InformerFactory(client, watch_timeout=60)
    inf = f.informer(ConfigMap, "ns", "app=web")
    await f.start()
    try:
        assert await f.wait_synced(2)
        await eventually(lambda: inf.get("ns", "b") is not None)
        a = inf.get("ns", "a")
        assert a is not None and a["kind"] == "ConfigMap" and "managedFields" not in a["metadata"]
        first, watch = requests[0], requests[1]
        assert first.url.path == "/api/v1/namespaces/ns/configmaps"
        assert first.url.params["labelSelector"] == "app=web" and first.url.params["limit"] == str(PAGE_SIZE)
        assert (
            watch.url.params["resourceVersion"] == "7" and watch.url.params["allowWatchBookmarks"] == "true"
        )
        assert 60 <= int(watch.url.params["timeoutSeconds"]) < 120
    finally:
        await f.stop()
        await client.close()
