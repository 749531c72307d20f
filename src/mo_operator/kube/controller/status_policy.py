"""When the Actor framework writes an object's status, and what it announces.

**Coalescing.** A parent whose status reports its children's (a cluster
embeds its sets' statuses) would otherwise rewrite itself on every
transition of every child: while a cluster converges, that is most of the
operator's writes. So a status write is *urgent* only when it says
something another controller or a user waits on: the first status, a new
``observedGeneration``, a top-level field or a condition that appears or
goes (unless the kind names the field one that only reports: ``quiet``),
``Ready``
changing status, a condition other than ``Synced`` turning True (a roll
complete: the next component's turn), a reason named as trouble. Anything
else (``Synced`` going back and forth, a roll starting, a reason or message
that moves on, a count, an embedded child's detail) is written at most once
per window per object, and only once it has stood for ``settle`` seconds: a
reconcile that finds such a change writes nothing and asks to be requeued
when it may. The change that ends a quiet spell usually starts a burst (a
set's wait for its LogSet ending is followed, a moment later, by its pods
being Ready), so waiting for the rest of it folds the burst into one write,
or into the urgent one that ends it. That requeue recomputes the status from
the cache, so the last state is never lost, only written late by at most a
window. A reconcile that finds nothing to change writes nothing, whatever
the window.

The window is ``window`` seconds after an urgent write or a quiet spell, and
doubles with each non-urgent write that follows another within two windows,
up to ``MAX_WINDOW_FACTOR`` times ``window``: a slow convergence (a loaded
API server, a cluster waiting minutes for its pods) costs a few progress
writes per object, not one per window, while what anyone waits for is
still written at once.

**Back-pressure.** The settle time stretches with the number of objects of
the kind holding a change: beyond ``HELD_AT_BASE`` of them, in proportion,
up to ``MAX_WINDOW_FACTOR`` times. Progress writes of one kind then go out
at about ``HELD_AT_BASE`` per settle time however many objects converge at
once (a fleet created together), where each would otherwise write its own
at the base pace and load the API server that every pod start and every
``Ready`` also waits on. One cluster converging alone keeps the base pace.

**Announcing.** One Event per meaningful transition, not per condition
touched: a condition whose reason is trouble is always announced; of the
others, one Event per write names the most significant change (``Ready``
first), and only news: ``Ready`` changing status (or first appearing
True), or, on an object that has been Ready for longer than a window,
another condition changing status (a roll starting or complete). An object
on its way to its first Ready says its steps in its status; its Event is the
one that says it is Ready, so a converging cluster leaves a short trail.
Once an object has served (been Ready, then given a new spec or Ready for
longer than a window), every condition that changes status is announced: a
Day-2 roll takes a set's ``Ready`` down and up again, and ``kubectl
describe`` must show the roll starting and completing beside it, not only
the readiness it cost.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Collection, Hashable, Mapping
from typing import Any

Condition = Mapping[str, Any]

READY = "Ready"
SYNCED = "Synced"

DEFAULT_WINDOW = 5.0
"""Seconds between two non-urgent status writes of one object: long enough to
fold the transitions of a parent's children while they converge (a set takes
a step about every second) into a few writes; what a user or another
controller waits for is urgent and never waits for it."""


MAX_WINDOW_FACTOR = 6
"""How far consecutive non-urgent writes stretch the window (``window`` times this at
most: 30 s at the default), so progress details lag a long convergence by less than
that."""


HELD_AT_BASE = 4
"""Objects of one kind that may hold a progress change at the base settle time (a
few clusters converging together); with more, each holds its change proportionally
longer."""


def _by_type(status: Mapping[str, Any]) -> dict[str, Condition]:
    return {str(c.get("type")): c for c in status.get("conditions") or ()}


def urgent(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    warnings: Collection[str] = (),
    quiet: Collection[str] = (),
) -> bool:
    """Whether the change from ``before`` to ``after`` must be written at once (see the
    module doc); ``quiet``: top-level fields whose appearing no one waits for."""
    if not before or before.get("observedGeneration") != after.get("observedGeneration"):
        return True
    if set(before) - set(quiet) != set(after) - set(quiet):
        return True
    old, new = _by_type(before), _by_type(after)
    if set(old) != set(new):
        return True
    for ctype, condition in new.items():
        was = old[ctype]
        flipped = was.get("status") != condition.get("status")
        if flipped and (ctype == READY or (ctype != SYNCED and condition.get("status") == "True")):
            return True
        if condition.get("reason") in warnings and was.get("reason") != condition.get("reason"):
            return True
    return False


class StatusWindow:
    """Per object, when its status was last written and how far the window has grown
    (to space out non-urgent writes), and whether it has served (past its first
    convergence, every transition is news)."""

    def __init__(
        self,
        window: float = DEFAULT_WINDOW,
        clock: Callable[[], float] = time.monotonic,
        settle: float | None = None,
    ) -> None:
        """``settle``: how long a non-urgent change stands before it is written (one
        window unless given)."""
        self.window = window
        self.settle = window if settle is None else settle
        self._clock = clock
        self._last: dict[Hashable, tuple[float, float]] = {}
        """When each object was last written, and its window since."""
        self._changed: dict[Hashable, float] = {}
        """When each object's unwritten non-urgent change was first seen."""
        self._ready_at: dict[Hashable, int] = {}

    def wait(self, key: Hashable, is_urgent: bool) -> float:
        """Seconds to hold a write of ``key`` back; 0 to write now."""
        if is_urgent or self.window <= 0:
            return 0.0
        last = self._last.get(key)
        if last is None:
            return 0.0
        now = self._clock()
        seen = self._changed.setdefault(key, now)
        return max(0.0, last[0] + last[1] - now, seen + self._settle() - now)

    def _settle(self) -> float:
        """The settle time, stretched by the crowd of objects holding a change."""
        crowd = len(self._changed) / HELD_AT_BASE
        return self.settle * min(float(MAX_WINDOW_FACTOR), max(1.0, crowd))

    def unchanged(self, key: Hashable) -> None:
        """``key``'s status is as written after all: a change seen later starts anew."""
        self._changed.pop(key, None)

    def wrote(self, key: Hashable, is_urgent: bool = True) -> None:
        """``key``'s status was written: the next window is the base one after an
        urgent write or a quiet spell (no write for two windows), else twice the last."""
        now = self._clock()
        last = self._last.get(key)
        window = self.window
        if not is_urgent and last is not None and now - last[0] < 2 * last[1]:
            window = min(2 * last[1], self.window * MAX_WINDOW_FACTOR)
        self._last[key] = (now, window)
        self._changed.pop(key, None)

    def forget(self, key: Hashable) -> None:
        """The object is gone: hold nothing for it."""
        self._last.pop(key, None)
        self._changed.pop(key, None)
        self._ready_at.pop(key, None)

    def has_served(
        self, key: Hashable, status: Mapping[str, Any], generation: int, now: float | None = None
    ) -> bool:
        """``key`` is past its first convergence: it was Ready (``status`` is its
        latest known) and has since been given a new spec, or has stayed Ready for
        longer than a window. A change made right after it turned Ready (a restart
        as soon as a cluster is up) is a Day-2 operation all the same."""
        ready = _by_type(status).get(READY)
        if key not in self._ready_at and ready is not None and ready.get("status") == "True":
            self._ready_at[key] = int(status.get("observedGeneration") or generation)
        first = self._ready_at.get(key)
        return first is not None and (generation > first or _serving(ready, now))


