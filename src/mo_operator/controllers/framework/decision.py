"""What a pure ``decide`` returns: everything the reconcile will do, as data.

A controller in the read, decide, act shape gathers its reads into an immutable
view, and ``decide(view)`` returns a ``Decision``: the writes as intents (see
``writes``), the status fields and conditions to set, the Events to emit and
when to look again, with why. A table test checks a decision field by field,
with no client and no event loop; ``act`` hands it to the framework, which
writes status by its policy and runs the plan.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.base import APIModel, dump
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import Later, Requeue, Wait
from mo_operator.kube.manager.adapters import Client

from .unseen import Unseen
from .writes import Intent, Writes

__all__ = ["Decision", "Emit", "SetCondition"]


@dataclass(frozen=True)
class SetCondition:
    """A condition of the object's status: ``type`` True or False, why and what it means."""

    type: str
    status: bool
    reason: str
    message: str


@dataclass(frozen=True)
class Emit:
    """An Event on the object; ``after_writes``: only once the decision's writes have
    all succeeded (an Event announcing a write), else at once."""

    type: str
    reason: str
    message: str
    after_writes: bool = False


@dataclass(frozen=True)
class Decision:
    intents: tuple[Intent, ...] = ()
    status: APIModel | Mapping[str, Any] = field(default_factory=dict)
    """Status fields set as given (the kind's status model, its fields set; or JSON), a
    None one removed; conditions go in ``conditions``."""
    conditions: tuple[SetCondition, ...] = ()
    events: tuple[Emit, ...] = ()
    later: Later | None = None
    log: tuple[str, ...] = ()
    """Lines for the reconcile's log (info)."""
    finalized: bool = False
    """For a finalizer's decision: its work is done once these writes succeed, so the
    finalizer goes."""

    def act(self, ctx: Context, client: Client, unseen: Unseen | None = None) -> Writes | None:
        """Hand the decision to the framework: the status draft, Events and look-again
        on ``ctx``, the writes as the plan it runs (its applies noted in ``unseen``)."""
        for line in self.log:
            ctx.log.info("%s", line)
        fields = dump(self.status) if isinstance(self.status, APIModel) else self.status
        for key, value in fields.items():
            if value is None:
                ctx.status.pop(key, None)
            else:
                ctx.status[key] = value
        for condition in self.conditions:
            ctx.set_condition(condition.type, condition.status, condition.reason, condition.message)
        announced = [e for e in self.events if e.after_writes and self.intents]
        for event in self.events:
            if event not in announced:
                ctx.event(event.type, event.reason, event.message)
        if isinstance(self.later, Wait):
            ctx.wait(self.later.after, self.later.reason)
        elif isinstance(self.later, Requeue):
            ctx.requeue(self.later.after, self.later.reason)
        plan = Writes(client)
        for intent in self.intents:
            plan.intend(intent, unseen)
        for event in announced:
            plan.call(f"report {event.reason}", _announce(ctx, event))
        return plan or None

    async def finalize(self, ctx: Context, client: Client) -> bool:
        """Carry out a finalizer's decision at once, as the framework's ``finalize``
        expects: True when the finalizer may go."""
        plan = self.act(ctx, client)
        if plan is not None:
            await plan(ctx)
        return self.finalized


def _announce(ctx: Context, event: Emit) -> Callable[[], Awaitable[None]]:
    async def announce() -> None:
        ctx.event(event.type, event.reason, event.message)

    return announce
