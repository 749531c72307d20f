"""Versioned object storage: the embedded server's etcd and watch cache.

One monotonic resourceVersion counter for every object, as etcd's revision;
a bounded history of changes so watches can resume from a resourceVersion and
get 410 Gone once it has left the window; consistent snapshots for paginated
lists; and optional persistence to a data directory so that a restarted server
keeps its objects and its counter.

Everything here is synchronous: a write is atomic with respect to the event
loop, which gives the same linearizable order etcd gives.
"""

from __future__ import annotations

import builtins
import collections
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...private_files import open_private, private_dir
from ..encoding.jsonutil import dumps, loads

Obj = dict[str, Any]


@dataclass
class Change:
    """One committed change, as watchers see it."""

    type: str  # ADDED, MODIFIED, DELETED
    resource: str  # registry key of the resource type, e.g. "apps/statefulsets"
    namespace: str
    name: str
    object: Obj
    old: Obj | None
    rv: int
    _encoded: bytes | None = field(default=None, repr=False)

    def encoded_object(self) -> bytes:
        if self._encoded is None:
            self._encoded = dumps(self.object)
        return self._encoded


class WatchQueue:
    """The buffer of one watcher; closed (and told why) when it overflows, as
    kube-apiserver closes watchers that cannot keep up."""

    def __init__(self, resource: str, namespace: str | None, limit: int) -> None:
        self.resource = resource
        self.namespace = namespace
        self.limit = limit
        self.items: collections.deque[Change] = collections.deque()
        self.closed = False
        self._waiter: Any = None

    def push(self, change: Change) -> None:
        if self.closed:
            return
        if len(self.items) >= self.limit:
            self.close()
            return
        self.items.append(change)
        self._wake()

    def close(self) -> None:
        self.closed = True
        self._wake()

    def _wake(self) -> None:
        w = self._waiter
        if w is not None and not w.done():
            w.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Wait until there is an item, the queue is closed, or the timeout passes."""
        import asyncio

        if self.items or self.closed:
            return
        loop = asyncio.get_running_loop()
        self._waiter = loop.create_future()
        try:
            await asyncio.wait_for(asyncio.shield(self._waiter), timeout)
        except TimeoutError:
            pass
        finally:
            self._waiter = None


class Expired(Exception):
    """The requested resourceVersion has left the event history."""


@dataclass
class Snapshot:
    rv: int
    items: list[Obj]
    created: float


class Store:
    def __init__(
        self, *, history_size: int = 10000, data_dir: str | Path | None = None, watch_buffer: int = 100_000
    ):
        self.history_size = history_size
        self.watch_buffer = watch_buffer
        self.rv = 0
        self._data: dict[str, dict[str, dict[str, Obj]]] = {}
        self._history: collections.deque[Change] = collections.deque()
        self._history_start = 0  # every change with rv > this is in history
        self._watchers: dict[str, set[WatchQueue]] = {}
        self._snapshots: dict[str, Snapshot] = {}
        self._log: Any = None
        self._data_dir = Path(data_dir) if data_dir else None
        if self._data_dir is not None:
            self._load()

    # ------------------------------------------------------------------ reads
    def get(self, resource: str, namespace: str, name: str) -> Obj | None:
        return self._data.get(resource, {}).get(namespace, {}).get(name)

    def list(self, resource: str, namespace: str | None = None) -> list[Obj]:
        """Objects of a resource (optionally in one namespace), in key order."""
        by_ns = self._data.get(resource, {})
        if namespace is not None:
            objs = by_ns.get(namespace, {})
            return [objs[n] for n in sorted(objs)]
        out: list[Obj] = []
        for ns in sorted(by_ns):
            objs = by_ns[ns]
            out.extend(objs[n] for n in sorted(objs))
        return out

    def count(self, resource: str | None = None) -> int:
        resources = [resource] if resource is not None else list(self._data)
        return sum(len(objs) for r in resources for objs in self._data.get(r, {}).values())

    def namespaces_in_use(self, resource: str) -> Iterator[str]:
        yield from (ns for ns, objs in self._data.get(resource, {}).items() if objs)

    def resources(self) -> builtins.list[str]:
        return list(self._data)

    # ----------------------------------------------------------------- writes
    def put(self, resource: str, obj: Obj, *, dry_run: bool = False) -> Obj:
        """Create or replace an object, assigning the next resourceVersion.

        ``obj`` becomes the stored version and must not be mutated afterwards.
        """
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        name = meta["name"]
        old = self.get(resource, ns, name)
        if dry_run:
            meta["resourceVersion"] = meta.get("resourceVersion") or (old or {}).get("metadata", {}).get(
                "resourceVersion", ""
            )
            return obj
        self.rv += 1
        meta["resourceVersion"] = str(self.rv)
        self._data.setdefault(resource, {}).setdefault(ns, {})[name] = obj
        self._persist({"rv": self.rv, "op": "put", "r": resource, "o": obj})
        self._record(
            Change("MODIFIED" if old is not None else "ADDED", resource, ns, name, obj, old, self.rv)
        )
        return obj

    def remove(self, resource: str, namespace: str, name: str, last: Obj | None = None) -> Obj | None:
        """Delete an object for good; watchers get DELETED with a new
        resourceVersion. ``last`` is its final state when the delete is an
        update's (the last finalizer removed), else the stored one."""
        objs = self._data.get(resource, {}).get(namespace)
        if not objs or name not in objs:
            return None
        old = objs.pop(name)
        if not objs:
            del self._data[resource][namespace]
        self.rv += 1
        final = dict(last if last is not None else old)
        final["metadata"] = dict(final["metadata"], resourceVersion=str(self.rv))
        self._persist({"rv": self.rv, "op": "del", "r": resource, "ns": namespace, "n": name})
        self._record(Change("DELETED", resource, namespace, name, final, old, self.rv))
        return final

    # ------------------------------------------------------------ history/watch
    def _record(self, change: Change) -> None:
        self._history.append(change)
        while len(self._history) > self.history_size:
            dropped = self._history.popleft()
            self._history_start = dropped.rv
        for q in tuple(self._watchers.get(change.resource, ())):
            if q.namespace is None or q.namespace == change.namespace:
                q.push(change)

    @property
    def oldest_watchable_rv(self) -> int:
        return self._history_start

    def watch(self, resource: str, namespace: str | None, since: int | None) -> WatchQueue:
        """Register a watcher; with ``since`` replay every change after it.

        Raises Expired when ``since`` is older than the history window.
        """
        q = WatchQueue(resource, namespace, self.watch_buffer)
        if since is not None:
            if since < self._history_start:
                raise Expired(f"too old resource version: {since} ({self._history_start + 1})")
            for change in self._history:
                if (
                    change.rv > since
                    and change.resource == resource
                    and (namespace is None or change.namespace == namespace)
                ):
                    q.push(change)
        self._watchers.setdefault(resource, set()).add(q)
        return q

    def list_at(self, resource: str, namespace: str | None, rv: int) -> builtins.list[Obj]:
        """Objects as they were at ``rv``, in key order, found by undoing
        the history's later changes (etcd serves any revision it has not
        compacted). Raises Expired when ``rv`` is older than the history."""
        if rv < self._history_start:
            raise Expired(f"too old resource version: {rv} ({self._history_start + 1})")
        state = {
            (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
            for o in self.list(resource, namespace)
        }
        for change in reversed(self._history):
            if change.rv <= rv:
                break
            if change.resource != resource or (namespace is not None and change.namespace != namespace):
                continue
            key = (change.namespace, change.name)
            if change.type == "ADDED":
                state.pop(key, None)
            elif change.old is not None:
                state[key] = change.old
        return [state[k] for k in sorted(state)]

    def unwatch(self, q: WatchQueue) -> None:
        self._watchers.get(q.resource, set()).discard(q)

    def drop_watchers(self) -> int:
        """Close every watch (a fault hook and part of shutdown)."""
        n = 0
        for qs in self._watchers.values():
            for q in qs:
                q.close()
                n += 1
            qs.clear()
        return n

    def expire_history(self) -> None:
        """Forget the event history, so any watch resuming from before now gets 410."""
        self._history.clear()
        self._history_start = self.rv

    # --------------------------------------------------------- list snapshots
    def snapshot(self, items: builtins.list[Obj], ttl: float = 300.0) -> str:
        """Keep a consistent list result for continue tokens (etcd serves pages
        of one revision); the token expires like a compacted revision."""
        now = time.monotonic()
        for key in [k for k, s in self._snapshots.items() if now - s.created > ttl]:
            del self._snapshots[key]
        key = uuid.uuid4().hex
        self._snapshots[key] = Snapshot(self.rv, items, now)
        return key

    def get_snapshot(self, key: str) -> Snapshot | None:
        return self._snapshots.get(key)

    def drop_snapshot(self, key: str) -> None:
        self._snapshots.pop(key, None)

    # ------------------------------------------------------------ persistence
    def _persist(self, record: dict[str, Any]) -> None:
        if self._log is not None:
            self._log.write(dumps(record) + b"\n")
            self._log.flush()

    def _load(self) -> None:
        assert self._data_dir is not None
        private_dir(self._data_dir)
        path = self._data_dir / "store.jsonl"
        if path.exists():
            with path.open("rb") as f:
                for line in f:
                    if not line.strip():
                        continue
                    try:
                        rec = loads(line)
                    except Exception:  # a torn last line after a crash
                        break
                    self.rv = max(self.rv, int(rec["rv"]))
                    if rec.get("op") == "put":
                        o = rec["o"]
                        m = o["metadata"]
                        self._data.setdefault(rec["r"], {}).setdefault(m.get("namespace", ""), {})[
                            m["name"]
                        ] = o
                    elif rec.get("op") == "del":
                        objs = self._data.get(rec["r"], {}).get(rec["ns"], {})
                        objs.pop(rec["n"], None)
        self._history_start = self.rv
        # Compact: rewrite the current state, then append from there.
        tmp = self._data_dir / "store.jsonl.tmp"
        with open_private(tmp, "wb") as f:
            f.write(dumps({"rv": self.rv, "op": "rv"}) + b"\n")
            for resource, by_ns in self._data.items():
                for objs in by_ns.values():
                    for o in objs.values():
                        f.write(
                            dumps(
                                {
                                    "rv": int(o["metadata"]["resourceVersion"]),
                                    "op": "put",
                                    "r": resource,
                                    "o": o,
                                }
                            )
                            + b"\n"
                        )
        os.replace(tmp, path)
        self._log = open_private(path, "ab")

    def close(self) -> None:
        self.drop_watchers()
        if self._log is not None:
            self._log.close()
            self._log = None