def announcements(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    *,
    skip: Collection[str] = (),
    warnings: Collection[str] = (),
    now: float | None = None,
    served: bool = False,
) -> list[tuple[bool, Condition]]:
    """The conditions of ``after`` to announce, each with whether it is a Warning:
    every trouble reason that changed, then the news: all of it once the object
    has ``served``, else at most one (see the module doc)."""
    old = _by_type(before)
    serving = READY not in _by_type(after) or served or _serving(old.get(READY), now)
    warned: list[tuple[bool, Condition]] = []
    news: list[Condition] = []
    for condition in after.get("conditions") or ():
        ctype = str(condition.get("type"))
        was = old.get(ctype)
        if ctype in skip or (was is not None and _same(was, condition)):
            continue
        if condition.get("reason") in warnings:
            warned.append((True, condition))
        elif (ctype == READY or serving) and _news(was, condition):
            news.append(condition)
    news.sort(key=lambda c: c.get("type") != READY)
    return warned + [(False, c) for c in (news if served else news[:1])]


def _serving(ready: Condition | None, now: float | None) -> bool:
    """Ready, and for longer than one window: a roll that completes just after an
    object turned Ready is the end of getting there, which its Ready Event said."""
    if ready is None or ready.get("status") != "True":
        return False
    since = ready.get("lastTransitionTime")
    if not since:
        return True
    try:
        became = datetime.datetime.strptime(str(since), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
    except ValueError:
        return True
    return (time.time() if now is None else now) - became.timestamp() > DEFAULT_WINDOW


def _news(was: Condition | None, condition: Condition) -> bool:
    """The condition changed status, or first appears True."""
    if was is None:
        return condition.get("status") == "True"
    return was.get("status") != condition.get("status")


def _same(a: Condition, b: Condition) -> bool:
    return (a.get("status"), a.get("reason")) == (b.get("status"), b.get("reason"))
