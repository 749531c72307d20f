"""Controllers: the wiring from informer events to a work queue of object
keys, and workers that call a level-based reconcile for each key.

``For(kind)`` enqueues the object itself, ``Owns(kind)`` enqueues the
controller owner of a changed object, ``Watches(kind, mapper)`` enqueues
whatever the mapper returns. Predicates filter update events (as
controller-runtime's GenerationChangedPredicate and friends; owned and
watched kinds by default pass only updates of something the cache keeps);
creates and deletes always pass, so nothing is missed after a restart or a
relist.

A controller starts its workers once every cache it reads has synced: the
sources it watches, and the caches its reconciles read besides (``reads``).
Reconciles run inside a ``reads.reading`` scope of those caches, so a read of
one that has not synced (or, ``strict_reads`` on, one not declared) raises
``CacheNotSynced`` and the key is requeued instead of acted on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..cache.reads import CacheNotSynced, Syncable, UndeclaredRead, reading, scope_of
from ..meta.objects import meta_of
from ..metrics.metrics import (
    ACTIVE_WORKERS,
    MAX_CONCURRENT_RECONCILES,
    RECONCILE_ERRORS,
    RECONCILE_TIME,
    RECONCILE_TOTAL,
)
from .outcome import Later, expected, reconciling, routine
from .workqueue import QueueShutDown, WorkQueue

log = logging.getLogger(__name__)
Obj = Any  # a cached object: a read-only mapping


@dataclass(frozen=True, order=True)
class Request:
    """What a reconcile is asked to look at: one object by namespace and name."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True)
class Result:
    """``requeue_after``: look again after this many seconds even if nothing changes;
    ``later`` says why, when the reconciler said."""

    requeue_after: float | None = None
    later: Later | None = None


class ReportedError(Exception):
    """A reconcile failed and its reconciler already said so (a condition, an Event, a
    log line with the traceback the first time): the controller only counts it and
    retries with backoff. The failure is its ``__cause__``."""


Reconcile = Callable[[Request], Awaitable["Result | None"]]
Mapper = Callable[[Obj], Iterable[Request]]
UpdatePredicate = Callable[[Obj, Obj], bool]


class ReconcileObserver(Protocol):
    """Told when each reconcile starts and ends (benchmarks, diagnostics): what
    metrics cannot say, which key and exactly when."""

    def started(self, controller: str, req: Request) -> None: ...

    def finished(self, controller: str, req: Request) -> None: ...


class EventSource(Protocol):
    """An informer, as far as a controller needs one."""

    def add_event_handler(
        self,
        on_add: Callable[[Obj], None],
        on_update: Callable[[Obj, Obj], None],
        on_delete: Callable[[Obj], None],
    ) -> None: ...


# ------------------------------------------------------------------ predicates
def generation_changed(old: Obj, new: Obj) -> bool:
    return meta_of(old).generation != meta_of(new).generation


def labels_changed(old: Obj, new: Obj) -> bool:
    return meta_of(old).labels != meta_of(new).labels


def annotations_changed(old: Obj, new: Obj) -> bool:
    return meta_of(old).annotations != meta_of(new).annotations


def deletion_started(old: Obj, new: Obj) -> bool:
    return meta_of(new).deleting and not meta_of(old).deleting


def finalizers_changed(old: Obj, new: Obj) -> bool:
    return meta_of(old).finalizers != meta_of(new).finalizers


def kept_changed(old: Obj, new: Obj) -> bool:
    """Something the cache keeps changed, not only the resource version: an update of a
    field the cache's transform drops (a status no controller reads, managed fields)
    cannot change a decision, so it wakes no one. The default for owned and watched
    kinds. Unchanged parts of a cached object are usually shared with its previous
    version, so the test is mostly identity checks."""
    if len(old) != len(new):
        return True
    for key, value in new.items():
        was = old.get(key, _MISSING)
        if value is was:
            continue
        if key == "metadata" and isinstance(was, Mapping) and isinstance(value, Mapping):
            if _meta_changed(was, value):
                return True
        elif value != was:
            return True
    return False


