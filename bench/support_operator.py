"""The operator under test: the product's ``Operator`` in the benchmark's
process, leader election off, no client-side rate limit (``qps=None``)
unless asked, watched through the runtime's own observation points (nothing
in the product is patched): a ``ReconcileObserver`` on each controller says
which key was reconciled when, and a write hook on its client records every
write (``ApiClient.writes`` counts them), so a benchmark can tell when the
operator first reconciled, when it is idle, and which write answered what.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.settings import OperatorConfig
from mo_operator.controllers.common.settings import Settings as OperatorSettings
from mo_operator.controllers.operator import FIELD_MANAGER, Operator
from mo_operator.kube.actor import ActorReconciler
from mo_operator.kube.client import ApiClient, Send, WriteCall
from mo_operator.kube.controller import Controller, Request
from mo_operator.kube.resource import Resource
from mo_operator.kube.status_policy import StatusWindow
from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.simulated.remote import discover
from support_target import Target

Obj = dict[str, Any]

RESOURCES_BY_KIND = {v.kind: v for v in vars(r).values() if isinstance(v, Resource)}
NON_ACTOR_FOR = {"cnstore": r.PODS}
"""The kind each controller that is not an Actor reconciles (its ``For``)."""


class Unreachable:
    """The admin interface of an operator with no MatrixOne to talk to (memory,
    cold start): every call fails as an unreachable HAKeeper would."""

    def admin(self, discovery_address: str) -> Unreachable:
        return self

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def fail(*_a: Any, **_kw: Any) -> Any:
            raise AdminError(f"{name}: no MatrixOne in this benchmark")

        return fail


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
class Instrumentation:
    """What the observation points saw (a ``ReconcileObserver``, and a write hook)."""

    first_reconcile: float | None = None
    in_flight: int = 0
    reconciles: int = 0
    finished_at: dict[tuple[str, Request], float] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    on_write: list[Callable[[Write], None]] = field(default_factory=list)

    def started(self, controller: str, req: Request) -> None:
        if self.first_reconcile is None:
            self.first_reconcile = time.perf_counter()
        self.in_flight += 1

    def finished(self, controller: str, req: Request) -> None:
        self.in_flight -= 1
        self.reconciles += 1
        self.finished_at[(controller, req)] = time.perf_counter()

    async def write(self, call: WriteCall, send: Send) -> Obj:
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


def operator_settings(args: argparse.Namespace) -> OperatorSettings:
    return replace(
        OperatorSettings(), poll_seconds=args.poll_seconds, busy_poll_seconds=args.busy_poll_seconds
    )


def for_kind(controller: Controller) -> Resource:
    """The kind a controller reconciles (its ``For``)."""
    kind = getattr(controller.reconcile, "kind", None)  # an ActorReconciler knows it
    res = RESOURCES_BY_KIND.get(kind) if isinstance(kind, str) else NON_ACTOR_FOR.get(controller.name)
    if res is None:
        raise LookupError(
            f"which kind does controller {controller.name} reconcile? (add it to NON_ACTOR_FOR)"
        )
    return res


class OperatorUnderTest:
    """The product's ``Operator`` in this process, watched through its observation points."""

    def __init__(
        self,
        t: Target | None,
        *,
        client: ApiClient | None = None,
        admin: Any = None,
        settings: OperatorSettings | None = None,
        workers: int = 4,
        qps: float | None = None,
        record_writes: bool = True,
        status_window: float | None = None,
    ) -> None:
        """``status_window``: seconds between non-urgent status writes of one object
        (default: the product's, ``kube.status_policy.DEFAULT_WINDOW``)."""
        if client is None:
            assert t is not None
            kubeconfig = KubeConfig.from_file(str(t.kubeconfig))
            client = ApiClient(kubeconfig, field_manager=FIELD_MANAGER, qps=qps, user_agent="bench-operator")
        self.client = client
        if admin is None and t is not None:
            admin = discover(t.kubeconfig)
        self.admin = admin if admin is not None else Unreachable()
        self.seen = Instrumentation()
        if record_writes:
            client.write_hooks.append(self.seen.write)
        config = OperatorConfig(settings=settings or OperatorSettings(), workers=workers)
        self.operator = Operator(self.client, self.admin, config)
        self.kinds = {c.name: for_kind(c) for c in self.controllers}
        self._task: asyncio.Task[None] | None = None
        for controller in self.controllers:
            controller.observers.append(self.seen)
            if status_window is not None and isinstance(controller.reconcile, ActorReconciler):
                controller.reconcile.status_window = StatusWindow(status_window)

    @property
    def controllers(self) -> list[Controller]:
        return self.operator.controllers

    def total_writes(self) -> int:
        return sum(self.client.writes.values())

    def launch(self) -> asyncio.Task[None]:
        """Run the operator (``Operator.run``) in a task."""
        self._task = asyncio.create_task(self.operator.run(), name="operator-under-test")
        return self._task

    async def start(self) -> None:
        """Run the operator; return once its caches are synced."""
        self._task = self.launch()
        while not self.operator.informers.has_synced():
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._task is not None:
            self.operator.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 60)
        await self.operator.recorder.close()
        await self.client.close()
        close = getattr(self.admin, "close", None)
        if close is not None and not isinstance(self.admin, Unreachable):
            await close()

    def idle(self) -> bool:
        """No key queued and no reconcile running (keys waiting on a timer,
        such as a ready set's periodic look at MatrixOne, do not count)."""
        return self.seen.in_flight == 0 and all(len(c.queue) == 0 for c in self.controllers)

    def holding(self) -> bool:
        """A status write is held back by the status window (a delayed requeue writes it)."""
        return any(getattr(c.reconcile, "holding", False) for c in self.controllers)

    async def wait_idle(self, timeout: float = 120.0) -> None:
        deadline = time.perf_counter() + timeout
        while not self.idle():
            if time.perf_counter() > deadline:
                raise TimeoutError("the operator did not become idle")
            await asyncio.sleep(0.005)

    async def wait_quiet(self, quiet: float, timeout: float) -> bool:
        """Until ``quiet`` seconds pass without a write of the operator's, it is
        idle and holds no status write back (a held one is written by a delayed
        requeue, which ``idle`` does not see, and belongs to the convergence, not
        to what is measured next); False if it kept writing for ``timeout`` seconds."""
        deadline = time.perf_counter() + timeout
        last, since = self.total_writes(), time.perf_counter()
        while time.perf_counter() - since < quiet or not self.idle() or self.holding():
            if time.perf_counter() > deadline:
                return False
            await asyncio.sleep(0.05)
            if self.total_writes() != last:
                last, since = self.total_writes(), time.perf_counter()
        return True

    def resync(self) -> list[tuple[str, Request]]:
        """Enqueue every cached object of every controller's kind, as a
        periodic resync would; return the (controller, request) pairs."""
        enqueued = []
        for controller in self.controllers:
            for obj in self.operator.caches.list(self.kinds[controller.name]):
                meta = obj["metadata"]
                req = Request(meta.get("namespace") or "", meta["name"])
                controller.queue.add(req)
                enqueued.append((controller.name, req))
        return enqueued
