"""What the fault tests check after every fault: an event handler that
audits what the informer tells it, a writer that remembers what it wrote,
and the server's state read straight from its store (not over HTTP, so a
fault that is still active cannot hide it).

The invariant, for every scenario: the informer's cache, the handler's
replay of add/update/delete, and the server's objects are the same
``{key: resourceVersion}`` map, and no handler call repeated or skipped a
version it had already been told about. Where the server kept its history
(dropped, stalled or throttled watches), every change must also have been
delivered exactly once; after a 410 a relist legitimately folds several
changes into one (client-go ``DeltaFIFO.Replace``), so there only the
changes that were delivered must be a subset of those made, each once.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Mapping
from typing import Any

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.cache.informer import SharedInformer, is_tombstone
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.selectors import as_selector

Obj = dict[str, Any]
CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps", True)


def key_of(obj: Mapping[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace') or ''}/{meta['name']}"


def rv_of(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


def server_state(
    cp: ControlPlane, namespace: str, resource: str = "configmaps", selector: str = ""
) -> dict[str, str]:
    """``{key: resourceVersion}`` of the objects the server holds right now."""
    match = as_selector(selector)
    return {key_of(o): rv_of(o) for o in cp.server.store.list(resource, namespace) if match.matches_object(o)}


def cache_state(informer: SharedInformer) -> dict[str, str]:
    return {key_of(o): rv_of(o) for o in informer.list()}


class Ledger:
    """An informer event handler that records and audits every call."""

    def __init__(self) -> None:
        self.live: dict[str, str] = {}
        self.upserts: list[tuple[str, str]] = []  # (key, rv) of every add and update
        self.deletes: collections.Counter[str] = collections.Counter()
        self.tombstones: list[str] = []
        self.violations: list[str] = []
        self._delivered: set[tuple[str, str]] = set()

    def register(self, informer: SharedInformer) -> Ledger:
        informer.add_event_handler(self.on_add, self.on_update, self.on_delete)
        return self

    def on_add(self, obj: Mapping[str, Any]) -> None:
        k, rv = key_of(obj), rv_of(obj)
        if k in self.live:
            self.violations.append(f"add of {k}@{rv} while {k}@{self.live[k]} is live")
        self._seen(k, rv)
        self.live[k] = rv

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        k, rv = key_of(new), rv_of(new)
        if self.live.get(k) != rv_of(old):
            self.violations.append(f"update of {k}: old {rv_of(old)} is not the last told {self.live.get(k)}")
        if int(rv) <= int(rv_of(old)):
            self.violations.append(f"update of {k} from {rv_of(old)} to {rv}: not newer")
        self._seen(k, rv)
        self.live[k] = rv

    def on_delete(self, obj: Mapping[str, Any]) -> None:
        k = key_of(obj)
        if k not in self.live:
            self.violations.append(f"delete of {k}, which is not live")
        self.live.pop(k, None)
        self.deletes[k] += 1
        if is_tombstone(obj):
            self.tombstones.append(k)

    def _seen(self, k: str, rv: str) -> None:
        if (k, rv) in self._delivered:
            self.violations.append(f"{k}@{rv} delivered twice")
        self._delivered.add((k, rv))
        self.upserts.append((k, rv))


class TrackedWriter:
    """Creates, updates and deletes ConfigMaps in one namespace and remembers
    the version each write produced (a delete answers with a Status, so for
    deletes only the count per key is known)."""

    def __init__(self, client: ApiClient, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self.upserts: list[tuple[str, str]] = []
        self.deletes: collections.Counter[str] = collections.Counter()
        self._n = 0

    def key(self, name: str) -> str:
        return f"{self.namespace}/{name}"

    async def create(self, name: str, **labels: str) -> Obj:
        self._n += 1
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels},
            "data": {"n": str(self._n)},
        }
        obj = await self.client.create(CONFIGMAPS, body)
        self.upserts.append((self.key(name), rv_of(obj)))
        return obj

    async def update(self, name: str) -> Obj:
        self._n += 1
        obj = await self.client.patch(CONFIGMAPS, name, {"data": {"n": str(self._n)}}, self.namespace)
        self.upserts.append((self.key(name), rv_of(obj)))
        return obj

    async def delete(self, name: str) -> None:
        await self.client.delete(CONFIGMAPS, name, self.namespace)
        self.deletes[self.key(name)] += 1


async def eventually(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.02)


async def converged(
    cp: ControlPlane, informer: SharedInformer, ledger: Ledger, namespace: str, timeout: float = 10.0
) -> dict[str, str]:
    """Wait until the informer has seen the server's last write and cache,
    handler view and server agree; return that state. Agreement alone is not
    enough: an object created and deleted while the watch was stalled is absent
    from both before its two events arrive."""

    def agree() -> bool:
        server = server_state(cp, namespace)
        seen = informer.last_resource_version
        caught_up = seen.isdigit() and int(seen) >= cp.server.store.rv
        return caught_up and cache_state(informer) == server and ledger.live == server

    await eventually(agree, timeout, "cache, handlers and server to agree")
    return server_state(cp, namespace)


def assert_exactly_once(ledger: Ledger, writer: TrackedWriter) -> None:
    """Every write was delivered once and nothing else was (history kept)."""
    assert ledger.violations == []
    assert sorted(ledger.upserts) == sorted(writer.upserts), (ledger.upserts, writer.upserts)
    assert ledger.deletes == writer.deletes
    assert ledger.tombstones == []


def assert_folded_at_most_once(ledger: Ledger, writer: TrackedWriter) -> None:
    """After a relist: nothing repeated, nothing invented."""
    assert ledger.violations == []
    assert set(ledger.upserts) <= set(writer.upserts)
    assert all(ledger.deletes[k] <= writer.deletes[k] for k in ledger.deletes)
