"""Whether a set can be taken over from its Kruise workload now, and how (pure).

A takeover replaces every pod of the set once (our pod template differs from
the Go operator's), so it is safe only where a normal roll would be: every
pod ready, nothing rolling already, and for the log service enough stores
that one of them restarting leaves a quorum. Kruise features our workloads
have no equivalent for are refused rather than silently dropped: a pod queued in
``podsToDelete`` or a paused update would be acted on as the user did not ask.
A pool's CNSet is the exception: nothing of it rolls (its pods stay as they
are, claimed or idle), so only pods someone else controls stop it; its size,
its readiness, a pending ``podsToDelete`` and an unfinished in-place update
are its pool's business, which our CNSet and CNPool carry on, as upstream's
would (a pool's set is paused, ``pauseUpdate``, or updated in place).
A LogSet's reserved ordinals (upstream's log failover) carry over when its pods
run where Kruise runs them (``matrixone/reserved.py``): our StatefulSet keeps the
stores above the highest reserved ordinal, the LogSet those below it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.meta.conditions import get_condition
from mo_operator.matrixone import names
from mo_operator.matrixone import reserved as ordinals
from mo_operator.matrixone.component import Component

from ..cnset.pooling import is_pooling
from ..framework.meta import is_deleting, name_of
from ..specs import pods as podutil
from .kruise import SET_KINDS, kruise_controller

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class SetPlan:
    """What the takeover of one set does, or why it must not happen now."""

    component: Component
    name: str
    workload: str
    """``<kind> <name>`` of the Kruise workload, empty when there is none."""
    pods: tuple[str, ...]
    steps: tuple[str, ...]
    refusals: tuple[str, ...]

    @property
    def kind(self) -> str:
        return self.component.kind

    @property
    def needed(self) -> bool:
        return bool(self.workload)

    def describe(self) -> list[str]:
        """Lines a person reads in the dry run."""
        head = f"{self.kind} {self.name}"
        if not self.needed:
            return [f"{head}: no Kruise workload; nothing to take over"]
        if self.refusals:
            return [f"{head}: REFUSED", *(f"  - {reason}" for reason in self.refusals)]
        return [f"{head}: {self.workload}, pods {', '.join(self.pods)}", *(f"  {s}" for s in self.steps)]


def quorum(replicas: int) -> int:
    """Stores a log shard needs up: a majority of its replicas."""
    return replicas // 2 + 1


def plan_set(component: Component, obj: Obj, workload: Obj | None, pods: Sequence[Obj]) -> SetPlan:
    """The takeover of set ``obj`` whose Kruise workload is ``workload`` (None: already ours)."""
    name = name_of(obj)
    live = sorted((p for p in pods if not is_deleting(p)), key=name_of)
    pod_names = tuple(name_of(p) for p in live)
    if workload is None:
        return SetPlan(component, name, "", pod_names, (), ())
    kind = SET_KINDS[component].workload
    label = f"{kind.api_version} {kind.kind} {name_of(workload)}"
    pool = is_pooling(obj.get("spec") or {})
    refusals = (
        _foreign_pods(live)
        if pool
        else [
            *_set_refusals(obj),
            *_pod_refusals(live),
            *_foreign_pods(live),
            *_workload_refusals(component, workload, live),
        ]
    )
    steps = _steps(component, name, label, live, reserved_ordinals(component, workload), pool)
    return SetPlan(component, name, label, pod_names, steps, tuple(refusals))


def _set_refusals(obj: Obj) -> list[str]:
    ready = get_condition((obj.get("status") or {}).get("conditions"), "Ready")
    if ready is None or ready.get("status") != "True":
        why = (ready or {}).get("message") or (ready or {}).get("reason") or "no Ready condition"
        return [f"the set is not Ready ({why}): take over a healthy set only"]
    return []


def _pod_refusals(pods: Sequence[Obj]) -> list[str]:
    not_ready = [name_of(p) for p in pods if not podutil.is_ready(p)]
    return [f"pods not ready: {', '.join(not_ready)}"] if not_ready else []


def _foreign_pods(pods: Sequence[Obj]) -> list[str]:
    foreign = [name_of(p) for p in pods if _controller(p) and kruise_controller(p) is None]
    return [f"pods controlled by something other than Kruise: {', '.join(foreign)}"] if foreign else []


def _controller(pod: Obj) -> bool:
    return any(ref.get("controller") for ref in pod["metadata"].get("ownerReferences") or ())


def _workload_refusals(component: Component, workload: Obj, pods: Sequence[Obj]) -> list[str]:
    spec, status = workload.get("spec") or {}, workload.get("status") or {}
    replicas = int(spec.get("replicas") or 0)
    out = []
    out.extend(_reserved_refusals(component, spec.get("reserveOrdinals") or [], replicas, pods))
    to_delete = (spec.get("scaleStrategy") or {}).get("podsToDelete") or []
    if to_delete:
        out.append(f"spec.scaleStrategy.podsToDelete {to_delete} is pending")
    if (spec.get("updateStrategy") or {}).get("paused") or (
        (spec.get("updateStrategy") or {}).get("rollingUpdate") or {}
    ).get("paused"):
        out.append("the workload's update is paused")
    if status.get("updateRevision") and status.get("currentRevision") not in (None, status["updateRevision"]):
        out.append("a roll is in progress (currentRevision differs from updateRevision)")
    if len(pods) != replicas:
        out.append(f"{len(pods)} pods for {replicas} replicas")
    if component is Component.LOG:
        ready = sum(1 for p in pods if podutil.is_ready(p))
        if ready - 1 < quorum(replicas):
            out.append(
                f"log quorum at risk: {ready} of {replicas} stores ready, a roll takes one down "
                f"and {quorum(replicas)} must stay up"
            )
    return out


def _reserved_refusals(
    component: Component, reserved: Sequence[Any], replicas: int, pods: Sequence[Obj]
) -> list[str]:
    """Reserved ordinals (upstream's log failover) carry over when every store runs where
    Kruise runs it: the pods are the ``replicas`` lowest unreserved ordinals."""
    if not reserved:
        return []
    field = f"spec.reserveOrdinals {list(reserved)}"
    if component is not Component.LOG or not all(type(o) is int and o >= 0 for o in reserved):
        return [f"{field} is in use: only a LogSet's reserved ordinals (its failover's) are carried over"]
    live = list(ordinals.numbering(reserved, replicas).live)
    found = sorted(o for o in (names.pod_ordinal(name_of(p)) for p in pods) if o is not None)
    if found != live:
        return [f"{field}: the pods' ordinals {found} are not the {replicas} lowest unreserved ones {live}"]
    return []


def reserved_ordinals(component: Component, workload: Obj) -> frozenset[int]:
    """The reserved ordinals a taken-over set keeps (empty when there are none, or when
    the preflight refuses them)."""
    reserved = (workload.get("spec") or {}).get("reserveOrdinals") or []
    if component is not Component.LOG or not all(type(o) is int and o >= 0 for o in reserved):
        return frozenset()
    return frozenset(reserved)


def _steps(
    component: Component, name: str, label: str, pods: Sequence[Obj], reserved: frozenset[int], pool: bool
) -> tuple[str, ...]:
    ours = names.workload_name(component, name)
    first = (
        f"1. delete {label} with propagationPolicy=Orphan: its {len(pods)} pods and their claims keep running"
    )
    last = "3. delete the Go operator's ConfigMaps of the set that no pod mounts any more"
    if component in (Component.LOG, Component.TN):
        claims = sorted({c for p in pods for c in _claims(p)})
        numbering = ordinals.numbering(reserved, len(pods))
        kept = (
            f" (spec.ordinals.start {numbering.start}: ordinals {sorted(reserved)} stay reserved, "
            "recorded on the LogSet)"
            if reserved
            else ""
        )
        detached = [names.pod_name(component, name, o) for o in numbering.detached]
        which = (
            f"{', '.join(names.pod_name(component, name, o) for o in numbering.live if o >= numbering.start)}; "
            f"the LogSet itself keeps {', '.join(detached)} (below a reserved ordinal)"
            if detached
            else "them"
        )
        second = (
            f"2. apps/v1 StatefulSet {ours}{kept} adopts {which}"
            + (f" with their claims {', '.join(claims)}" if claims else "")
            + ", then replaces them one at a time, highest ordinal first"
            + (", the LogSet's last" if detached else "")
            + ", each Ready before the next"
            + (f" (at least {quorum(len(pods))} log stores stay up)" if component is Component.LOG else "")
        )
    elif pool:
        second = (
            f"2. CNSet {name} (its CNPool's) keeps its pods as they are and makes each its own: "
            "a pod bound to a CNClaim keeps its claim and its sessions, an idle one stays in the pool"
        )
    elif component is Component.CN:
        second = (
            f"2. CNSet {name} starts one new CN at a time; each old CN is drained in HAKeeper "
            "(its sessions move away) and removed only once a new one is Ready"
        )
    else:
        second = f"2. Deployment {ours} starts its pods; once it is available the old pods are removed one at a time"
    return (first, second, last)


def _claims(pod: Obj) -> list[str]:
    volumes = (pod.get("spec") or {}).get("volumes") or ()
    return [
        str(v["persistentVolumeClaim"].get("claimName")) for v in volumes if v.get("persistentVolumeClaim")
    ]
