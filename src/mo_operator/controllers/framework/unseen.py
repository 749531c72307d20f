"""What this process applied that its cache may not show yet.

A reconcile queued by the events of a plan's first writes (its ConfigMaps) may
start before the cache holds the plan's last (its workload), and would apply that
again. ``Writes.sync`` leaves alone an object whose cache still holds the version
from before our apply and whose desired state is what we applied: its own event
is on its way and queues the owner again. The record lives as long as the caches
it speaks of: one per operator, in its ``Env``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

Key = tuple[str, str, str]
"""Kind, namespace, name."""


class Unseen:
    """Per object, the object applied and the version the cache held before (None:
    none). After ``ttl`` seconds without the cache showing the apply, the object is
    applied again, so a lost event costs a write, never convergence."""

    def __init__(self, ttl: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._applied: dict[Key, tuple[Mapping[str, Any], str | None, float]] = {}

    def note(self, key: Key, obj: Mapping[str, Any], before: str | None) -> None:
        self._applied[key] = (obj, before, self._clock())

    def forget(self, key: Key) -> None:
        self._applied.pop(key, None)

    def awaited(self, key: Key, want: Mapping[str, Any], cached: Mapping[str, Any] | None) -> bool:
        """We applied ``want`` and the cache still shows what it showed before."""
        applied = self._applied.get(key)
        if applied is None:
            return False
        obj, before, at = applied
        if obj == want and version(cached) == before and self._clock() - at <= self.ttl:
            return True
        del self._applied[key]
        return False


def version(obj: Mapping[str, Any] | None) -> str | None:
    """The cached object's resource version (None: not cached)."""
    return None if obj is None else str((obj.get("metadata") or {}).get("resourceVersion") or "")
