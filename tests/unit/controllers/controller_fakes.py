"""Small fakes for the controllers' building blocks: a cache of hand-built objects
(frozen, as the informers hand them out), a client that records what a ``Writes``
plan does, an event recorder, and a ``Context``/``Env`` around them."""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from typing import Any, cast

from mo_operator.controllers.framework.env import Caches, Env, Settings
from mo_operator.controllers.framework.writes import Writes
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.frozen import freeze

Obj = dict[str, Any]
NOW = 1_700_000_000.0


class FakeCaches:
    """``Caches.get``/``list`` over a list of objects, matched by kind."""

    def __init__(self, *objs: Mapping[str, Any]) -> None:
        self.objs: list[Obj] = []
        self.add(*objs)

    def add(self, *objs: Mapping[str, Any]) -> None:
        self.objs += [cast(Obj, freeze(copy.deepcopy(dict(o)))) for o in objs]

    def get(self, res: Resource, namespace: str, name: str) -> Obj | None:
        for o in self.objs:
            meta = o["metadata"]
            if o["kind"] == res.kind and meta["name"] == name and (meta.get("namespace") or "") == namespace:
                return o
        return None

    def list(
        self, res: Resource, namespace: str | None = None, match_labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        return [
            o
            for o in self.objs
            if o["kind"] == res.kind
            and (namespace is None or (o["metadata"].get("namespace") or "") == namespace)
            and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in (match_labels or {}).items())
        ]


class RecordingClient:
    """Records every write a plan makes, in order; answers reads by name from
    ``server`` (cluster-scoped objects keyed by kind and name), raising ``refuse``
    when set."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, Any]] = []
        self.server: dict[tuple[str, str], Obj] = {}
        self.refuse: Exception | None = None

    async def get_or_none(self, res: Resource, name: str, namespace: str | None = None) -> Obj | None:
        if self.refuse is not None:
            raise self.refuse
        return self.server.get((res.kind, name))

    async def apply(self, obj: Mapping[str, Any], *, resource: Resource, force: bool = False) -> Obj:
        self.calls.append(("apply", resource.kind, obj["metadata"]["name"], obj))
        return dict(obj)

    async def create(self, res: Resource, obj: Mapping[str, Any], namespace: str | None = None) -> Obj:
        self.calls.append(("create", res.kind, obj["metadata"]["name"], obj))
        return dict(obj)

    async def delete(self, res: Resource, name: str, namespace: str | None = None, **kw: Any) -> None:
        self.calls.append(("delete", res.kind, name, kw))

    async def patch(
        self, res: Resource, name: str, patch: Any, namespace: str | None = None, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", res.kind, name, patch))
        return {}


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))


def make_env(caches: FakeCaches, *, now: float = NOW, settings: Settings | None = None) -> Env:
    return Env(
        cast(Any, RecordingClient()),
        cast(Caches, caches),
        cast(Any, None),
        settings or Settings(),
        lambda: now,
    )


def context(obj: Mapping[str, Any]) -> Context:
    return Context(
        cast(Obj, freeze(copy.deepcopy(dict(obj)))),
        "test",
        logging.LoggerAdapter(logging.getLogger("test"), {}),
        Recorder(),
        status=copy.deepcopy(dict(obj.get("status") or {})),
    )


def events(ctx: Context) -> list[tuple[str, str, str]]:
    return cast(Recorder, ctx.recorder).events


def condition(ctx: Context, ctype: str) -> Obj | None:
    return next((c for c in ctx.status.get("conditions") or () if c["type"] == ctype), None)


async def run(plan: Writes) -> list[tuple[str, str, str, Any]]:
    """Run ``plan`` against its recording client; the writes it made."""
    client = cast(RecordingClient, plan.client)
    before = len(client.calls)
    await plan(context({"metadata": {"name": "x", "namespace": "ns"}}))
    return client.calls[before:]


def writes(env: Env) -> Writes:
    return Writes(env.client)
