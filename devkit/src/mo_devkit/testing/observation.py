"""What the operator under test did, seen through the runtime's own observation
points rather than by patching the product: a ``ReconcileObserver`` on each
controller says which key was reconciled and when, and a write hook on the
operator's client records every write with its body and timing.

A benchmark reads from them when the operator first reconciled, which write
answered a user's change, and when a resync's keys were all reconciled again;
a scenario can read which writes a step caused.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import Send, WriteCall
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.controller import Controller, Request

Obj = dict[str, Any]

RESOURCES_BY_KIND = {v.kind: v for v in vars(r).values() if isinstance(v, Resource)}
NON_ACTOR_FOR = {"cnstore": r.PODS}
"""The kind each controller that is not an Actor reconciles (its ``For``): only an
``ActorReconciler`` names its kind."""


@dataclass(frozen=True)
class Write:
    """One write call of the operator's client."""

    issued: float
    done: float
    verb: str
    kind: str
    namespace: str
    name: str
    subresource: str | None
    body: Any


@dataclass
class Observation:
    """What the observation points saw (a ``ReconcileObserver`` and a write hook);
    times are ``time.perf_counter()``."""

    first_reconcile: float | None = None
    reconciles: int = 0
    finished_at: dict[tuple[str, Request], float] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    on_write: list[Callable[[Write], None]] = field(default_factory=list)
    """Called with each write once it is done (a benchmark matching a write to a change)."""

    def started(self, controller: str, req: Request) -> None:
        if self.first_reconcile is None:
            self.first_reconcile = time.perf_counter()

    def finished(self, controller: str, req: Request) -> None:
        self.reconciles += 1
        self.finished_at[(controller, req)] = time.perf_counter()

    async def write(self, call: WriteCall, send: Send) -> Obj:
        """The write hook: time the write and record it."""
        issued = time.perf_counter()
        result = await send()
        meta = (call.body.get("metadata") or {}) if isinstance(call.body, Mapping) else {}
        name = str(call.name or meta.get("name") or "")
        w = Write(
            issued,
            time.perf_counter(),
            call.verb,
            call.resource.kind,
            call.namespace or "",
            name,
            call.subresource,
            call.body,
        )
        self.writes.append(w)
        for hook in self.on_write:
            hook(w)
        return result


def primary_resource(controller: Controller) -> Resource:
    """The kind a controller reconciles (its ``For``)."""
    kind = getattr(controller.reconcile, "kind", None)  # an ActorReconciler knows it
    res = RESOURCES_BY_KIND.get(kind) if isinstance(kind, str) else NON_ACTOR_FOR.get(controller.name)
    if res is None:
        raise LookupError(
            f"which kind does controller {controller.name} reconcile? (add it to NON_ACTOR_FOR)"
        )
    return res
