"""A shared informer: client-go's Reflector + DeltaFIFO + Indexer +
sharedIndexInformer in one asyncio task.

It lists (paginated) and then watches from the list's resourceVersion with
bookmarks, keeping ``store`` equal to the server's state and telling the
registered handlers about every change, in resourceVersion order, exactly
once each:

- a watch that ends (server timeout) or drops resumes from the last
  resourceVersion seen — an event's or a bookmark's — so nothing is missed
  and nothing repeats;
- a 410 Gone (history compacted past our version) relists and reconciles the
  cache against the list as client-go's ``DeltaFIFO.Replace`` does, minus
  its noise: adds only for new objects, updates only for objects whose
  resourceVersion changed (client-go marks the rest as "sync" updates, which
  our handlers do not want), deletes — with a ``Tombstone``, the last state
  we knew, flagged "final state unknown" — only for objects really gone; an
  object deleted and re-created under the same name meanwhile (new uid) is a
  delete followed by an add;
- a watch that goes silent (no event, no bookmark) for longer than
  ``stall_timeout`` is abandoned and restarted: a half-open connection would
  otherwise freeze the cache forever;
- failures back off exponentially, and so does a watch that the server
  closes before it delivered anything (client-go's "very short watch"); a
  watch that delivered anything, bookmarks included, resets the backoff.

Handlers are plain callables run on the event loop right after the store
changed, so they see the new state in the cache; they must be quick (a
controller's only enqueues a key). A handler registered late first receives
an add for every object already cached. Objects handed to handlers and read
from the store are frozen (see ``frozen.py``).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import random
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..client.watch import ADDED, BOOKMARK, DELETED, MODIFIED, WatchExpired
from ..flowcontrol.backoff import Backoff
from ..memory.allocator import release_freed_memory
from ..memory.collector import collector_paused
from ..meta.errors import ApiError, Gone
from ..meta.frozen import freeze
from ..meta.selectors import SelectorLike
from ..metrics.metrics import INFORMER_OBJECTS, INFORMER_RELISTS, INFORMER_WATCH_RESTARTS
from .cache import CachedObject, IndexFunc, Store, object_key
from .listwatch import ListerWatcher
from .shared_values import SharedValues

log = logging.getLogger(__name__)
Obj = dict[str, Any]
Transform = Callable[[Obj], Obj]

PAGE_SIZE = 250
"""Objects a list page asks for. Half client-go's 500: a page is decoded whole,
frozen, then dropped, and the allocator cannot give back the arenas where the
frozen copies of later pages sit between the holes of the decoded ones; with
every informer listing at once, 500 left the operator 10 MiB larger with 1,000
clusters cached (``bench/operator_memory.py``), for the same sync time."""

#: Restart reasons (the ``reason`` label of ``informer_watch_restarts``).
TIMEOUT, DROPPED, EXPIRED, STALLED, ERROR = "timeout", "dropped", "expired", "stalled", "error"


class Tombstone(Mapping[str, Any]):
    """The last known state of an object whose deletion the informer did not
    see as an event (client-go's ``DeletedFinalStateUnknown``). It reads like
    the object, so handlers that only need its name and owners just work."""

    __slots__ = ("_last", "key")
    final_state_unknown = True

    def __init__(self, key: str, last_known: Mapping[str, Any]) -> None:
        self.key = key
        self._last = freeze(last_known)

    def __getitem__(self, field: str) -> Any:
        return self._last[field]

    def __iter__(self) -> Iterator[str]:
        return iter(self._last)

    def __len__(self) -> int:
        return len(self._last)


def is_tombstone(obj: Mapping[str, Any]) -> bool:
    return isinstance(obj, Tombstone)


LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
"""The annotation of client-side ``kubectl apply``: a second copy of the object."""


def strip_managed_fields(obj: Obj) -> Obj:
    """The default transform: ``managedFields`` and ``kubectl apply``'s
    last-applied annotation are a large share of an object and no controller
    reads them (controller-runtime offers the same as
    ``TransformStripManagedFields``). Server-side apply needs neither from the
    cache: the server keeps field ownership; ``resourceVersion``, which
    optimistic writes take from the cache, stays."""
    meta = obj.get("metadata")
    if not meta:
        return obj
    annotations = meta.get("annotations")
    if "managedFields" not in meta and not (annotations and LAST_APPLIED in annotations):
        return obj
    kept = {k: v for k, v in meta.items() if k != "managedFields"}
    if annotations and LAST_APPLIED in annotations:
        kept["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    return {**obj, "metadata": kept}


def keep_spec_fields(fields: Iterable[str], then: Transform = strip_managed_fields) -> Transform:
    """A transform that keeps only ``fields`` of an object's ``spec`` (after
    ``then``): for a kind whose controllers read a few fields of a large spec
    they never write back (pods they create, or that other controllers made)."""
    kept = frozenset(fields)

    def transform(obj: Obj) -> Obj:
        obj = then(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict) or kept.issuperset(spec):
            return obj
        return {**obj, "spec": {k: v for k, v in spec.items() if k in kept}}

    return transform


@dataclass(frozen=True)
class _Handler:
    on_add: Callable[[CachedObject], None] | None
    on_update: Callable[[CachedObject, CachedObject], None] | None
    on_delete: Callable[[CachedObject], None] | None


def _rv(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid") or "")


def _rv_order(obj: Mapping[str, Any]) -> int:
    rv = _rv(obj)
    return int(rv) if rv.isdigit() else 0  # opaque versions keep the list's order (stable sort)


class SharedInformer:
    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        name: str,
        indexers: Mapping[str, IndexFunc] | None = None,
        page_size: int = PAGE_SIZE,
        watch_timeout: float = 300.0,
        stall_timeout: float | None = None,
        backoff: Callable[[], Backoff] | None = None,
        transform: Transform | None = strip_managed_fields,
        rng: random.Random | None = None,
        shared_values: SharedValues | None = None,
    ) -> None:
        """``watch_timeout``: the server-side ``timeoutSeconds`` is drawn from
        ``[watch_timeout, 2*watch_timeout)`` for each watch, as client-go does,
        so informers started together do not reconnect together.
        ``stall_timeout``: default twice the watch's own timeout.
        ``shared_values``: freezes what the store keeps, storing equal parts
        once; informers that share one also share parts across kinds (a
        pod's containers and its StatefulSet's template)."""
        self.lister_watcher = lister_watcher
        self.name = name
        self.store = Store(indexers)
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.stall_timeout = stall_timeout
        self._backoff_factory = backoff or (lambda: Backoff(initial=0.5, cap=30.0, factor=2.0, jitter=0.5))
        self._transform = transform
        self._values = shared_values or SharedValues()
        self._rng = rng or random.Random()
        self._handlers: tuple[_Handler, ...] = ()
        self._synced = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._rv = ""  # the last resourceVersion seen: the resume point
        self._current_timeout = watch_timeout
        self._progress = False  # something arrived since the last failure
        self.relists = 0
        self.restarts: dict[str, int] = {}
        self._objects_gauge = INFORMER_OBJECTS.labels(name)  # set on every change: look the child up once

    # ------------------------------------------------------------- handlers
    def add_event_handler(
        self,
        on_add: Callable[[CachedObject], None] | None = None,
        on_update: Callable[[CachedObject, CachedObject], None] | None = None,
        on_delete: Callable[[CachedObject], None] | None = None,
    ) -> None:
        handler = _Handler(on_add, on_update, on_delete)
        self._handlers = (*self._handlers, handler)
        if on_add is not None:
            for obj in sorted(self.store.list(), key=_rv_order):
                self._call(on_add, obj)

    # ------------------------------------------------------------- lifecycle
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"informer {self.name}")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def has_synced(self) -> bool:
        return self._synced.is_set()

    async def wait_synced(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self._synced.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def last_resource_version(self) -> str:
        return self._rv

    # --------------------------------------------------------------- lister
    def get(self, namespace: str | None, name: str) -> CachedObject | None:
        return self.store.get(namespace, name)

    def list(
        self, namespace: str | None = None, label_selector: SelectorLike | None = None
    ) -> list[CachedObject]:
        return self.store.list(namespace, label_selector)

    def by_index(self, index: str, value: str) -> builtins.list[CachedObject]:
        return self.store.by_index(index, value)

    # ------------------------------------------------------------- the loop
    async def _run(self) -> None:
        backoff = self._backoff_factory()
        need_list = True
        while True:
            try:
                if need_list:
                    await self._list_and_replace()
                    need_list = False
                await self._watch()
                self._restarted(TIMEOUT)  # a watch that closed at once, empty, backs off below
            except asyncio.CancelledError:
                raise
            except WatchExpired as e:
                log.info("informer %s: watch expired (%s), relisting", self.name, e.message)
                self._restarted(EXPIRED)
                need_list = True
            except _Stalled:
                log.warning("informer %s: watch silent for %.1fs, restarting it", self.name, self.stall_bound)
                self._restarted(STALLED)
            except Exception as e:
                log.warning("informer %s: %s failed: %s", self.name, "list" if need_list else "watch", e)
                self._restarted(ERROR if need_list or isinstance(e, ApiError) else DROPPED)
            if self._progress:
                backoff.reset()
                self._progress = False
            else:
                await asyncio.sleep(backoff.next())

    def _restarted(self, reason: str) -> None:
        self.restarts[reason] = self.restarts.get(reason, 0) + 1
        INFORMER_WATCH_RESTARTS.labels(self.name, reason).inc()

    async def _list_and_replace(self) -> None:
        items: list[CachedObject] = []
        token: str | None = None
        limit: int | None = self.page_size
        rv = ""
        while True:
            try:
                page = await self.lister_watcher.list(limit=limit, continue_=token)
            except Gone:
                if token is None:
                    raise
                # The snapshot behind the continue token is gone: start over
                # unpaginated, as client-go's pager does (FullListIfExpired).
                items, token, limit = [], None, None
                continue
            with collector_paused():
                items.extend(self._cacheable(raw) for raw in page.items)
            rv = page.resource_version
            token = page.continue_
            del page  # its decoded items go now, not after the next page arrives
            if not token:
                break
        if self._synced.is_set():
            self.relists += 1
            INFORMER_RELISTS.labels(self.name).inc()
        self._replace(items)
        del items
        release_freed_memory()
        self._objects_gauge.set(len(self.store))
        self._rv = rv
        self._synced.set()

    def _cacheable(self, raw: Obj) -> CachedObject:
        """``raw`` as the store keeps it: transformed, frozen, its parts shared.

        A list freezes each page as it arrives, so a page's decoded objects
        are dropped before the next page comes: keeping every page decoded
        until the list ended held a second copy of the whole cache at the
        peak of every sync and relist, and the allocator kept that peak as
        the process's size (``bench/operator_memory.py``)."""
        frozen: CachedObject = self._values.freeze(self._transform(raw) if self._transform else raw)
        return frozen

    def _replace(self, items: builtins.list[CachedObject]) -> None:
        listed: set[str] = set()
        gone: list[str] = []
        changed: list[CachedObject] = []
        for obj in items:
            key = object_key(obj)
            listed.add(key)
            old = self.store.get_by_key(key)
            if old is not None and _uid(old) != _uid(obj):
                gone.append(key)  # deleted and re-created while we were not watching
                changed.append(obj)
            elif old is None or _rv(old) != _rv(obj):
                changed.append(obj)
        gone.extend(k for k in self.store.list_keys() if k not in listed)
        for key in gone:
            self._delete(key, None)
        for obj in sorted(changed, key=_rv_order):
            self._upsert(obj)

    async def _watch(self) -> None:
        timeout = int(self.watch_timeout + self._rng.random() * self.watch_timeout) or 1
        self._current_timeout = timeout
        stall = self.stall_bound
        events = self.lister_watcher.watch(resource_version=self._rv, timeout_seconds=timeout)
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(stall) as deadline:
                async for event_type, obj in events:
                    deadline.reschedule(loop.time() + stall)
                    self._progress = True
                    self._handle(event_type, obj)
        except TimeoutError as e:
            if deadline.expired():
                raise _Stalled from e
            raise
        finally:
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                with contextlib.suppress(Exception):
                    await aclose()

    @property
    def stall_bound(self) -> float:
        """Seconds of silence after which the current watch counts as stalled."""
        return self.stall_timeout or 2.0 * self._current_timeout

    def _handle(self, event_type: str, obj: Obj) -> None:
        rv = _rv(obj)
        if event_type == BOOKMARK:
            self._rv = rv or self._rv
            return
        cached = self._cacheable(obj)
        key = object_key(cached)
        if event_type in (ADDED, MODIFIED):
            old = self.store.get_by_key(key)
            if old is not None and _uid(old) != _uid(cached):
                self._delete(key, None)  # its DELETED event never reached us
            elif old is not None and _rv(old) == rv:
                self._rv = rv or self._rv
                return  # already delivered
            self._upsert(cached)
        elif event_type == DELETED:
            self._delete(key, cached)
        self._rv = rv or self._rv

    # --------------------------------------------------- store + dispatch
    def _upsert(self, obj: Mapping[str, Any]) -> None:
        new, old = self.store.upsert(obj)
        self._objects_gauge.set(len(self.store))
        for h in self._handlers:
            if old is None:
                if h.on_add is not None:
                    self._call(h.on_add, new)
            elif h.on_update is not None:
                self._call(h.on_update, old, new)

    def _delete(self, key: str, final: CachedObject | None) -> None:
        """Drop ``key``; tell handlers its final state, or a tombstone when
        we did not see it (``final`` None). Unknown keys are ignored: their
        add was never delivered, so neither is their delete."""
        old = self.store.remove(key)
        if old is None:
            return
        self._objects_gauge.set(len(self.store))
        gone: Mapping[str, Any] = final if final is not None else Tombstone(key, old)
        for h in self._handlers:
            if h.on_delete is not None:
                self._call(h.on_delete, gone)

    def _call(self, fn: Callable[..., None], *args: Mapping[str, Any]) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("informer %s: event handler failed", self.name)


class _Stalled(Exception):
    """No event and no bookmark within the stall bound."""
