"""What a controller's ``setup()`` is given: the operator's shared parts and the
calls that wire one controller onto them (controller-runtime's manager, as
``SetupWithManager`` sees it).

A ``setup()`` says, for its own kind, what the controller is for, what it owns,
what else it watches (with which mapper), what it reads besides, whether it adds a
finalizer, which status fields only report, and which of its condition reasons are
trouble (announced as Warning Events, and written at once). The operator keeps one
list of setups and nothing else about any controller.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.kinds import kind_info
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Actor, ActorReconciler
from mo_operator.kube.controller.controller import Controller, Request, UpdatePredicate, kept_changed
from mo_operator.kube.manager.adapters import Client, ClientWriter
from mo_operator.kube.recorder.events import EventRecorder
from mo_operator.matrixone import labels

from .framework.env import Caches, Env

Mapper = Callable[[Mapping[str, Any]], Iterable[Request]]
PAUSE_ANNOTATION = labels.SKIP_SYNC
"""``matrixorigin.io/skip-sync: "true"`` pauses reconciliation of an object (upstream's name)."""


@dataclass
class Wiring:
    """The operator's shared parts, and the controllers wired onto them so far."""

    env: Env
    caches: Caches
    writer: Client
    recorder: EventRecorder
    workers: int
    controllers: list[Controller] = field(default_factory=list)
    primary: list[tuple[Controller, Resource]] = field(default_factory=list)
    """Each Actor's controller and the kind it reconciles (what a resync enqueues)."""

    def actor_controller(
        self,
        name: str,
        res: Resource,
        actor: Actor,
        owns: Iterable[Resource],
        *,
        warning_reasons: frozenset[str],
        reads: Iterable[Resource] = (),
        adds_finalizer: bool = True,
        quiet_fields: frozenset[str] = frozenset(),
    ) -> Controller:
        """The controller of ``res``, watching it and ``owns``, reading ``reads`` besides;
        ``name`` also names its finalizer (``labels.finalizer``)."""
        caches = self.caches
        reconciler = ActorReconciler(
            kind=res.kind,
            actor=actor,
            get=lambda req: caches.get(res, req.namespace, req.name),
            writer=ClientWriter(self.writer, res),
            recorder=self.recorder,
            finalizer=labels.finalizer(name),
            pause_annotation=PAUSE_ANNOTATION,
            warning_reasons=warning_reasons,
            adds_finalizer=adds_finalizer,
            quiet_fields=quiet_fields,
            leading_conditions=_upstream_conditions(res.kind),
        )
        controller = Controller(name, reconciler, max_concurrent=self.workers)
        for informer in caches.informers(res):
            controller.for_(informer)
        for owned in owns:
            for informer in caches.informers(owned):
                controller.owns(informer, res.api_version, res.kind)
        self.reads(controller, *reads)
        self.controllers.append(controller)
        self.primary.append((controller, res))
        return controller

    def add(self, controller: Controller) -> None:
        """A controller that is not an Actor's (its wiring is its own)."""
        self.controllers.append(controller)

    def watch(
        self,
        controller: Controller,
        res: Resource,
        mapper: Mapper,
        predicate: UpdatePredicate = kept_changed,
    ) -> None:
        """Wake ``controller`` with ``mapper``'s requests on a change of ``res`` (an
        update only when ``predicate`` says it matters)."""
        for informer in self.caches.informers(res):
            controller.watches(informer, mapper, predicate)

    def reads(self, controller: Controller, *resources: Resource) -> None:
        """Caches ``controller`` reads without watching them (it starts once they synced)."""
        for res in resources:
            controller.reads(*self.caches.informers(res))


Setup = Callable[[Wiring], None]
"""A controller's ``setup()``: wires it (or a few of one kind family) onto the operator."""


def _upstream_conditions(kind: str) -> tuple[str, ...]:
    """The condition types the Go operator gives ``kind``, which its status lists first."""
    info = kind_info(kind)
    return info.upstream_conditions if info is not None else ()
