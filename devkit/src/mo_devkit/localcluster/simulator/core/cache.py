"""A watched, indexed local copy of one kind: list, then watch from the
list's resourceVersion, relist on 410 Gone, on errors and periodically (a
silently stalled stream must not freeze the simulated cluster).

Writers feed their results back with :meth:`ObjectCache.apply` so the next
decision sees its own writes before the watch delivers them; versions only
move forward, so a late watch event cannot undo a newer write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from .kinds import Kind
from .kubeapi import KubeApi, KubeError
from .objects import Obj, key_of, resource_version_of, uid_of

log = logging.getLogger(__name__)

Key = tuple[str, str]
#: Called with the event type ("ADDED", "MODIFIED", "DELETED"), the old and the new object.
Handler = Callable[[str, Obj | None, Obj | None], None]
IndexFn = Callable[[Obj], Iterable[str]]


def _newer(candidate: str, current: str) -> bool:
    """Whether ``candidate`` is a later resourceVersion than ``current``.

    Versions are opaque by contract, but both etcd and the embedded server
    count upwards, which lets write-through and watch agree; anything
    non-numeric is taken as newer.
    """
    if candidate.isdigit() and current.isdigit():
        return int(candidate) > int(current)
    return candidate != current


class ObjectCache:
    def __init__(
        self,
        api: KubeApi,
        kind: Kind,
        *,
        namespace: str | None = None,
        fields: dict[str, str] | None = None,
        relist_period: float = 60.0,
        watch_timeout: int = 55,
        retry_delay: float = 0.5,
    ) -> None:
        self.api = api
        self.kind = kind
        self.namespace = namespace
        self.fields = fields
        self.relist_period = relist_period
        self.watch_timeout = watch_timeout
        self.retry_delay = retry_delay
        self.synced = asyncio.Event()
        self._objects: dict[Key, Obj] = {}
        self._tombstones: dict[Key, str] = {}
        self._handlers: list[Handler] = []
        self._index_fns: dict[str, IndexFn] = {}
        self._indexes: dict[str, dict[str, set[Key]]] = {}
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------- reading
    def get(self, namespace: str, name: str) -> Obj | None:
        return self._objects.get((namespace, name))

    def objects(self, namespace: str | None = None) -> list[Obj]:
        if namespace is None:
            return list(self._objects.values())
        return [o for (ns, _), o in self._objects.items() if ns == namespace]

    def add_index(self, name: str, fn: IndexFn) -> None:
        self._index_fns[name] = fn
        idx: dict[str, set[Key]] = {}
        for k, o in self._objects.items():
            for v in fn(o):
                idx.setdefault(v, set()).add(k)
        self._indexes[name] = idx

    def by_index(self, name: str, value: str) -> list[Obj]:
        keys = self._indexes[name].get(value, ())
        return [self._objects[k] for k in sorted(keys) if k in self._objects]

    def add_handler(self, handler: Handler) -> None:
        self._handlers.append(handler)

    # ------------------------------------------------------------- writing
    def apply(self, obj: Obj) -> None:
        """Take an object the server returned from a write."""
        self._upsert(obj)

    def forget(self, namespace: str, name: str, uid: str | None = None) -> None:
        """Drop an object the server reported deleted; with ``uid``, only that
        object. A deletion's response may come after the watch brought the
        object's successor under the same name (a StatefulSet pod recreated
        within milliseconds): dropping that one would hide it until a relist."""
        k = (namespace, name)
        cached = self._objects.get(k)
        if uid is not None and cached is not None and uid_of(cached) != uid:
            return
        self._remove(k, "")

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"watch {self.kind}")
        synced = asyncio.ensure_future(self.synced.wait())
        done, _ = await asyncio.wait({synced, self._task}, return_when=asyncio.FIRST_COMPLETED)
        if synced not in done:
            synced.cancel()
            self._task.result()  # raise what killed the watcher

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                rv = await self._relist()
                await self._watch(rv)
            except asyncio.CancelledError:
                raise
            except KubeError as e:
                if not e.gone:
                    log.info("watch of %s failed (%s); relisting", self.kind, e)
                    await asyncio.sleep(self.retry_delay)
            except Exception as e:  # a dropped connection, a timeout
                log.info("watch of %s broke (%r); relisting", self.kind, e)
                await asyncio.sleep(self.retry_delay)

    async def _relist(self) -> str:
        items, rv = await self.api.list_all(self.kind, self.namespace, self.fields)
        fresh = {key_of(o): o for o in items}
        for k in list(self._objects):
            if k not in fresh:
                self._remove(k, "", force=True)
        self._tombstones.clear()
        for o in items:
            self._upsert(o, force=True)
        self.synced.set()
        return rv

    async def _watch(self, rv: str) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.relist_period):
                async for etype, obj in self.api.watch(
                    self.kind, rv, self.watch_timeout, self.namespace, self.fields
                ):
                    if etype == "DELETED":
                        self._remove(key_of(obj), resource_version_of(obj))
                    elif etype in ("ADDED", "MODIFIED"):
                        self._upsert(obj)

    # ------------------------------------------------------------ internals
    def _upsert(self, obj: Obj, *, force: bool = False) -> None:
        k = key_of(obj)
        rv = resource_version_of(obj)
        old = self._objects.get(k)
        if not force:
            dead = self._tombstones.get(k)
            if dead is not None and not _newer(rv, dead):
                return
            if old is not None and not _newer(rv, resource_version_of(old)):
                return
        elif old is not None and resource_version_of(old) == rv:
            return
        self._tombstones.pop(k, None)
        self._objects[k] = obj
        self._reindex(k, old, obj)
        self._notify("MODIFIED" if old is not None else "ADDED", old, obj)

    def _remove(self, k: Key, rv: str, *, force: bool = False) -> None:
        old = self._objects.get(k)
        if old is None:
            if rv:
                self._tombstones[k] = rv
            return
        if not force and rv and _newer(resource_version_of(old), rv):
            return
        del self._objects[k]
        self._tombstones[k] = rv or resource_version_of(old)
        self._reindex(k, old, None)
        self._notify("DELETED", old, None)

    def _reindex(self, k: Key, old: Obj | None, new: Obj | None) -> None:
        for name, fn in self._index_fns.items():
            idx = self._indexes[name]
            if old is not None:
                for v in fn(old):
                    bucket = idx.get(v)
                    if bucket is not None:
                        bucket.discard(k)
                        if not bucket:
                            del idx[v]
            if new is not None:
                for v in fn(new):
                    idx.setdefault(v, set()).add(k)

    def _notify(self, etype: str, old: Obj | None, new: Obj | None) -> None:
        for h in self._handlers:
            try:
                h(etype, old, new)
            except Exception:  # a handler bug must not stop the watch
                log.exception("handler for %s failed", self.kind)


class Caches:
    """One cache per kind, shared by every simulated component (the shared
    informers of a controller manager)."""

    def __init__(self, api: KubeApi, **options: Any) -> None:
        self.api = api
        self.options = options
        self._caches: dict[Kind, ObjectCache] = {}

    def __getitem__(self, kind: Kind) -> ObjectCache:
        c = self._caches.get(kind)
        if c is None:
            c = self._caches[kind] = ObjectCache(self.api, kind, **self.options)
        return c

    def scoped(self, kind: Kind, namespace: str, fields: dict[str, str] | None = None) -> ObjectCache:
        """The cache of a kind limited to one namespace (and field selector),
        for kinds the simulator needs only a corner of (Leases, its ConfigMap)."""
        c = self._caches.get(kind)
        if c is None:
            c = self._caches[kind] = ObjectCache(
                self.api, kind, namespace=namespace, fields=fields, **self.options
            )
        return c

    def need(self, *kinds: Kind) -> None:
        """Make sure these kinds are watched (caches are made on first use)."""
        for k in kinds:
            self[k]

    def existing(self, kind: Kind) -> ObjectCache | None:
        return self._caches.get(kind)

    async def start(self) -> None:
        await asyncio.gather(*(c.start() for c in self._caches.values()))

    async def stop(self) -> None:
        await asyncio.gather(*(c.stop() for c in self._caches.values()))
