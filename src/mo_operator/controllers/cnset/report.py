"""What a CNSet round reports: its CN stores, where clients connect, and ``Ready``
and ``UpToDate``, for a serving set (its roll read from its pods and template
hash, since no workload reports one) or a pooling one (its pool phases).

The status fields and a pooling set's conditions are part of the pods' decision
(``status_fields``, ``Pooling.conditions``); the roll's conditions and the summary
are the shared status steps', which ``report`` runs on the round's status draft."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.meta.objects import is_deleting, labels_of, name_of
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from ..framework.decision import SetCondition
from ..framework.draft import Drafting
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

    def status(self, seen: CNSetView, selector: Mapping[str, str]) -> Obj:
        live = seen.live
        stores = [_store(p, _serving_phase(seen, p)) for p in live]
        return {**status_fields(seen, selector, live, stores), "readyReplicas": self.roll.ready}

    def report(self, draft: Drafting, seen: CNSetView, *, pending: bool) -> None:
        """The roll's conditions; ``pending``: the round writes what runs the pods."""
        live = seen.live
        fenced = [name_of(p) for p in live if cordoned(p)]
        detail = "; ".join(filter(None, [self.waiting, f"cordoned: {', '.join(fenced)}" if fenced else None]))
        waiting = seen.state is None and live and not seen.client_fault
        report_rollout(
            draft,
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

    def status(self, seen: CNSetView, selector: Mapping[str, str]) -> Obj:
        live = seen.live
        stores = [_store(p, _pooled_phase(seen, p)) for p in live]
        ready = sum(1 for p in live if podutil.is_ready(p))
        return {**status_fields(seen, selector, live, stores), "readyReplicas": ready}

    def conditions(self, seen: CNSetView) -> tuple[SetCondition, ...]:
        """``Ready`` by the pool phases of the set's pods; ``UpToDate`` always."""
        replicas = seen.replicas
        live = seen.live
        counts = pooling.pool_counts(live)
        serving = len(live) - counts[labels.POOL_PHASE_TERMINATING]
        if self.stalled:
            ready = SetCondition("Ready", False, "RolloutStalled", self.stalled)
        elif seen.state is None and live:
            ready = SetCondition("Ready", False, "HAKeeperUnavailable", _unavailable(seen))
        elif serving < replicas or counts[labels.POOL_PHASE_UNKNOWN]:
            registered = serving - counts[labels.POOL_PHASE_UNKNOWN]
            described = pooling.describe_counts(counts)
            ready = SetCondition(
                "Ready", False, "CNsNotReady", f"{registered}/{replicas} CNs registered; {described}"
            )
        else:
            ready = SetCondition("Ready", True, "AllCNsReady", pooling.describe_counts(counts))
        up_to_date = SetCondition(
            UP_TO_DATE,
            True,
            "Pooling",
            "a pooling set never rolls its pods: its pool starts a new set for a new template",
        )
        return ready, up_to_date

    def report(self, draft: Drafting, seen: CNSetView) -> None:
        """The summary of the status the decision set."""
        live = seen.live
        ready = int(draft.status["readyReplicas"])
        replicas = seen.replicas
        summarise(draft, f"{min(ready, replicas)}/{replicas}", running_versions(live), updated=len(live))
        draft.status["message"] = not_fine(draft.status)


def _unavailable(seen: CNSetView) -> str:
    """Why the CNs' stores cannot be counted (the ``HAKeeper`` condition says more)."""
    return seen.trouble.message if seen.trouble is not None else "HAKeeper does not answer"


def _pooled_phase(seen: CNSetView, pod: Mapping[str, Any]) -> str:
    store = store_of(seen.state, pod)
    work = store.work_state if store is not None else None
    return {WorkState.WORKING: "Up", WorkState.DRAINING: "Draining"}.get(work, "Unknown")  # type: ignore[arg-type]


def _store(pod: Mapping[str, Any], phase: str) -> Obj:
    return {"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase}


def status_fields(
    seen: CNSetView, selector: Mapping[str, str], live: Sequence[Mapping[str, Any]], stores: list[Obj]
) -> Obj:
    """The fields both modes report: the stores, how many pods, and where clients connect."""
    return {
        "stores": stores,
        "replicas": len(live),
        "labelSelector": str(selector_from_labels(selector)),
        "host": names.service_host(COMPONENT, seen.name, seen.namespace),
        "port": ports.CN_SQL,
    }


def first_fields(name: str, namespace: str, selector: Mapping[str, str]) -> Obj:
    """What set ``name`` reports with no pod yet: ``status_fields`` and ``readyReplicas``."""
    return {
        "stores": [],
        "replicas": 0,
        "readyReplicas": 0,
        "labelSelector": str(selector_from_labels(selector)),
        "host": names.service_host(COMPONENT, name, namespace),
        "port": ports.CN_SQL,
    }