_MISSING = object()


def _meta_changed(was: Mapping[str, Any], meta: Mapping[str, Any]) -> bool:
    if len(was) != len(meta):
        return True
    for key, value in meta.items():
        if key != "resourceVersion" and value is not (before := was.get(key, _MISSING)) and value != before:
            return True
    return False


def any_of(*predicates: UpdatePredicate) -> UpdatePredicate:
    return lambda old, new: any(p(old, new) for p in predicates)


#: What our own kinds react to by default: spec changes, labels, annotations
#: (pause, restart), deletion and finalizers — but not our own status writes.
DEFAULT_PREDICATE = any_of(
    generation_changed, labels_changed, annotations_changed, deletion_started, finalizers_changed
)


def request_for(obj: Obj) -> Request:
    meta = meta_of(obj)
    return Request(meta.namespace, meta.name)


def owner_mapper(api_version: str, kind: str) -> Mapper:
    """Map an owned object to its controller owner of the given type
    (controller-runtime's EnqueueRequestForOwner with OnlyControllerOwner)."""
    group = api_version.rpartition("/")[0]

    def mapper(obj: Obj) -> Iterable[Request]:
        meta = meta_of(obj)
        for ref in meta.owner_references:
            if (
                ref.get("controller")
                and ref.get("kind") == kind
                and ref.get("apiVersion", "").rpartition("/")[0] == group
            ):
                return [Request(meta.namespace, ref.get("name", ""))]
        return []

    return mapper


