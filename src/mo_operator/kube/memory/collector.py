"""How the operator's process uses Python's cyclic garbage collector.

**Pausing it around bursts of acyclic allocation.**

Decoding a page of a list and freezing it into the cache allocate hundreds of
thousands of dicts, lists and strings, and every few hundred allocations count
towards a collection. The collections they trigger walk young generations made
of nothing but JSON, which holds no cycles to find, and the older generations
that keep growing with the cache: decoding a 3 MB page of pods took four times
as long with the collector on as with it off (``bench/operator_cold_start.py``
profiles). Pausing it for the burst finds the same garbage later, at one
collection instead of many.

**Freezing what survives a full collection** (``long_lived_frozen``). A full
collection walks every tracked object, and the cache is most of them (every
frozen object is one: CPython leaves a ``dict`` of plain values untracked, not
an object with slots). With 100 clusters cached that walk stopped the event
loop for up to 200 ms, a few times a minute, and a watch event or a reconcile
caught behind it waited as long. What survives a full collection is long-lived
by definition and, at that instant, the younger generations are empty: freezing
it then (``gc.freeze``) leaves the next full collection only what became
long-lived since. An object frozen and later released is still freed by its
reference count; only a cycle among frozen objects would wait, so every
``REFRESH_SECONDS`` the frozen objects are handed back to be looked at by one
whole collection, and frozen again after it.
"""

from __future__ import annotations

import contextlib
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

REFRESH_SECONDS = 600.0
"""How often the frozen objects go back to one full collection (a cycle among
them, released since, is found then)."""


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block. The block must not await, so
    nothing else runs while the collector is off; a collector already off
    (an outer pause, or a process that turned it off) stays off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


class _Freezer:
    """The ``gc.callbacks`` entry: freeze after each full collection, except the
    first one after a refresh is due, which hands the frozen objects back instead."""

    def __init__(self, refresh_seconds: float, clock: Callable[[], float]) -> None:
        self.refresh_seconds = refresh_seconds
        self.clock = clock
        self.since = clock()

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase != "stop" or info.get("generation") != 2:
            return
        now = self.clock()
        if now - self.since >= self.refresh_seconds:
            gc.unfreeze()
            self.since = now
        else:
            gc.freeze()


_active: list[_Freezer] = []


@contextlib.contextmanager
def long_lived_frozen(
    refresh_seconds: float = REFRESH_SECONDS, clock: Callable[[], float] = time.monotonic
) -> Iterator[None]:
    """Freeze the survivors of each full collection while the block runs (see the
    module doc). The collector is the process's: nested or concurrent blocks (two
    operators in one test process) share the first one's policy, and the objects
    are handed back when the last block ends."""
    if not _active:
        freezer = _Freezer(refresh_seconds, clock)
        gc.callbacks.append(freezer)
        _active.append(freezer)
    else:
        _active.append(_active[0])
    try:
        yield
    finally:
        freezer = _active.pop()
        if not _active:
            gc.callbacks.remove(freezer)
            gc.unfreeze()
