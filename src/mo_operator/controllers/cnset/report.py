"""What a CNSet round reports: its CN stores, where clients connect, and ``Ready``
and ``UpToDate``, for a serving set (its roll read from its pods and template
hash, since no workload reports one) or a pooling one (its pool phases)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import is_deleting, labels_of, name_of
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from ..specs import pods as podutil
from ..specs.statefulsets import Rollout, stall
from ..steps.status import UP_TO_DATE, Readiness, not_fine, report_rollout, running_versions, summarise
from . import pods as cnpods
from . import pooling
from .observed import CNSetView
from .stores import cordoned, store_of

Obj = dict[str, Any]

COMPONENT = Component.CN
READINESS = Readiness(
    members="CNs ready",
    not_ready="CNsNotReady",
    all_ready="AllCNsReady",
    all_members="CNs registered and Working",
    serves_while_stalled=True,
    noun="CNs",
)


def serving_rollout(seen: CNSetView, digest: str, stall_seconds: float) -> Rollout:
    """How far the set's pods got toward ``replicas`` ready pods of template ``digest``.
    Draining and cordoned pods are not ready on purpose: they count neither as ready
    nor as stalled."""
    replicas = seen.replicas
    live = [p for p in seen.pods if not is_deleting(p)]
    current = [p for p in live if labels_of(p).get(cnpods.TEMPLATE_HASH) == digest]
    ready = sum(1 for p in live if podutil.is_ready(p) and cnpods.draining_since(p) is None)
    updated = sum(1 for p in current if cnpods.draining_since(p) is None)
    complete = len(live) == replicas == updated and all(podutil.is_ready(p) or cordoned(p) for p in current)
    serving = [p for p in live if cnpods.draining_since(p) is None and not cordoned(p)]
    stalled, recheck = stall(serving, seen.now, stall_seconds)
    return Rollout(replicas, min(ready, replicas), min(updated, replicas), complete, stalled, recheck)


@dataclass(frozen=True)
class Serving:
    """What a serving round leaves its report: its roll and what holds pods back."""

    roll: Rollout
    waiting: str | None
    """Why the decision creates no pod yet (a roll waiting for a new pod to be ready)."""
    busy: bool
    """Work under way on the pods or in MatrixOne (the round's writes aside)."""

    @property
    def recheck(self) -> float | None:
        return self.roll.recheck_after

    def report(self, ctx: Context, seen: CNSetView, selector: Mapping[str, str], *, pending: bool) -> None:
        """``pending``: the round writes what runs the pods."""
        live = _live(seen)
        _set_status(ctx, seen, selector, live, [_store(p, _serving_phase(seen, p)) for p in live])
        ctx.status["readyReplicas"] = self.roll.ready
        fenced = [name_of(p) for p in live if cordoned(p)]
        detail = "; ".join(filter(None, [self.waiting, f"cordoned: {', '.join(fenced)}" if fenced else None]))
        waiting = seen.state is None and live and not seen.client_fault
        report_rollout(
            ctx,
            self.roll,
            seen.replicas,
            READINESS,
            pending=pending,
            pods=live,
            unavailable=_unavailable(seen) if waiting else None,
            detail=detail or None,
        )


def _serving_phase(seen: CNSetView, pod: Mapping[str, Any]) -> str:
    store = store_of(seen.state, pod)
    if cnpods.draining_since(pod) is not None or cordoned(pod):
        return "Draining"
    if store is not None and store.work_state is WorkState.WORKING:
        return "Up"
    return "Unknown"


@dataclass(frozen=True)
class Pooling:
    """What a pooling round leaves its report: whether a pod is stuck starting."""

    stalled: str | None
    recheck: float | None
    busy: bool
    """Work under way on the pods or in MatrixOne (the round's writes aside)."""

    def report(self, ctx: Context, seen: CNSetView, selector: Mapping[str, str]) -> None:
        replicas = seen.replicas
        live = _live(seen)
        _set_status(ctx, seen, selector, live, [_store(p, _pooled_phase(seen, p)) for p in live])
        ctx.status["readyReplicas"] = sum(1 for p in live if podutil.is_ready(p))
        counts = pooling.pool_counts(live)
        serving = len(live) - counts[labels.POOL_PHASE_TERMINATING]
        if self.stalled:
            ctx.set_condition("Ready", False, "RolloutStalled", self.stalled)
        elif seen.state is None and live:
            ctx.set_condition("Ready", False, "HAKeeperUnavailable", _unavailable(seen))
        elif serving < replicas or counts[labels.POOL_PHASE_UNKNOWN]:
            registered = serving - counts[labels.POOL_PHASE_UNKNOWN]
            described = pooling.describe_counts(counts)
            ctx.set_condition(
                "Ready", False, "CNsNotReady", f"{registered}/{replicas} CNs registered; {described}"
            )
        else:
            ctx.set_condition("Ready", True, "AllCNsReady", pooling.describe_counts(counts))
        ctx.set_condition(
            UP_TO_DATE,
            True,
            "Pooling",
            "a pooling set never rolls its pods: its pool starts a new set for a new template",
        )
        ready = int(ctx.status["readyReplicas"])
        summarise(ctx, f"{min(ready, replicas)}/{replicas}", running_versions(live), updated=len(live))
        ctx.status["message"] = not_fine(ctx.status)


def _unavailable(seen: CNSetView) -> str:
    """Why the CNs' stores cannot be counted (the ``HAKeeper`` condition says more)."""
    return seen.trouble.message if seen.trouble is not None else "HAKeeper does not answer"


def _pooled_phase(seen: CNSetView, pod: Mapping[str, Any]) -> str:
    store = store_of(seen.state, pod)
    work = store.work_state if store is not None else None
    return {WorkState.WORKING: "Up", WorkState.DRAINING: "Draining"}.get(work, "Unknown")  # type: ignore[arg-type]


def _live(seen: CNSetView) -> list[Mapping[str, Any]]:
    return sorted((p for p in seen.pods if not is_deleting(p)), key=name_of)


def _store(pod: Mapping[str, Any], phase: str) -> Obj:
    return {"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase}


def _set_status(
    ctx: Context,
    seen: CNSetView,
    selector: Mapping[str, str],
    live: Sequence[Mapping[str, Any]],
    stores: list[Obj],
) -> None:
    """The fields both modes report: the stores, how many pods, and where clients connect."""
    status = ctx.status
    status["stores"] = stores
    status["replicas"] = len(live)
    status["labelSelector"] = str(selector_from_labels(selector))
    status["host"] = names.service_host(COMPONENT, seen.name, seen.namespace)
    status["port"] = ports.CN_SQL


def first_fields(ctx: Context, selector: Mapping[str, str]) -> Obj:
    """What a set reports with no pod yet: ``_set_status``'s fields and ``readyReplicas``."""
    return {
        "stores": [],
        "replicas": 0,
        "readyReplicas": 0,
        "labelSelector": str(selector_from_labels(selector)),
        "host": names.service_host(COMPONENT, ctx.name, ctx.namespace),
        "port": ports.CN_SQL,
    }