# ----------------------------------------------------------------- controller
class Controller:
    def __init__(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        max_concurrent: int = 1,
        queue: WorkQueue[Request] | None = None,
    ) -> None:
        self.name = name
        self.reconcile = reconcile
        self.max_concurrent = max_concurrent
        self.queue: WorkQueue[Request] = queue or WorkQueue(name)
        self._workers: list[asyncio.Task[None]] = []
        self.reconciles = 0
        self.observers: list[ReconcileObserver] = []
        self.caches: list[object] = []
        """Every cache this controller watches or reads: what it waits for to start."""
        self.strict_reads = False
        """Refuse reads of caches not in ``caches`` (tests), besides reads of unsynced ones."""
        self.started_at: float | None = None
        """``time.monotonic()`` when the workers started."""
        self._scope = scope_of(name, (), strict=False)

    # ---------------------------------------------------------------- wiring
    def watch(self, source: EventSource, mapper: Mapper, predicate: UpdatePredicate | None = None) -> None:
        self._declare(source)

        def enqueue(obj: Obj) -> None:
            for req in mapper(obj):
                self.queue.add(req)

        def on_update(old: Obj, new: Obj) -> None:
            if predicate is None or predicate(old, new):
                enqueue(new)

        source.add_event_handler(enqueue, on_update, enqueue)

    def for_(self, source: EventSource, predicate: UpdatePredicate | None = DEFAULT_PREDICATE) -> Controller:
        self.watch(source, lambda obj: [request_for(obj)], predicate)
        return self

    def owns(
        self,
        source: EventSource,
        owner_api_version: str,
        owner_kind: str,
        predicate: UpdatePredicate | None = kept_changed,
    ) -> Controller:
        self.watch(source, owner_mapper(owner_api_version, owner_kind), predicate)
        return self

    def watches(
        self, source: EventSource, mapper: Mapper, predicate: UpdatePredicate | None = kept_changed
    ) -> Controller:
        self.watch(source, mapper, predicate)
        return self

    def reads(self, *sources: object) -> Controller:
        """Caches the reconciles read without watching them: the controller starts
        once these have synced too."""
        for source in sources:
            self._declare(source)
        return self

    def _declare(self, source: object) -> None:
        if all(source is not known for known in self.caches):
            self.caches.append(source)

    def has_synced(self) -> bool:
        return all(c.has_synced() for c in self.caches if isinstance(c, Syncable))

    async def wait_synced(self) -> None:
        """Until every cache this controller watches or reads has synced."""
        for cache in self.caches:
            if isinstance(cache, Syncable):
                await cache.wait_synced()

    @property
    def idle(self) -> bool:
        """Nothing queued and nothing being reconciled (delayed requeues aside)."""
        return not self.queue.busy

    # --------------------------------------------------------------- running
    def start(self) -> None:
        """Start the workers (the caller waits for ``wait_synced`` first)."""
        MAX_CONCURRENT_RECONCILES.labels(self.name).set(self.max_concurrent)
        self.started_at = time.monotonic()
        self._scope = scope_of(self.name, self.caches, strict=self.strict_reads)
        self._workers = [
            asyncio.create_task(self._worker(), name=f"{self.name}-worker-{i}")
            for i in range(self.max_concurrent)
        ]

    async def stop(self, timeout: float = 30.0) -> None:
        """Let in-flight reconciles finish (up to ``timeout``), then stop."""
        self.queue.shutdown(drain=False)
        if not self._workers:
            return
        _, pending = await asyncio.wait(self._workers, timeout=timeout)
        for t in pending:
            t.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    async def _worker(self) -> None:
        while True:
            try:
                req = await self.queue.get()
            except QueueShutDown:
                return
            try:
                await self._process(req)
            finally:
                self.queue.done(req)

    async def _process(self, req: Request) -> None:
        with reconciling() as rid:
            await self._reconcile_once(req, rid)

    async def _reconcile_once(self, req: Request, rid: str) -> None:
        ACTIVE_WORKERS.labels(self.name).inc()
        started = time.perf_counter()
        for observer in self.observers:
            observer.started(self.name, req)
        try:
            with reading(self._scope):
                result = await self.reconcile(req)
        except asyncio.CancelledError:
            raise
        except CacheNotSynced as e:
            RECONCILE_TOTAL.labels(self.name, "requeue").inc()
            log.log(
                logging.ERROR if isinstance(e, UndeclaredRead) else logging.INFO,
                "reconcile of %s requeued: %s",
                req,
                e,
                extra={"controller": self.name, "object": str(req), "reconcileID": rid},
            )
            self.queue.add_rate_limited(req)
            return
        except ReportedError as e:
            RECONCILE_ERRORS.labels(self.name).inc()
            RECONCILE_TOTAL.labels(self.name, "error").inc()
            log.debug(
                "reconcile of %s failed (will retry): %s",
                req,
                e.__cause__,
                extra={"controller": self.name, "object": str(req), "reconcileID": rid},
            )
            self.queue.add_rate_limited(req)
            return
        except Exception as e:
            RECONCILE_ERRORS.labels(self.name).inc()
            RECONCILE_TOTAL.labels(self.name, "error").inc()
            log.log(
                logging.DEBUG if routine(e) else logging.WARNING,
                "reconcile of %s failed (will retry): %s",
                req,
                e,
                extra={"controller": self.name, "object": str(req), "reconcileID": rid},
                exc_info=not expected(e),
            )
            self.queue.add_rate_limited(req)
            return
        finally:
            RECONCILE_TIME.labels(self.name).observe(time.perf_counter() - started)
            ACTIVE_WORKERS.labels(self.name).dec()
            self.reconciles += 1
            for observer in self.observers:
                observer.finished(self.name, req)
        self.queue.forget(req)
        if result is not None and result.requeue_after is not None:
            RECONCILE_TOTAL.labels(self.name, "requeue_after").inc()
            if result.later is not None:
                log.debug("%s: %s", req, result.later, extra={"controller": self.name, "object": str(req)})
            self.queue.add_after(req, result.requeue_after)
        else:
            RECONCILE_TOTAL.labels(self.name, "success").inc()
