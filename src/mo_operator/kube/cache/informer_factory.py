"""One informer per (resource, namespace scope, label selector), shared by
every controller that asks for it — client-go's ``SharedInformerFactory``
and controller-runtime's informer cache.

Sharing matters twice: one list+watch per resource instead of one per
controller (API server load, memory), and one cache that all controllers
read. Informers asked for before ``start()`` start with it; ones asked for
later start at once (controller-runtime does the same), and ``wait_synced``
covers them all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ..client.client import ApiClient
from ..client.resource import Resource, ResourceLike
from ..meta.selectors import SelectorLike, as_selector
from .cache import IndexFunc
from .informer import SharedInformer, Transform
from .listwatch import ClientListerWatcher, ListerWatcher
from .shared_values import SharedValues

InformerKey = tuple[Resource, str | None, str]
ListerWatcherFactory = Callable[[Resource, str | None, str | None], ListerWatcher]


class InformerFactory:
    def __init__(
        self,
        client: ApiClient | None = None,
        *,
        lister_watcher: ListerWatcherFactory | None = None,
        transforms: Mapping[Resource, Transform] | None = None,
        **informer_options: Any,
    ) -> None:
        """Either ``client`` (real API) or ``lister_watcher`` (a factory of
        list/watch sources, for tests). ``informer_options`` go to every
        ``SharedInformer`` (page size, timeouts, backoff, transform).
        Every informer freezes through one ``SharedValues``, so a part equal
        in objects of different kinds is stored once. ``transforms``: the
        transform of a resource's informers, where it is not the default
        (what the cache need not keep of that kind)."""
        if lister_watcher is None:
            if client is None:
                raise ValueError("need a client or a lister_watcher factory")
            api = client

            def lister_watcher(res: Resource, namespace: str | None, selector: str | None) -> ListerWatcher:
                return ClientListerWatcher(api, res, namespace, selector)

        self._make_source = lister_watcher
        self._options = {"shared_values": SharedValues(), **informer_options}
        self._transforms = dict(transforms or {})
        self._informers: dict[InformerKey, SharedInformer] = {}
        self._started = False

    def informer(
        self,
        resource: ResourceLike,
        namespace: str | None = None,
        label_selector: SelectorLike | None = None,
        *,
        indexers: Mapping[str, IndexFunc] | None = None,
    ) -> SharedInformer:
        """The shared informer for this scope, created on first use.
        ``indexers`` are added to it; asking again for one it has is fine, a
        different function under a name already taken is an error."""
        res = Resource.of(resource)
        scope = namespace if res.namespaced else None
        selector = str(as_selector(label_selector))
        key: InformerKey = (res, scope, selector)
        informer = self._informers.get(key)
        if informer is None:
            name = res.group_resource + (f"/{scope}" if scope else "") + (f"?{selector}" if selector else "")
            source = self._make_source(res, scope, selector or None)
            options = dict(self._options)
            if res in self._transforms:
                options["transform"] = self._transforms[res]
            informer = SharedInformer(source, name=name, **options)
            self._informers[key] = informer
            if self._started:
                informer.start()
        for index_name, fn in (indexers or {}).items():
            if informer.store.indexer(index_name) is not fn:
                informer.store.add_indexer(index_name, fn)
        return informer

    @property
    def informers(self) -> list[SharedInformer]:
        return list(self._informers.values())

    @property
    def resources(self) -> list[Resource]:
        """Every resource an informer watches, once each: what the API server
        must serve before the caches can sync."""
        return sorted({key[0] for key in self._informers}, key=str)

    async def start(self) -> None:
        self._started = True
        for informer in self._informers.values():
            informer.start()

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self._informers.values())

    async def wait_synced(self, timeout: float | None = None) -> bool:
        """True once every informer (including ones added meanwhile) has synced."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            pending = [i for i in self._informers.values() if not i.has_synced()]
            if not pending:
                return True
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            if not await pending[0].wait_synced(remaining):
                return False

    async def stop(self) -> None:
        self._started = False
        await asyncio.gather(*(i.stop() for i in self._informers.values()))
