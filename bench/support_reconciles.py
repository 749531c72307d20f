"""Every reconcile's start, by controller and key: a ``ReconcileObserver`` (the
runtime's own observation point) for the benchmarks that ask when the operator
first took up a key after some moment (a change delivered, a status written)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from mo_operator.kube.controller.controller import Request


@dataclass
class Reconciles:
    """Reconcile starts (``time.perf_counter()``), in order, by controller and key."""

    started_at: dict[tuple[str, Request], list[float]] = field(default_factory=dict)

    def started(self, controller: str, req: Request) -> None:
        self.started_at.setdefault((controller, req), []).append(time.perf_counter())

    def finished(self, controller: str, req: Request) -> None:
        """Only starts are kept."""

    def first_after(self, controller: str, req: Request, t: float) -> float | None:
        """The first start of ``req`` by ``controller`` at or after ``t``."""
        return next((s for s in self.started_at.get((controller, req), ()) if s >= t), None)
