"""Shared pieces of the informer tests: a handler that records what it is
told, a model check that replays it, and a polling wait."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from mo_operator.kube.cache.informer import SharedInformer, is_tombstone
from mo_operator.kube.cache.listwatch import ListerWatcher
from mo_operator.kube.flowcontrol.backoff import Backoff
from mo_operator.kube.meta.frozen import thaw

Obj = dict[str, Any]


def key(obj: Mapping[str, Any]) -> str:
    return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"


def rv(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["resourceVersion"])


def make_informer(lw: ListerWatcher, **kw: Any) -> SharedInformer:
    kw.setdefault("backoff", lambda: Backoff(0.001, 0.01))
    return SharedInformer(lw, name=f"test-{uuid.uuid4().hex[:8]}", **kw)


class Recorder:
    """Records every notification as (kind, key, resourceVersion, ...)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []
        self.tombstones: list[str] = []
        self.model: dict[str, Obj] = {}
        self.violations: list[str] = []

    def register(self, informer: SharedInformer) -> Recorder:
        informer.add_event_handler(self.on_add, self.on_update, self.on_delete)
        return self

    def on_add(self, obj: Mapping[str, Any]) -> None:
        k = key(obj)
        if k in self.model:
            self.violations.append(f"add of {k} already present")
        self.model[k] = thaw(obj)
        self.events.append(("add", k, rv(obj)))

    def on_update(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        k = key(new)
        if self.model.get(k) != thaw(old):
            self.violations.append(f"update of {k}: old is not what we were told last")
        if rv(old) == rv(new):
            self.violations.append(f"update of {k} without a change (rv {rv(new)})")
        self.model[k] = thaw(new)
        self.events.append(("update", k, rv(new)))

    def on_delete(self, obj: Mapping[str, Any]) -> None:
        k = key(obj)
        if k not in self.model:
            self.violations.append(f"delete of unknown {k}")
        self.model.pop(k, None)
        if is_tombstone(obj):
            self.tombstones.append(k)
        self.events.append(("delete", k, rv(obj)))


async def eventually(condition: Callable[[], bool], timeout: float = 3.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.002)
