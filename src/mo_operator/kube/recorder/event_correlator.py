"""client-go's ``EventCorrelator`` (tools/record/events_cache.go): what the
event recorder does with each new Event before writing it, so a controller
failing in a loop leaves a readable, bounded trail instead of flooding the
API server and ``kubectl describe``.

Three steps, in client-go's order:

1. **aggregation**: similar Events (same source, object, type and reason)
   with ``AGGREGATE_MAX_EVENTS`` distinct messages within
   ``AGGREGATE_INTERVAL`` seconds become one "(combined from similar
   events): ..." Event;
2. **dedupe**: an Event identical to an earlier one (similar, and the same
   message) updates that Event (``count``, ``lastTimestamp``) instead of
   creating another;
3. **spam filter**: a token bucket per source, object and type (burst 25,
   one token per 5 minutes) refuses what exceeds it. A refused Event was
   still counted in step 2, so the next one that passes reports every
   occurrence.

Pure bookkeeping on an event dict and a clock reading; the recorder owns the
writing. Memory is bounded by LRU caches, as client-go's.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

AGGREGATE_MAX_EVENTS = 10
AGGREGATE_INTERVAL = 600.0
AGGREGATE_PREFIX = "(combined from similar events): "
SPAM_BURST = 25
SPAM_QPS = 1.0 / 300.0
CACHE_SIZE = 4096  # per cache, as client-go's maxLruCacheEntries

_OBJECT_FIELDS = ("apiVersion", "kind", "name", "namespace", "uid")

Key = tuple[str, ...]
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


@dataclass(frozen=True)
class Correlation:
    """What to write for one Event the spam filter let through."""

    key: Key
    """The Event it creates or updates (pending writes of one key coalesce)."""
    update: bool
    """It updates an Event written before (a patch), rather than creating one."""


def object_key(event: Mapping[str, Any]) -> Key:
    """Source, involved object and type: the spam filter's unit (client-go's ``getSpamKey``)."""
    ref = event["involvedObject"]
    source = event.get("source") or {}
    return (
        source.get("component", ""),
        source.get("host", ""),
        *(ref.get(k, "") for k in _OBJECT_FIELDS),
        event["type"],
    )


class EventCorrelator:
    def __init__(
        self,
        *,
        spam_qps: float = SPAM_QPS,
        spam_burst: int = SPAM_BURST,
        aggregate_max_events: int = AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = AGGREGATE_INTERVAL,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self._spam_qps = spam_qps
        self._spam_burst = spam_burst
        self._aggregate_max = aggregate_max_events
        self._aggregate_interval = aggregate_interval
        self._aggregates: _LRU[Key, _Aggregate] = _LRU(cache_size)
        self._observations: _LRU[Key, _Observation] = _LRU(cache_size)
        self._spam: _LRU[Key, _SpamBucket] = _LRU(cache_size)

    def correlate(self, event: dict[str, Any], now: float) -> Correlation | None:
        """Rewrite ``event`` in place as it should be written (combined
        message; name, ``count`` and ``firstTimestamp`` of the Event it
        updates) and say how; None when the spam filter refuses it."""
        key = self._aggregate(event, now)
        update = self._observe(event, key)
        if not self._spam_accepts(event, now):
            return None
        return Correlation(key, update)

    def _aggregate(self, event: dict[str, Any], now: float) -> Key:
        """Fold ``event`` into a combined one when its (object, type, reason)
        saw too many distinct messages lately; return its dedupe key."""
        group = (*object_key(event), event["reason"])
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

    def _observe(self, event: dict[str, Any], key: Key) -> bool:
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
        key = object_key(event)
        bucket = self._spam.get(key)
        if bucket is None:
            bucket = _SpamBucket(self._spam_qps, self._spam_burst, now)
        self._spam.put(key, bucket)
        return bucket.try_take(now)
