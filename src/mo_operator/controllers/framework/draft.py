"""A status written step by step inside a pure decision.

The steps that report (``steps/status.py``'s ``report_rollout``, the volume
expansion's condition, the missing references) write into something with a
``status``, ``set_condition`` and ``requeue``: the reconcile's ``Context`` for an
actor that reports as it goes, or a ``StatusDraft`` that ``decide`` owns, seeded
with the status as known, whose result becomes the ``Decision``'s status fields,
conditions and look-again. A step reads back what earlier steps wrote (the
summary names the first condition that is not fine), so the draft keeps the
conditions as they would read, and replays them, in order, on the context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from mo_operator.kube.controller.outcome import Later, Requeue, Wait, sooner
from mo_operator.kube.meta.conditions import get_condition

from .decision import Decision, Emit, SetCondition
from .writes import Intent

__all__ = ["Drafting", "StatusDraft"]


class Drafting(Protocol):
    """What a reporting step writes into: a ``Context`` or a ``StatusDraft``."""

    status: dict[str, Any]

    @property
    def generation(self) -> int: ...

    @property
    def namespace(self) -> str: ...

    def set_condition(self, type: str, status: bool | str, reason: str, message: str = "") -> None: ...

    def condition(self, type: str) -> Mapping[str, Any] | None: ...

    def requeue(self, after: float, reason: str = "") -> None: ...


class StatusDraft:
    """The status a decision drafts: the object's as known, and what its steps set."""

    def __init__(self, known: Mapping[str, Any], *, generation: int, namespace: str) -> None:
        self.status: dict[str, Any] = dict(known)
        self._generation = generation
        self._namespace = namespace
        self.conditions: list[SetCondition] = []
        self.later: Later | None = None

    @property
    def generation(self) -> int:
        return self._generation

    @property
    def namespace(self) -> str:
        return self._namespace

    def set_condition(self, type: str, status: bool | str, reason: str, message: str = "") -> None:
        """Recorded for the context, and set in the draft as the steps read it back (its
        transition time is the context's to stamp, and its reason the context's to check)."""
        value = status if isinstance(status, bool) else status == "True"
        self.conditions.append(SetCondition(type, value, reason, message))
        new = {
            "type": type,
            "status": "True" if value else "False",
            "reason": reason,
            "message": message,
            "observedGeneration": self._generation,
        }
        conditions = list(self.status.get("conditions") or ())
        index = next((i for i, c in enumerate(conditions) if c.get("type") == type), None)
        if index is None:
            conditions.append(new)
        else:
            conditions[index] = new
        self.status["conditions"] = conditions

    def condition(self, type: str) -> Mapping[str, Any] | None:
        """The condition ``type`` as known, or as this decision set it."""
        return get_condition(self.status.get("conditions") or (), type)

    def requeue(self, after: float, reason: str = "") -> None:
        self.later = sooner(self.later, Requeue(after, reason))

    def wait(self, after: float, reason: str) -> None:
        self.later = sooner(self.later, Wait(after, reason))

    def decision(
        self, intents: Sequence[Intent] = (), *, events: Sequence[Emit] = (), log: Sequence[str] = ()
    ) -> Decision:
        """The decision of ``intents`` with the status drafted: every field (the
        conditions as set, in order), and the soonest look-again asked."""
        fields = {k: v for k, v in self.status.items() if k != "conditions"}
        return Decision(tuple(intents), fields, tuple(self.conditions), tuple(events), self.later, tuple(log))
