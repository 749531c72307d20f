"""What this process applied that its cache may not show yet.

A reconcile queued by the events of a plan's first writes (its ConfigMaps) may
start before the cache holds the plan's last (its workload), and would apply that
again. A pure decision, given ``of_owner``'s snapshot (``writes.applies``), leaves
alone an object whose cache still holds the version from before our apply and
whose desired state is what we applied: its own event is on its way and queues
the owner again. The record lives as long as the caches it speaks of: one per
operator, in its ``Env``; an entry older than ``ttl`` says nothing any more and is
dropped as new ones come.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from mo_operator.kube.meta.objects import meta_of

Key = tuple[str, str, str]
"""Kind, namespace, name."""


class Applied(NamedTuple):
    """An apply this process sent: the object, and the version the cache held before."""

    obj: Mapping[str, Any]
    before: str | None


class Unseen:
    """Per object, the object applied and the version the cache held before (None:
    none). After ``ttl`` seconds without the cache showing the apply, the object is
    applied again, so a lost event costs a write, never convergence."""

    def __init__(self, ttl: float = 5.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self._clock = clock
        self._applied: OrderedDict[Key, tuple[Mapping[str, Any], str | None, float, str]] = OrderedDict()
        self._owned: dict[str, set[Key]] = {}
        """The keys noted per controller owner uid (``of_owner``)."""

    def note(self, key: Key, obj: Mapping[str, Any], before: str | None) -> None:
        now = self._clock()
        self.forget(key)
        owner = str((meta_of(obj).controller or {}).get("uid") or "")
        self._applied[key] = (obj, before, now, owner)
        if owner:
            self._owned.setdefault(owner, set()).add(key)
        while self._applied:
            oldest, (_, _, at, _) = next(iter(self._applied.items()))
            if now - at <= self.ttl:
                break
            self.forget(oldest)

    def forget(self, key: Key) -> None:
        entry = self._applied.pop(key, None)
        if entry is not None and entry[3]:
            keys = self._owned.get(entry[3])
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._owned[entry[3]]

    def of_owner(self, uid: str) -> dict[Key, Applied]:
        """The applies of objects ``uid`` controls that the cache may not show yet
        (noted within ``ttl``): what a pure decision checks its applies against."""
        now, found = self._clock(), {}
        for key in self._owned.get(uid, ()):
            obj, before, at, _ = self._applied[key]
            if now - at <= self.ttl:
                found[key] = Applied(obj, before)
        return found


def awaits(applied: Applied | None, want: Mapping[str, Any], cached: Mapping[str, Any] | None) -> bool:
    """Whether an apply of ``want`` is still on its way to the cache: what was
    ``applied`` is ``want``, and the cache shows the version it showed before."""
    return applied is not None and applied.obj == want and version(cached) == applied.before


def version(obj: Mapping[str, Any] | None) -> str | None:
    """The cached object's resource version (None: not cached)."""
    return None if obj is None else str((obj.get("metadata") or {}).get("resourceVersion") or "")
