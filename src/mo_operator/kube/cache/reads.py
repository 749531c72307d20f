"""Which caches a reconcile may read, and the check that it reads only those.

A controller starts its workers once the caches it reads have synced (as each
controller-runtime controller waits for its own sources), not once every cache
of the manager has: on a cold start with thousands of objects, a controller of
few kinds starts long before the largest list ends. A reconcile then must not
act on a cache that is still empty. Readers of caches call ``check_read`` with
the informer they are about to read: inside a reconcile (``reading``) a cache
that has not synced raises ``CacheNotSynced``, which the controller turns into a
requeue; with ``strict`` on, so does a cache the controller did not declare
(``UndeclaredRead``), which is how a test proves the declarations complete.
Outside a reconcile (event mappers, metrics, tests) nothing is checked: a mapper
that misses an object of a cache still syncing gets its event when it syncs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


@runtime_checkable
class Syncable(Protocol):
    """A cache that fills from a list: an informer, as far as sync goes."""

    def has_synced(self) -> bool: ...

    async def wait_synced(self, timeout: float | None = None) -> bool: ...


class CacheNotSynced(Exception):
    """A reconcile read a cache that has not synced: what it would decide from it
    could be wrong (an object missing only because its list has not arrived)."""


class UndeclaredRead(CacheNotSynced):
    """A reconcile read a cache its controller does not declare, so the
    controller may start before that cache has synced."""


@dataclass(frozen=True)
class ReadScope:
    """The caches one controller's reconciles may read (by identity)."""

    controller: str
    sources: frozenset[int]
    strict: bool


_SCOPE: ContextVar[ReadScope | None] = ContextVar("mo_operator_read_scope", default=None)


def scope_of(controller: str, sources: Iterable[object], *, strict: bool) -> ReadScope:
    return ReadScope(controller, frozenset(id(s) for s in sources), strict)


@contextmanager
def reading(scope: ReadScope) -> Iterator[None]:
    """Check the reads made in this context (a reconcile) against ``scope``."""
    token = _SCOPE.set(scope)
    try:
        yield
    finally:
        _SCOPE.reset(token)


def check_read(source: Syncable, what: str) -> None:
    """Raise if the reconcile running here may not act on a read of ``source``
    (``what`` names it in the error)."""
    scope = _SCOPE.get()
    if scope is None:
        return
    if scope.strict and id(source) not in scope.sources:
        raise UndeclaredRead(f"controller {scope.controller} read {what}, which it does not declare")
    if not source.has_synced():
        raise CacheNotSynced(f"controller {scope.controller} read {what} before its cache synced")
