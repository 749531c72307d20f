"""The log stores a LogSet keeps itself: those below a reserved ordinal.

A taken-over LogSet whose Go-operator failover reserved an ordinal between live
stores (stores 0, 1, 2, store 1 lost: ``0, 2, 3`` run) cannot run them all with one
StatefulSet, whose ordinals are consecutive, and no store may be renumbered (its name
is its identity). The StatefulSet keeps the stores above the highest reserved ordinal;
the ones below (*detached*, see ``matrixone/reserved.py``) are pods the LogSet
controls, made as the StatefulSet controller would make them from the StatefulSet's
own template (same labels and DNS name, the claims ``<template>-<sts>-<ordinal>``), so
nothing in MatrixOne or in a Service can tell them apart.

The LogSet does for them what kube-controller-manager does for a StatefulSet's pods:
it makes a missing one again (claims first), and replaces a stale one. Rolls keep
quorum across both kinds of store, one store down at a time: the StatefulSet rolls
first; a stale detached pod is replaced only when the StatefulSet has rolled and every
store is Ready; while a detached store is not Ready (missing, starting, being
replaced), the StatefulSet's roll is held with its ``partition``. A detached pod
not Ready on an older template is replaced at once (it is down already, and a
reverted template must reach it: the StatefulSet's "forced rollback").

The StatefulSet would delete a pod at a detached ordinal it controls (its ordinal is
below the set's start), and adopts any orphan its selector matches, so a pod at a
detached ordinal that is orphaned or still the StatefulSet's is adopted first
(controller reference replaced under the pod's ``resourceVersion``), and the
StatefulSet is not written while one is not the LogSet's (during a takeover, the
Go operator's workload still holds it until its orphaning ends).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.objects import labels_of, meta_of
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.reserved import Numbering

from ..framework.desired import content_hash
from ..framework.meta import is_controlled_by, is_deleting, name_of, owner_reference, uid_of
from ..specs import pods as podutil
from ..specs.statefulsets import Rollout

Obj = dict[str, Any]
STATEFULSET_POD_NAME = "statefulset.kubernetes.io/pod-name"
POD_INDEX = "apps.kubernetes.io/pod-index"


def template_hash(sts: Mapping[str, Any]) -> str:
    """What a detached pod is made from: the StatefulSet's pod template and claim templates."""
    spec = sts["spec"]
    return content_hash(
        {"template": spec["template"], "claims": [name_of(c) for c in spec.get("volumeClaimTemplates") or ()]}
    )


def claim_name(template: Mapping[str, Any], sts: Mapping[str, Any], ordinal: int) -> str:
    return f"{name_of(template)}-{name_of(sts)}-{ordinal}"


def claims(owner: Mapping[str, Any], sts: Mapping[str, Any], ordinal: int) -> list[Obj]:
    """The claims of the store at ``ordinal``, as the StatefulSet controller makes them
    from its ``volumeClaimTemplates`` (labels: the template's and the selector's); owned
    by the LogSet (not its controller) when the set's claims go with it
    (``persistentVolumeClaimRetentionPolicy.whenDeleted: Delete``)."""
    spec = sts["spec"]
    namespace = sts["metadata"].get("namespace") or ""
    owned = _retention(sts, "whenDeleted") == "Delete"
    out = []
    for template in spec.get("volumeClaimTemplates") or ():
        metadata: Obj = {
            "name": claim_name(template, sts, ordinal),
            "namespace": namespace,
            "labels": {**labels_of(template), **spec["selector"]["matchLabels"]},
        }
        if owned:
            metadata["ownerReferences"] = [{**owner_reference(owner), "controller": False}]
        out.append(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": metadata,
                "spec": dict(template["spec"]),
            }
        )
    return out


def _retention(sts: Mapping[str, Any], when: str) -> str:
    return str((sts["spec"].get("persistentVolumeClaimRetentionPolicy") or {}).get(when) or "Retain")


def pod(owner: Mapping[str, Any], sts: Mapping[str, Any], ordinal: int) -> Obj:
    """The store's pod, as the StatefulSet controller makes one from its template, but
    controlled by the LogSet and labelled with the template's hash."""
    spec = sts["spec"]
    template = spec["template"]
    name = f"{name_of(sts)}-{ordinal}"
    claim_volumes = {
        name_of(t): {"name": name_of(t), "persistentVolumeClaim": {"claimName": claim_name(t, sts, ordinal)}}
        for t in spec.get("volumeClaimTemplates") or ()
    }
    pod_spec = dict(template["spec"])
    volumes = [v for v in pod_spec.get("volumes") or () if v["name"] not in claim_volumes]
    pod_spec["volumes"] = [*volumes, *claim_volumes.values()]
    pod_spec["hostname"] = name
    pod_spec["subdomain"] = spec["serviceName"]
    meta = template.get("metadata") or {}
    pod_labels = {
        **(meta.get("labels") or {}),
        STATEFULSET_POD_NAME: name,
        POD_INDEX: str(ordinal),
        labels.LOGSET_TEMPLATE_HASH: template_hash(sts),
    }
    metadata: Obj = {
        "name": name,
        "namespace": sts["metadata"].get("namespace") or "",
        "labels": pod_labels,
        "ownerReferences": [owner_reference(owner)],
    }
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}


@dataclass(frozen=True)
class Adopt:
    name: str
    uid: str
    resource_version: str


