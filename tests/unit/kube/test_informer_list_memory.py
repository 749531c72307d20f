"""A paginated list keeps no page decoded longer than it takes to copy it
into the cache (``SharedInformer._list_and_replace``): holding every page
until the list ended doubled the memory at the peak of each sync, and the
allocator kept that peak as the process's size."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator
from typing import Any

from mo_operator.kube.client.client import ListPage
from mo_operator.kube.client.watch import WatchEvent
from mo_operator.kube.meta.frozen import FrozenDict

from .informer_helpers import eventually, make_informer


class Decoded(dict[str, Any]):
    """A decoded object that can be watched for collection (plain dicts take no weak references)."""


def pod(i: int) -> Decoded:
    return Decoded(
        apiVersion="v1",
        kind="Pod",
        metadata=Decoded(name=f"p{i}", namespace="ns", resourceVersion=str(10 + i), uid=f"u{i}"),
        spec=Decoded(containers=[Decoded(name="main", image="busybox")]),
    )


class PagedLister:
    """Serves ``pages`` pages of ``size`` objects; when asked for a page,
    records how many objects of the earlier pages are still alive."""

    def __init__(self, pages: int, size: int) -> None:
        self.pages = pages
        self.size = size
        self.served: list[weakref.ref[Decoded]] = []
        self.alive_when_asked: list[int] = []

    async def list(self, *, limit: int | None, continue_: str | None) -> ListPage:
        gc.collect()
        self.alive_when_asked.append(sum(ref() is not None for ref in self.served))
        n = int(continue_ or 0)
        items = [pod(n * self.size + i) for i in range(self.size)]
        self.served.extend(weakref.ref(o) for o in items)
        more = str(n + 1) if n + 1 < self.pages else None
        return ListPage(list(items), "100", more)

    async def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        await asyncio.sleep(3600)
        return
        yield  # an async generator that never yields


async def test_each_page_is_released_before_the_next_one_is_fetched() -> None:
    lister = PagedLister(pages=4, size=25)
    informer = make_informer(lister, page_size=25)
    informer.start()
    try:
        await eventually(informer.has_synced, what="sync")
        assert len(informer.store) == 100
        assert lister.alive_when_asked == [0, 0, 0, 0]
        cached = informer.get("ns", "p42")
        assert isinstance(cached, FrozenDict) and cached["spec"]["containers"][0]["image"] == "busybox"
    finally:
        await informer.stop()
