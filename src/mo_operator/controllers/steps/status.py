"""Conditions every set reports besides ``Ready`` and ``Synced``, and the summary
``kubectl get`` prints.

``UpToDate`` says whether every pod runs the current spec: False while a
change rolls (with how far it got) or when the roll stopped (with the pod
and why). The MatrixOneCluster waits for it before rolling the next
component, which is how an upgrade goes log → TN → CN → proxy and halts
where a new pod fails.

The summary (``readiness`` as ``2/3``, ``updatedReplicas``, the ``version`` the
pods run and the first ``message`` that is not fine) is in every status from
its first write, so that its values changing are progress the status window
coalesces, never a field appearing that must be written at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.controller.actor import SYNCED
from mo_operator.kube.meta.objects import is_deleting
from mo_operator.matrixone import layout
from mo_operator.matrixone.version import image_tag

from ..framework.draft import Drafting
from ..framework.meta import name_of
from ..specs import pods as podutil
from ..specs.statefulsets import Rollout
from . import progress

UP_TO_DATE = "UpToDate"
PROGRESSING = "Progressing"
"""``Synced``'s reason while a round's writes are applied (``kube.controller.actor``)."""
NOT_STARTED = ("NotStarted", "no workload yet: the set waits for what it runs against")
"""``UpToDate`` of a set that has not started its workload (reason, message)."""
APPLYING = ("Applying", "applying the current spec to the workload")
"""``UpToDate`` of a set making its workload, and bringing its pods up for the first time."""


def set_rollout_conditions(ctx: Drafting, roll: Rollout, *, pending: bool) -> None:
    """``pending``: the set has writes to make. While it applies a new spec (or its
    roll is not complete) they may reshape its pods, so it is not up to date. A set
    whose pods all run its current spec stays up to date through the writes of the
    same generation (a claim's annotation, old ConfigMaps collected): flipping then
    would announce a roll that does not happen. A workload that already has pods
    starts a roll as soon as it is rewritten, and says so at once: the turn from
    True to False is what the Event announces, so its reason must name the roll.

    A set bringing up the workload it made (``UpToDate`` was ``NotStarted`` or
    ``Applying``) says ``Applying`` until its pods are all up: no pod is being
    replaced, so there is no roll to name, and its progress is counted in ``Ready``.
    One unchanged condition for the whole start leaves the status window nothing to
    write between the set starting and the set Ready."""
    if pending and _kept(ctx, roll):
        pending = False
    known = _reason(ctx, UP_TO_DATE)
    starting = known in (NOT_STARTED[0], APPLYING[0])
    # a set that ran (or has reported nothing) rewriting its workload, or one finding
    # pods that serve already (taken over from elsewhere): pods are replaced
    rolls = not starting or (known == NOT_STARTED[0] and roll.ready > 0)
    if pending and roll.replicas > 0 and rolls:
        ctx.set_condition(
            UP_TO_DATE, False, "RollingUpdate", f"applying the current spec to the workload; {roll.summary()}"
        )
    elif roll.stalled:
        ctx.set_condition(UP_TO_DATE, False, "RolloutStalled", roll.stalled)
    elif pending or (starting and not roll.complete):
        ctx.set_condition(UP_TO_DATE, False, *APPLYING)
    elif not roll.complete:
        ctx.set_condition(UP_TO_DATE, False, "RollingUpdate", roll.summary())
    else:
        ctx.set_condition(UP_TO_DATE, True, "RolloutComplete", f"{roll.replicas} pods run the current spec")


def _reason(ctx: Drafting, ctype: str) -> str | None:
    """The reason ``ctype`` gives in the status as known so far."""
    known = ctx.condition(ctype)
    return None if known is None else str(known.get("reason"))


def first_status(
    ctx: Drafting, fields: Mapping[str, Any], reason: str, message: str, *, replicas: int
) -> None:
    """Give a set that has not reported yet every field and the ``UpToDate``, ``Upgrading``
    and ``Scaling`` conditions it will report, at the values known before it runs anything (``fields``; ``UpToDate``
    False for ``reason``; ``replicas`` the pods its spec asks for): what follows changes values, which the status window may
    coalesce, where a field or condition appearing is written at once. A set that has
    reported keeps what it said."""
    if ctx.condition(UP_TO_DATE) is not None:
        return
    for key, value in fields.items():
        ctx.status.setdefault(key, value)
    summarise(ctx, f"0/{replicas}", (), updated=0)
    ctx.set_condition(UP_TO_DATE, False, reason, message)
    ctx.set_condition(
        progress.UPGRADING,
        *progress.upgrading(progress.condition(ctx.status, UP_TO_DATE), None, 0, replicas, "pods"),
    )
    ctx.set_condition(progress.SCALING, *progress.scaling(None, replicas, 0, 0, "pods"))
    ctx.status["message"] = not_fine(ctx.status)


def pod_version(pod: Mapping[str, Any]) -> str:
    """The image tag its MatrixOne container runs, as the kubelet reports it (its first
    container's, if none is ``main``); empty before the container started."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    main = next((c for c in statuses if c.get("name") == layout.MAIN_CONTAINER), None)
    chosen = main or (statuses[0] if statuses else {})
    return image_tag(str(chosen.get("image") or ""))


def running_versions(pods: Iterable[Mapping[str, Any]]) -> list[str]:
    """The versions the live pods run, most pods first (ties by version)."""
    counted = Counter(v for p in pods if not is_deleting(p) and (v := pod_version(p)))
    return [v for v, _ in sorted(counted.items(), key=lambda item: (-item[1], item[0]))]


def not_fine(status: Mapping[str, Any]) -> str:
    """``reason: message`` of the first condition that is not fine: ``UpToDate`` (a
    roll says most), then ``Ready``, then any other False one; empty when all are.
    ``Synced`` while the framework applies a round's writes (``Progressing``) is the
    ordinary course of a reconcile, not trouble; ``Upgrading`` and ``Scaling`` say
    what work runs, False when none does."""
    conditions = [
        c
        for c in status.get("conditions") or ()
        if c.get("status") != "True"
        and (c.get("type"), c.get("reason")) != (SYNCED, PROGRESSING)
        and c.get("type") not in (progress.UPGRADING, progress.SCALING)
    ]
    order = {UP_TO_DATE: 0, "Ready": 1}
    conditions.sort(key=lambda c: order.get(str(c.get("type")), 2))
    if not conditions:
        return ""
    first = conditions[0]
    return f"{first.get('reason')}: {first.get('message') or ''}".rstrip(": ")


def summarise(ctx: Drafting, readiness: str, versions: Sequence[str], *, updated: int | None = None) -> None:
    """The summary fields ``kubectl get`` prints; ``message`` is set by the caller once
    its conditions are."""
    ctx.status["readiness"] = readiness
    ctx.status["version"] = ",".join(versions)
    if updated is not None:
        ctx.status["updatedReplicas"] = updated
    ctx.status.setdefault("message", "")


def _kept(ctx: Drafting, roll: Rollout) -> bool:
    """Up to date, reported for this generation, and the roll complete."""
    known = ctx.condition(UP_TO_DATE)
    return bool(
        roll.complete
        and known is not None
        and known.get("status") == "True"
        and int(ctx.status.get("observedGeneration") or 0) == ctx.generation
    )


@dataclass(frozen=True)
class Readiness:
    """How a set words its ``Ready`` condition: the reasons and what its members are."""

    members: str
    """What is counted, as in "2/3 TN stores registered in HAKeeper"."""
    not_ready: str
    all_ready: str
    noun: str = "pods"
    """What the members are, as in "2/3 log stores updated" (``Upgrading``, ``Scaling``)."""
    all_members: str = ""
    """How the members read once all are ready, when that says more than ``members``."""
    serves_while_stalled: bool = False
    """A stalled roll leaves ``Ready`` True while every replica still serves: a set whose
    roll adds a pod before it retires one (CN) loses no capacity to a broken new pod,
    and ``UpToDate`` still reports the stall."""


def report_rollout(
    ctx: Drafting,
    roll: Rollout,
    replicas: int,
    readiness: Readiness,
    *,
    pending: bool,
    pods: Iterable[Mapping[str, Any]] = (),
    waiting: tuple[str, str] | None = None,
    unavailable: str | None = None,
    detail: str | None = None,
) -> None:
    """``Ready`` and ``UpToDate`` from the roll, the summary ``kubectl get`` prints
    (``pods``: the set's, for the version they run), and a recheck when a stall
    could begin.

    ``waiting`` (reason, message) says what the set waits for before its roll means
    anything; ``unavailable`` why its members cannot be counted (HAKeeper does not
    answer); ``detail`` what holds the members that are not ready.

    A stalled roll reports not Ready even while enough old pods serve (unless the
    kind ``serves_while_stalled``): a human must look, and the cluster must not roll
    the next component.
    """
    if waiting is not None:
        ctx.set_condition("Ready", False, *waiting)
    elif roll.stalled:
        serving = readiness.serves_while_stalled and roll.ready >= replicas > 0
        ctx.set_condition("Ready", serving, "RolloutStalled", roll.stalled)
    elif unavailable is not None:
        ctx.set_condition("Ready", False, "HAKeeperUnavailable", unavailable)
    elif roll.ready < replicas:
        counted = f"{roll.ready}/{replicas} {readiness.members}"
        ctx.set_condition("Ready", False, readiness.not_ready, f"{counted}; {detail}" if detail else counted)
    else:
        all_ready = f"{replicas} {readiness.all_members or readiness.members}"
        ctx.set_condition("Ready", True, readiness.all_ready, all_ready)
    set_rollout_conditions(ctx, roll, pending=pending)
    pods = list(pods)
    _set_progress(ctx, roll, replicas, readiness.noun, len(pods))
    summarise(ctx, f"{min(roll.ready, replicas)}/{replicas}", running_versions(pods), updated=roll.updated)
    ctx.status["message"] = not_fine(ctx.status)
    if roll.recheck_after is not None:
        ctx.requeue(roll.recheck_after, "whether the roll moved on")


def _set_progress(ctx: Drafting, roll: Rollout, replicas: int, noun: str, present: int) -> None:
    """``Upgrading`` and ``Scaling`` (see :mod:`.progress`), after ``UpToDate``."""
    status = ctx.status
    up = progress.upgrading(
        progress.condition(status, UP_TO_DATE),
        progress.condition(status, progress.UPGRADING),
        roll.updated,
        replicas,
        noun,
    )
    ctx.set_condition(progress.UPGRADING, *up)
    scale = progress.scaling(
        progress.condition(status, progress.SCALING), replicas, roll.ready, present, noun
    )
    ctx.set_condition(progress.SCALING, *scale)


def store_status(status: dict[str, Any], pods: Sequence[Mapping[str, Any]], now: float) -> None:
    """``availableStores``/``failedStores`` from the pods (upstream's FailoverStatus).

    A store is failed when it went down (it was listed before, up or down) or its pod
    says why it cannot come up (``pods.failing``: a crash loop, an image that does not
    pull, no node). A pod still starting for the first time is neither: it has not
    failed, and listing it would make every set's first start report, and write, a
    failure that never happened. Its absence from both lists, with ``Ready`` counting
    the stores ready, says it is on its way. The failover decision reads the pods
    themselves, not these lists."""
    available: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    previous = {
        s.get("podName"): s
        for s in (status.get("failedStores") or []) + (status.get("availableStores") or [])
    }
    for pod in sorted(pods, key=name_of):
        up = podutil.is_ready(pod)
        before = previous.get(name_of(pod))
        if not up and before is None and not podutil.failing(pod):
            continue
        phase = "Up" if up else "Down"
        since = (before or {}).get("lastTransition") if (before or {}).get("phase") == phase else None
        (available if up else failed).append(
            {"podName": name_of(pod), "phase": phase, "lastTransition": since or podutil.format_time(now)}
        )
    status["availableStores"] = available
    status["failedStores"] = failed