@dataclass
class Plan:
    """What the LogSet does for its detached stores in one round."""

    adopt: list[Adopt] = field(default_factory=list)
    """Pods at detached ordinals to take before the StatefulSet is written (it would delete them)."""
    foreign: list[str] = field(default_factory=list)
    """Pods at detached ordinals something else controls (the Go operator's workload, going
    during a takeover): the StatefulSet is not written until they are free and taken."""
    create_claims: list[Obj] = field(default_factory=list)
    create_pods: list[Obj] = field(default_factory=list)
    delete_pods: list[tuple[str, str]] = field(default_factory=list)
    """``(name, uid)``: stale pods replaced (one at a time) and pods no longer wanted."""
    delete_claims: list[tuple[str, str]] = field(default_factory=list)
    """``(name, uid)``: the claims of pods scaled away, when the set's claims go with them
    (``whenScaled: Delete``)."""
    hold: bool = False
    """A detached store is not Ready (or is being replaced): the StatefulSet must not roll."""
    stale: int = 0
    """Detached stores on an older template, still to be replaced."""
    ready: int = 0


def decide(
    owner: Mapping[str, Any],
    sts: Mapping[str, Any],
    numbering: Numbering,
    pods: Sequence[Mapping[str, Any]],
    claim_of: Callable[[str], Mapping[str, Any] | None],
    *,
    statefulset_rolled: bool,
) -> Plan:
    """The round's plan for the detached stores. ``sts``: the desired StatefulSet;
    ``pods``: the LogSet's log pods as cached; ``claim_of``: a claim by name, as cached;
    ``statefulset_rolled``: the StatefulSet runs its latest template, all Ready."""
    plan = Plan()
    want = template_hash(sts)
    by_ordinal = {names.pod_ordinal(name_of(p)): p for p in pods}
    stale: list[Mapping[str, Any]] = []
    for ordinal in numbering.detached:
        found = by_ordinal.get(ordinal)
        if found is None:
            plan.hold = True
            _make(owner, sts, ordinal, claim_of, plan)
            continue
        if is_deleting(found):
            plan.hold = True
            continue
        if not is_controlled_by(found, owner):
            plan.hold = True
            if _adoptable(found, sts):
                plan.adopt.append(Adopt(name_of(found), uid_of(found), str(meta_of(found).resource_version)))
            else:
                plan.foreign.append(name_of(found))
            continue
        outdated = labels_of(found).get(labels.LOGSET_TEMPLATE_HASH) != want
        if not podutil.is_ready(found):
            plan.hold = True
            if outdated:  # down already, and never to be ready on a template no longer wanted
                plan.delete_pods.append((name_of(found), uid_of(found)))
                stale.append(found)  # (counted; the hold keeps it from being replaced twice)
                continue
        else:
            plan.ready += 1
        if outdated:
            stale.append(found)
    plan.stale = len(stale)
    for ordinal, found in sorted(
        ((o, p) for o, p in by_ordinal.items() if o is not None), key=lambda x: x[0]
    ):
        if ordinal not in numbering.detached and is_controlled_by(found, owner) and not is_deleting(found):
            plan.delete_pods.append((name_of(found), uid_of(found)))  # scaled away
            if _retention(sts, "whenScaled") == "Delete":
                cached = (claim_of(name_of(c)) for c in claims(owner, sts, ordinal))
                plan.delete_claims.extend((name_of(c), uid_of(c)) for c in cached if c is not None)
    if stale and not plan.hold and statefulset_rolled:
        first = stale[0]
        plan.delete_pods.append((name_of(first), uid_of(first)))
        plan.hold = True
    return plan


def _make(
    owner: Mapping[str, Any],
    sts: Mapping[str, Any],
    ordinal: int,
    claim_of: Callable[[str], Mapping[str, Any] | None],
    plan: Plan,
) -> None:
    """A missing store made again: its missing claims, then its pod, unless a claim is
    still going (the new pod would mount the old volume)."""
    wanted = claims(owner, sts, ordinal)
    found = [claim_of(name_of(c)) for c in wanted]
    if any(c is not None and is_deleting(c) for c in found):
        return
    plan.create_claims.extend(c for c, f in zip(wanted, found, strict=True) if f is None)
    plan.create_pods.append(pod(owner, sts, ordinal))


def _adoptable(found: Mapping[str, Any], sts: Mapping[str, Any]) -> bool:
    """An orphan, or a pod of our StatefulSet (which deletes pods below its start)."""
    controller = meta_of(found).controller
    return controller is None or (
        controller.get("apiVersion") == "apps/v1"
        and controller.get("kind") == "StatefulSet"
        and controller.get("name") == name_of(sts)
    )


def combined(roll: Rollout, plan: Plan, numbering: Numbering) -> Rollout:
    """The roll across both kinds of store: the StatefulSet's and the detached ones."""
    if not numbering.detached:
        return roll
    current = len(numbering.detached) - plan.stale - len(plan.create_pods)
    done = roll.complete and not plan.hold and plan.stale == 0
    return Rollout(
        replicas=len(numbering.live),
        ready=roll.ready + plan.ready,
        updated=roll.updated + max(current, 0),
        complete=done,
        stalled=roll.stalled,
        recheck_after=roll.recheck_after,
        stuck_outdated=roll.stuck_outdated,
    )
