"""A scripted in-memory API server for one resource and a ListerWatcher over
it, with the faults informers must survive: dropped watches, watches that
end, watches that go silent, compacted history (410 Gone) and expired list
continue tokens.

Semantics follow the real server where the informer depends on them: a
watch from resourceVersion R delivers every change after R in order, or
fails with 410 when R is older than the compacted history; a paginated list
serves every page from the snapshot taken at its first page.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.client.client import ListPage
from mo_operator.kube.client.watch import WatchEvent, WatchExpired
from mo_operator.kube.meta.errors import ApiError

Obj = dict[str, Any]


@dataclass
class Change:
    rv: int
    type: str
    obj: Obj


class FakeServer:
    def __init__(self) -> None:
        self.rv = 0
        self.objects: dict[str, Obj] = {}
        self.history: list[Change] = []
        self.compacted = 0
        self._poke = asyncio.Event()
        self._snapshots: dict[str, tuple[int, list[Obj]]] = {}
        self._snapshot_ids = itertools.count()

    # ------------------------------------------------------------- writes
    def create(self, name: str, namespace: str = "default", **data: str) -> Obj:
        key = f"{namespace}/{name}"
        assert key not in self.objects, key
        obj = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4())},
            "data": dict(data),
        }
        return self._record("ADDED", key, obj)

    def update(self, name: str, namespace: str = "default", **data: str) -> Obj:
        key = f"{namespace}/{name}"
        obj = copy.deepcopy(self.objects[key])
        obj["data"].update(data)
        return self._record("MODIFIED", key, obj)

    def delete(self, name: str, namespace: str = "default") -> Obj:
        key = f"{namespace}/{name}"
        obj = copy.deepcopy(self.objects[key])
        return self._record("DELETED", key, obj)

    def _record(self, event_type: str, key: str, obj: Obj) -> Obj:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        if event_type == "DELETED":
            del self.objects[key]
        else:
            self.objects[key] = obj
        self.history.append(Change(self.rv, event_type, copy.deepcopy(obj)))
        self.poke()
        return copy.deepcopy(obj)

    def compact(self) -> None:
        """Forget the history up to now: older watches get 410 Gone."""
        self.compacted = self.rv

    def expire_snapshots(self) -> None:
        self._snapshots.clear()

    def poke(self) -> None:
        self._poke.set()
        self._poke = asyncio.Event()

    async def wait_poke(self) -> None:
        await self._poke.wait()

    # -------------------------------------------------------------- reads
    def state(self, namespace: str | None = None) -> dict[str, Obj]:
        return {
            k: copy.deepcopy(o)
            for k, o in self.objects.items()
            if namespace is None or o["metadata"]["namespace"] == namespace
        }

    def list_page(self, namespace: str | None, limit: int | None, token: str | None) -> ListPage:
        if token:
            snap_id, offset_text = token.split(":")
            if snap_id not in self._snapshots:
                raise ApiError(410, "Expired", "The provided continue parameter is too old")
            rv, items = self._snapshots[snap_id]
            offset = int(offset_text)
        else:
            rv, items, offset = self.rv, sorted(self.state(namespace).values(), key=_key), 0
            snap_id = str(next(self._snapshot_ids))
            self._snapshots[snap_id] = (rv, items)
        end = offset + limit if limit else len(items)
        page = copy.deepcopy(items[offset:end])
        next_token = f"{snap_id}:{end}" if end < len(items) else None
        return ListPage(page, str(rv), next_token)


def _key(obj: Obj) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


@dataclass
class WatchSession:
    """One open watch; tests flip its flags to make it misbehave."""

    resource_version: str
    timeout_seconds: int
    dropped: bool = False
    ended: bool = False
    stalled: bool = False
    bookmark: bool = False
    delivered: int = 0
    closed: bool = False


@dataclass
class FakeListerWatcher:
    server: FakeServer
    namespace: str | None = None
    list_calls: list[tuple[int | None, str | None]] = field(default_factory=list)
    list_failures: deque[Exception] = field(default_factory=deque)
    watch_failures: deque[Exception] = field(default_factory=deque)
    sessions: list[WatchSession] = field(default_factory=list)
    #: flags applied to each new watch session, in order (then none)
    scripted: deque[dict[str, bool]] = field(default_factory=deque)

    async def list(self, *, limit: int | None, continue_: str | None) -> ListPage:
        self.list_calls.append((limit, continue_))
        await asyncio.sleep(0)
        if self.list_failures:
            raise self.list_failures.popleft()
        return self.server.list_page(self.namespace, limit, continue_)

    def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        session = WatchSession(
            resource_version, timeout_seconds, **(self.scripted.popleft() if self.scripted else {})
        )
        self.sessions.append(session)
        return self._stream(session)

    @property
    def current(self) -> WatchSession:
        return self.sessions[-1]

    def drop(self) -> None:
        for s in self.sessions:
            s.dropped = True
        self.server.poke()

    def end(self) -> None:
        for s in self.sessions:
            s.ended = True
        self.server.poke()

    def bookmark(self) -> None:
        for s in self.sessions:
            s.bookmark = True
        self.server.poke()

    async def _stream(self, session: WatchSession) -> AsyncIterator[WatchEvent]:
        try:
            await asyncio.sleep(0)
            if self.watch_failures:
                raise self.watch_failures.popleft()
            pos = int(session.resource_version or 0)
            if pos < self.server.compacted:
                raise WatchExpired(f"too old resource version: {pos} ({self.server.compacted})")
            while True:
                if session.dropped:
                    raise ConnectionResetError("watch connection dropped")
                if session.ended:
                    return
                if not session.stalled:
                    change = next((c for c in self.server.history if c.rv > pos), None)
                    if change is not None:
                        pos = change.rv
                        if self.namespace is None or change.obj["metadata"]["namespace"] == self.namespace:
                            session.delivered += 1
                            yield change.type, copy.deepcopy(change.obj)
                        continue
                    if session.bookmark:
                        session.bookmark = False
                        pos = self.server.rv
                        meta = {"resourceVersion": str(pos)}
                        yield "BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": meta}
                        continue
                await self.server.wait_poke()
        finally:
            session.closed = True


class SyncedByEvent:
    """A fake informer side that has synced once its test sets ``synced``."""

    synced: asyncio.Event

    def has_synced(self) -> bool:
        return self.synced.is_set()

    async def wait_synced(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self.synced.wait(), timeout)
        except TimeoutError:
            return False
        return True
