"""How a reconcile ends, in one place: its id, the errors it may end with and what
the controller does with each.

- ``TerminalError``: the object cannot be reconciled as written; the reconciler
  reports it and nothing is retried until the object changes.
- An ``ApiError`` the retry is the whole answer to (``routine``: a conflict, 429):
  retried with backoff, nothing reported.
- An ``ApiError`` that is part of normal operation (``expected``: also 5xx
  answers of an overloaded server), or a ``Transient`` error of another system
  (a database that does not answer or says "not yet"): retried and logged
  without a traceback.
- Anything else: reported on the object, logged with its traceback once, retried.

A reconcile that ends well may still ask to be looked at again, typed by why:
``Wait`` (for something outside the object: pods to be Ready, MatrixOne to answer)
or ``Requeue`` (a poll, a deadline, a timer), each with its reason, which the
debug log and ``mo-operator plan`` show.

Errors are told apart by type, never by a ``status`` or ``code`` attribute that
an error of another system (a MatrixOne error number) may also carry.

One reconcile has one id (``reconcileID``, as controller-runtime's): the controller
opens it, the reconciler and every log line written while it runs carry it, also
the lines of modules that know nothing of reconciles.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from ..meta.errors import ApiError

__all__ = [
    "Later",
    "ReconcileIdFilter",
    "Requeue",
    "TerminalError",
    "Transient",
    "Wait",
    "current_reconcile_id",
    "expected",
    "reconciling",
    "routine",
]

_RECONCILE_ID: ContextVar[str | None] = ContextVar("reconcile_id", default=None)


@dataclass(frozen=True)
class Later:
    """Look at the object again after ``after`` seconds, though nothing may change."""

    after: float
    reason: str = ""

    def __str__(self) -> str:
        said = f": {self.reason}" if self.reason else ""
        return f"{type(self).__name__.lower()} {self.after:g}s{said}"


@dataclass(frozen=True)
class Requeue(Later):
    """A poll, a deadline or a timer comes due."""


@dataclass(frozen=True)
class Wait(Later):
    """Waiting for something outside the object (pods, MatrixOne) that no watch of
    ours announces."""


def sooner(current: Later | None, new: Later) -> Later:
    """The one of two that comes first (the first asked, on a tie)."""
    return new if current is None or new.after < current.after else current


class TerminalError(Exception):
    """The object cannot be reconciled as written (a bad spec): retrying will
    not help until someone changes it."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class Transient(Exception):
    """An error of a system the controller talks to besides the API server that says
    "later": it did not answer, or answered not yet. Its clients' error classes derive
    from it, so the controller tells it apart by type: retried with backoff, reported
    on the object, logged without a traceback (it is not the operator's fault)."""


def routine(e: BaseException) -> bool:
    """A conflict (someone wrote the object since we read it) or throttling: the retry
    with backoff is the whole answer, nothing to report."""
    return isinstance(e, ApiError) and e.status in (409, 429)


def expected(e: BaseException) -> bool:
    """Answers of the API server that are part of normal operation (conflicts,
    throttling, an overloaded or restarting server) and transient errors of other
    systems: no traceback in the log."""
    return isinstance(e, Transient) or (isinstance(e, ApiError) and e.status in (409, 429, 500, 503, 504))


@contextmanager
def reconciling() -> Iterator[str]:
    """Open a reconcile: a fresh id, current until the block ends."""
    rid = uuid.uuid4().hex[:8]
    token = _RECONCILE_ID.set(rid)
    try:
        yield rid
    finally:
        _RECONCILE_ID.reset(token)


def current_reconcile_id() -> str:
    """The id of the reconcile running in this task; a fresh one outside any
    (a reconciler called directly, as in tests)."""
    return _RECONCILE_ID.get() or uuid.uuid4().hex[:8]


class ReconcileIdFilter(logging.Filter):
    """Puts the running reconcile's id on every record written during it."""

    def filter(self, record: logging.LogRecord) -> bool:
        rid = _RECONCILE_ID.get()
        if rid is not None and not hasattr(record, "reconcileID"):
            record.reconcileID = rid
        return True
