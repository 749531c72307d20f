"""Kubernetes Events about our objects, recorded like client-go's
``tools/record`` package so ``kubectl describe`` stays readable and the API
server is not flooded by a controller that fails in a loop.

Each ``event()`` call goes through the same three steps as client-go's
``EventCorrelator`` (events_cache.go), in the same order:

1. **aggregation**: similar events (same object, type and reason) with
   ``AGGREGATE_MAX_EVENTS`` distinct messages within ``AGGREGATE_INTERVAL``
   seconds are folded into one "(combined from similar events): ..." event;
2. **dedupe**: an event identical to an earlier one (same object, type,
   reason, message) increments that Event's ``count`` and ``lastTimestamp``
   with a PATCH instead of creating a new Event;
3. **spam filter**: a token bucket per object and type (burst 25, one token
   per 5 minutes) drops what exceeds it, so an object that is always failing
   leaves a bounded trail. Its dedupe count still grows, so the next event
   that gets through reports every occurrence.

Writes happen on a background task, so a slow or unreachable API server
never blocks a reconcile: ``event()`` only updates in-memory state. Pending
writes are keyed by the event they update, so a burst of repeats while the
server is slow becomes one write with the final count.

**Secrets**: messages are written as given and Events are readable by anyone
who may list Events in the namespace. Callers must never put secret values
(passwords, keys, credentials, connection strings with tokens) in a reason or
message; name the Secret instead.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from .backoff import Backoff

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"
EVENT_TYPES = (NORMAL, WARNING)

AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
AGGREGATE_PREFIX = "(combined from similar events): "
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
CACHE_SIZE = 4096  # per cache, as client-go's maxLruCacheEntries
MAX_PENDING = 1000  # as client-go's maxQueuedEvents
MAX_TRIES = 12  # as client-go's maxTriesPerEvent

_REF_FIELDS = ("apiVersion", "kind", "name", "namespace", "uid", "resourceVersion")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


class EventNotFound(Exception):
    """Raised by ``EventSink.patch`` when the Event no longer exists (HTTP 404,
    e.g. expired by the server's event TTL); the recorder creates it anew."""


class EventRejected(Exception):
    """Raised by the sink when the server refused the write for good (HTTP 4xx
    other than 404 and 429: invalid, already exists, namespace terminating);
    the recorder drops the event instead of retrying."""


class EventSink(Protocol):
    """Where Events go: the core/v1 ``events`` resource of the API server.

    Any exception other than ``EventNotFound``/``EventRejected`` counts as
    transient (network, 5xx, 429) and the write is retried with backoff.
    """

    async def create(self, namespace: str, event: dict[str, Any]) -> object: ...

    async def patch(self, namespace: str, name: str, patch: dict[str, Any]) -> object:
        """A merge patch of ``count``, ``lastTimestamp`` and ``message``."""
        ...


def object_reference(obj: Mapping[str, Any]) -> dict[str, str]:
    """The ``involvedObject`` for an object, or for a reference passed as is."""
    meta = obj.get("metadata")
    if isinstance(meta, Mapping):
        source = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
        source.update({k: meta.get(k) for k in _REF_FIELDS[2:]})
    else:
        source = {k: obj.get(k) for k in _REF_FIELDS}
    return {k: str(v) for k, v in source.items() if v}


def format_timestamp(epoch: float) -> str:
    """RFC 3339 in UTC with whole seconds, as metav1.Time serialises."""
    return datetime.datetime.fromtimestamp(epoch, datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


KT = TypeVar("KT")
VT = TypeVar("VT")


class _LRU(Generic[KT, VT]):
    """Bounded memory for the correlator's caches, as client-go's ``lru``."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[KT, VT] = OrderedDict()

    def get(self, key: KT) -> VT | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: KT, value: VT) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        if len(self._items) > self._size:
            self._items.popitem(last=False)


class _SpamBucket:
    """A passive token bucket: unlike ``ratelimit.TokenBucket.reserve`` a
    refused event takes nothing, so a spamming object is not punished for
    longer the more it spams (client-go's ``TryAccept``)."""

    def __init__(self, qps: float, burst: int, now: float) -> None:
        self.qps = qps
        self.burst = burst
        self.tokens = float(burst)
        self.last = now

    def try_take(self, now: float) -> bool:
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


@dataclass
class _Aggregate:
    messages: set[str]
    last: float


@dataclass
class _Observation:
    count: int
    first_timestamp: str
    name: str


@dataclass
class _Write:
    namespace: str
    event: dict[str, Any]
    update: bool


class EventRecorder:
    """Records Events as ``component`` running on ``host`` (the pod name).

    ``clock`` returns epoch seconds; tests pass a fake one. ``retry_backoff``
    makes the backoff for one write's retries (default 0.5 s doubling to 10 s).
    """

    def __init__(
        self,
        sink: EventSink,
        component: str,
        host: str = "",
        *,
        clock: Callable[[], float] = time.time,
        spam_qps: float = SPAM_QPS,
        spam_burst: int = SPAM_BURST,
        aggregate_max_events: int = AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = AGGREGATE_INTERVAL,
        cache_size: int = CACHE_SIZE,
        max_pending: int = MAX_PENDING,
        max_tries: int = MAX_TRIES,
        retry_backoff: Callable[[], Backoff] | None = None,
    ) -> None:
        self.sink = sink
        self.component = component
        self.host = host
        self._clock = clock
        self._spam_qps = spam_qps
        self._spam_burst = spam_burst
        self._aggregate_max = aggregate_max_events
        self._aggregate_interval = aggregate_interval
        self._max_pending = max_pending
        self._max_tries = max_tries
        self._retry_backoff = retry_backoff or (lambda: Backoff(0.5, 10.0, 2.0, jitter=0.5))
        self._aggregates: _LRU[tuple[str, ...], _Aggregate] = _LRU(cache_size)
        self._observations: _LRU[tuple[str, ...], _Observation] = _LRU(cache_size)
        self._spam: _LRU[tuple[str, ...], _SpamBucket] = _LRU(cache_size)
        self._pending: dict[tuple[str, ...], _Write] = {}
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._writer: asyncio.Task[None] | None = None
        self._closed = False
        self._last_name_ns = 0
        self.dropped = 0  # events lost to a full backlog or exhausted retries

    # ------------------------------------------------------------ recording
    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        """Record an event about ``obj`` (the object itself or an object
        reference). Never blocks and never raises for API trouble; raises
        ``ValueError`` for a type other than Normal/Warning. ``message`` must
        not contain secret values (see the module doc)."""
        if type not in EVENT_TYPES:
            raise ValueError(f"event type must be one of {EVENT_TYPES}, not {type!r}")
        ref = object_reference(obj)
        if not ref.get("kind") or not ref.get("name"):
            log.error(
                "cannot report event %s %r about an object without kind and name: %r", type, reason, ref
            )
            return
        if self._closed:
            log.debug("recorder closed, not reporting %s %s", reason, message)
            return
        now = self._clock()
        event = self._new_event(ref, type, reason, message, now)
        key = self._aggregate(event, now)
        update = self._observe(event, key)
        if not self._spam_accepts(event, now):
            log.debug("event %s about %s/%s rate limited", reason, ref.get("kind"), ref["name"])
            return
        self._enqueue(key, _Write(event["metadata"]["namespace"], event, update))

    def _new_event(
        self, ref: dict[str, str], type: str, reason: str, message: str, now: float
    ) -> dict[str, Any]:
        stamp = format_timestamp(now)
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": self._event_name(ref["name"], now),
                "namespace": ref.get("namespace") or "default",
            },
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "reportingComponent": self.component,
            "reportingInstance": self.host,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }

    def _event_name(self, ref_name: str, now: float) -> str:
        """``<name>.<hex nanoseconds>`` as client-go, kept unique even when
        the clock does not move between two events."""
        self._last_name_ns = max(int(now * 1e9), self._last_name_ns + 1)
        name = f"{ref_name}.{self._last_name_ns:x}"
        if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
            return str(uuid.uuid4())
        return name

    def _object_key(self, event: dict[str, Any]) -> tuple[str, ...]:
        ref = event["involvedObject"]
        return (self.component, self.host, *(ref.get(k, "") for k in _REF_FIELDS[:5]), event["type"])

    def _aggregate(self, event: dict[str, Any], now: float) -> tuple[str, ...]:
        """Fold ``event`` into a combined one when its (object, type, reason)
        saw too many distinct messages lately; return its dedupe key."""
        group = (*self._object_key(event), event["reason"])
        record = self._aggregates.get(group)
        if record is None or now - record.last > self._aggregate_interval:
            record = _Aggregate(set(), now)
        record.messages.add(event["message"])
        record.last = now
        self._aggregates.put(group, record)
        if len(record.messages) < self._aggregate_max:
            return ("event", *group, event["message"])
        record.messages.pop()  # stay bounded, as client-go
        event["message"] = AGGREGATE_PREFIX + event["message"]
        return ("aggregate", *group)

    def _observe(self, event: dict[str, Any], key: tuple[str, ...]) -> bool:
        """Count a repeat of a known event; True if it updates an existing one."""
        seen = self._observations.get(key)
        if seen is not None:
            event["metadata"]["name"] = seen.name
            event["firstTimestamp"] = seen.first_timestamp
            event["count"] = seen.count + 1
        self._observations.put(
            key, _Observation(event["count"], event["firstTimestamp"], event["metadata"]["name"])
        )
        return seen is not None

    def _spam_accepts(self, event: dict[str, Any], now: float) -> bool:
        key = self._object_key(event)
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = _SpamBucket(self._spam_qps, self._spam_burst, now)
        self._spam.put(key, bucket)
        return bucket.try_take(now)

    def _enqueue(self, key: tuple[str, ...], write: _Write) -> None:
        pending = self._pending.get(key)
        if pending is not None:
            # Not yet sent: send the newest state instead. A pending create
            # stays a create (now with the higher count).
            pending.event = write.event
            pending.update = pending.update and write.update
        elif len(self._pending) >= self._max_pending:
            self.dropped += 1
            log.warning(
                "event backlog full (%d), dropping event %s", self._max_pending, write.event["reason"]
            )
            return
        else:
            self._pending[key] = write
        self._idle.clear()
        self._wakeup.set()
        self._ensure_writer()

    # -------------------------------------------------------------- writing
    def _ensure_writer(self) -> None:
        if self._writer is not None and not self._writer.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the writer starts with the next call inside one
        self._writer = loop.create_task(self._run(), name=f"event-writer-{self.component}")

    async def _run(self) -> None:
        while True:
            if not self._pending:
                self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            key = next(iter(self._pending))
            write = self._pending.pop(key)
            try:
                await self._deliver(write)
            except asyncio.CancelledError:
                raise
            except Exception:  # a bug here must not silence all later events
                log.exception("writing event %s failed", write.event["metadata"]["name"])

    async def _deliver(self, write: _Write) -> None:
        backoff = self._retry_backoff()
        for attempt in range(1, self._max_tries + 1):
            try:
                await self._write(write)
                return
            except EventRejected as e:
                log.info("server rejected event %s (not retrying): %s", write.event["metadata"]["name"], e)
                return
            except Exception as e:
                if attempt == self._max_tries:
                    break
                log.warning("writing event %s failed (will retry): %s", write.event["metadata"]["name"], e)
                await asyncio.sleep(backoff.next())
        self.dropped += 1
        log.error("giving up on event %s after %d tries", write.event["metadata"]["name"], self._max_tries)

    async def _write(self, write: _Write) -> None:
        event = write.event
        if write.update:
            patch = {k: event[k] for k in ("count", "lastTimestamp", "message")}
            try:
                await self.sink.patch(write.namespace, event["metadata"]["name"], patch)
                return
            except EventNotFound:
                pass  # expired on the server: create it again, count and all
        await self.sink.create(write.namespace, event)

    async def flush(self) -> None:
        """Wait until every event recorded so far was written or given up."""
        self._ensure_writer()
        await self._idle.wait()

    async def close(self, timeout: float = 5.0) -> None:
        """Write what is pending (up to ``timeout`` seconds), then stop."""
        self._closed = True
        if self._writer is None:
            return
        try:
            await asyncio.wait_for(self.flush(), timeout)
        except TimeoutError:
            self.dropped += len(self._pending)
            log.warning("dropping %d unwritten events at shutdown", len(self._pending))
        self._writer.cancel()
        await asyncio.gather(self._writer, return_exceptions=True)
        self._writer = None
