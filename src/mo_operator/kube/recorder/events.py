"""Kubernetes Events about our objects, recorded like client-go's
``tools/record`` package so ``kubectl describe`` stays readable and the API
server is not flooded by a controller that fails in a loop.

Each ``event()`` goes through client-go's ``EventCorrelator``
(``event_correlator.py``): similar Events are aggregated into one, repeats
update an Event's ``count`` instead of creating another, and a spam filter
bounds how many Events one object gets.

Writes happen on background tasks, so a slow or unreachable API server
never blocks a reconcile: ``event()`` only updates in-memory state. Pending
writes are keyed by the event they update, so a burst of repeats while the
server is slow becomes one write with the final count.

**Load**: the writes share the client's rate limit with every reconcile
worker, so while many clusters converge the Events fall behind (a 50-cluster
converge at 50 qps records about 1,600 Events faster than one writer could
send them, and a backlog of client-go's 1,000 dropped hundreds). So
``MAX_IN_FLIGHT`` writers send them (never two writes of one Event at once:
a patch must not overtake its create) and the backlog holds ``MAX_PENDING``
(about 2 KB each): Events are written late under load, not lost. Whatever is
lost anyway is counted in ``events_dropped_total{reason}``, and logged as a
summary at most once per ``DROP_LOG_SECONDS``, never once per event.

**Secrets**: messages are written as given and Events are readable by anyone
who may list Events in the namespace. Callers must never put secret values
(passwords, keys, credentials, connection strings with tokens) in a reason or
message; name the Secret instead.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import re
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..flowcontrol.backoff import Backoff
from ..meta.times import format_time
from ..metrics.metrics import EVENTS_DROPPED
from .event_correlator import (
    AGGREGATE_INTERVAL,
    AGGREGATE_MAX_EVENTS,
    CACHE_SIZE,
    SPAM_BURST,
    SPAM_QPS,
    EventCorrelator,
    Key,
)

log = logging.getLogger(__name__)

NORMAL = "Normal"
WARNING = "Warning"
EVENT_TYPES = (NORMAL, WARNING)

MAX_PENDING = 10_000
MAX_IN_FLIGHT = 4
MAX_TRIES = 12  # as client-go's maxTriesPerEvent
DROP_LOG_SECONDS = 60.0

#: ``events_dropped_total`` reasons.
BACKLOG_FULL, RETRIES_EXHAUSTED, SHUTDOWN = "backlog_full", "retries_exhausted", "shutdown"
REJECTED, SPAM_FILTER = "rejected", "spam_filter"
LOST = frozenset((BACKLOG_FULL, RETRIES_EXHAUSTED, SHUTDOWN))
"""Reasons that lose an Event the operator meant to write (``EventRecorder.dropped``);
the other two are decisions: the server's, or the spam filter's, as in client-go."""

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


@dataclass
class _Write:
    namespace: str
    event: dict[str, Any]
    update: bool


class EventRecorder:
    """Records Events as ``component`` running on ``host`` (the pod name).

    ``clock`` returns epoch seconds; tests pass a fake one. ``retry_backoff``
    makes the backoff for one write's retries (default 0.5 s doubling to 10 s).
    ``dropped`` counts the Events lost (reasons in ``LOST``).
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
        max_in_flight: int = MAX_IN_FLIGHT,
        max_tries: int = MAX_TRIES,
        drop_log_seconds: float = DROP_LOG_SECONDS,
        retry_backoff: Callable[[], Backoff] | None = None,
    ) -> None:
        self.sink = sink
        self.component = component
        self.host = host
        self._clock = clock
        self._correlator = EventCorrelator(
            spam_qps=spam_qps,
            spam_burst=spam_burst,
            aggregate_max_events=aggregate_max_events,
            aggregate_interval=aggregate_interval,
            cache_size=cache_size,
        )
        self._max_pending = max_pending
        self._max_in_flight = max_in_flight
        self._max_tries = max_tries
        self._drop_log_seconds = drop_log_seconds
        self._retry_backoff = retry_backoff or (lambda: Backoff(0.5, 10.0, 2.0, jitter=0.5))
        self._pending: dict[Key, _Write] = {}
        self._in_flight: set[Key] = set()
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._writers: list[asyncio.Task[None]] = []
        self._closed = False
        self._last_name_ns = 0
        self.dropped = 0
        self._unreported: collections.Counter[str] = collections.Counter()
        self._reported_at = float("-inf")

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
        correlation = self._correlator.correlate(event, now)
        if correlation is None:
            log.debug("event %s about %s/%s rate limited", reason, ref.get("kind"), ref["name"])
            self._drop(SPAM_FILTER)
            return
        self._enqueue(correlation.key, _Write(event["metadata"]["namespace"], event, correlation.update))

    def _new_event(
        self, ref: dict[str, str], type: str, reason: str, message: str, now: float
    ) -> dict[str, Any]:
        stamp = format_time(now)
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

    def _enqueue(self, key: Key, write: _Write) -> None:
        pending = self._pending.get(key)
        if pending is not None:
            # Not yet sent: send the newest state instead. A pending create
            # stays a create (now with the higher count).
            pending.event = write.event
            pending.update = pending.update and write.update
        elif len(self._pending) >= self._max_pending:
            self._drop(BACKLOG_FULL)
            return
        else:
            self._pending[key] = write
        self._idle.clear()
        self._wakeup.set()
        self._ensure_writers()

    def _drop(self, reason: str, count: int = 1) -> None:
        """Count ``count`` events not written; say so at most once per
        ``drop_log_seconds`` (the spam filter's decisions only in the metric:
        they are by design, and an object that keeps failing would log them)."""
        EVENTS_DROPPED.labels(reason).inc(count)
        if reason in LOST:
            self.dropped += count
        if reason == SPAM_FILTER:
            return
        self._unreported[reason] += count
        now = self._clock()
        if now - self._reported_at >= self._drop_log_seconds:
            self._report_drops(now)

    def _report_drops(self, now: float) -> None:
        if not self._unreported:
            return
        log.warning(
            "dropped %d events since the last report (%s); events_dropped_total counts each,"
            " this says so at most every %.0fs",
            sum(self._unreported.values()),
            ", ".join(f"{reason}: {n}" for reason, n in sorted(self._unreported.items())),
            self._drop_log_seconds,
        )
        self._unreported.clear()
        self._reported_at = now

    # -------------------------------------------------------------- writing
    def _ensure_writers(self) -> None:
        self._writers = [w for w in self._writers if not w.done()]
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop yet: the writers start with the next call inside one
        while len(self._writers) < self._max_in_flight:
            name = f"event-writer-{self.component}-{len(self._writers)}"
            self._writers.append(loop.create_task(self._run(), name=name))

    def _next_key(self) -> Key | None:
        """The oldest pending write whose Event no other writer is sending."""
        return next((key for key in self._pending if key not in self._in_flight), None)

    async def _run(self) -> None:
        while True:
            key = self._next_key()
            if key is None:
                if not self._pending and not self._in_flight:
                    self._idle.set()
                self._wakeup.clear()
                await self._wakeup.wait()
                continue
            write = self._pending.pop(key)
            self._in_flight.add(key)
            try:
                await self._deliver(write)
            except asyncio.CancelledError:
                self._drop(SHUTDOWN)
                raise
            except Exception:  # a bug here must not silence all later events
                log.exception("writing event %s failed", write.event["metadata"]["name"])
            finally:
                self._in_flight.discard(key)
                self._wakeup.set()  # a newer write of this Event may have waited for this one

    async def _deliver(self, write: _Write) -> None:
        backoff = self._retry_backoff()
        for attempt in range(1, self._max_tries + 1):
            try:
                await self._write(write)
                return
            except EventRejected as e:
                log.debug("server rejected event %s (not retrying): %s", write.event["metadata"]["name"], e)
                self._drop(REJECTED)
                return
            except Exception as e:
                if attempt == self._max_tries:
                    break
                log.debug("writing event %s failed (will retry): %s", write.event["metadata"]["name"], e)
                await asyncio.sleep(backoff.next())
        self._drop(RETRIES_EXHAUSTED)

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
        self._ensure_writers()
        await self._idle.wait()

    async def close(self, timeout: float = 5.0) -> None:
        """Write what is pending (up to ``timeout`` seconds), then stop; what
        is still unwritten is counted and said, however recently drops were."""
        self._closed = True
        if not self._writers:
            return
        try:  # asyncio.timeout: wait_for (3.11) may swallow a cancellation as it completes
            async with asyncio.timeout(timeout):
                await self.flush()
        except TimeoutError:
            self._drop(SHUTDOWN, len(self._pending))
            self._pending.clear()
        for writer in self._writers:
            writer.cancel()  # an in-flight write counts itself as a shutdown drop
        await asyncio.gather(*self._writers, return_exceptions=True)
        self._writers = []
        self._report_drops(self._clock())
