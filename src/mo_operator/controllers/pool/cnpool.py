"""The CNPool controller: warm CNs, one CNSet per template revision.

Upstream's design (``pkg/controllers/cnpool``), on our CNSets:

- The pool's template becomes the spec of a CNSet named ``<pool>-<revision>``
  (the revision is a hash of that spec and of ``deps``), with
  ``podManagementPolicy: Pooling`` (see ``controllers/cnset/pooling.py``),
  store draining on (a pooled CN starts Draining: no session reaches it
  until a claim puts it to work), no CN labels (claims bring theirs), and
  the pool's ``podLabels`` plus ``pool.matrixorigin.io/pool-name`` on its
  pods. The set is labelled ``matrixorigin.io/managed-by: CNPool-<pool>``
  and ``matrixorigin.io/owner-uid`` as upstream labels it, and owned by the
  pool.
- Its size is the pods in use (Bound or Draining) + the claims nominated to
  the pool that wait for a pod + ``maxIdle``, within ``maxPods`` (less what
  older templates still hold), never fewer than the pods in use; while
  claims wait it does not shrink. The set chooses which idle pods go.
- A new template makes a new set. The sets of older templates are sized to
  the pods their claims still hold; each of their pods is labelled
  ``matrixorigin.io/outdated`` (so no claim takes it, and its claim reads
  Outdated), their idle pods go at once, and a pod whose claim lets it go
  drains and leaves instead of returning to the pool. An old set with no
  pod left is deleted.

- A pod Bound to a claim that no longer exists (its finalizer removed by
  hand, so it never gave the pod back) is given back here, Draining, as the
  claim's own finalizer would have: otherwise it would count as in use and
  run for nobody forever.

Every label the pool puts on a pod is written under the resourceVersion it
decided on, so it never overrides a claim that bound the pod meanwhile.
``spec.strategy.updateStrategy.reclaimTimeout`` is accepted and, as
upstream, not enforced: a claimed pod of an older template stays until its
claim goes (a CNClaimSet rolls its claims to the new template itself).

A reconcile reads (``CNPoolActor.read``) the pool as admitted, its CNSets, their
pods, the namespace's claims and our applies the cache may not show yet into a
``PoolView``; ``decide`` is a pure function of it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaim
from mo_operator.api.cnpool import CNPool, CNPoolSpec
from mo_operator.api.cnset import CNSet, CNSetStatus
from mo_operator.api.defaulting import default
from mo_operator.api.limits import MAX_REPLICAS
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import Wait
from mo_operator.kube.meta.errors import Conflict, NotFound
from mo_operator.kube.meta.objects import labels_of, meta_of, namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..cnset.pooling import IN_USE, describe_counts, phase_of, pool_counts
from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.decision import Decision, SetCondition
from ..framework.desired import content_hash, stamped
from ..framework.env import Env
from ..framework.meta import is_controlled_by, is_deleting, name_of, owner_reference, uid_of
from ..framework.unseen import Applied, Key
from ..framework.writes import Call, Delete, Intent, Patch, Step, Writes, applies
from ..steps.status import UP_TO_DATE
from .cnclaim import reclaim_patch
from .cnclaim_reads import EMPTY_SPEC, claim_spec
from .decisions import pool_replicas

Obj = dict[str, Any]

REVISION_LENGTH = 10
OUTDATED_VALUE = "y"
"""Upstream's value of ``matrixorigin.io/outdated``."""


def managed_by(pool_name: str) -> str:
    return f"CNPool-{pool_name}"


def set_spec_of(pool_name: str, spec: CNPoolSpec) -> Obj:
    """The CNSet spec (without ``replicas``) a pool's template makes."""
    template = spec.template
    out = dump(template)
    for key in ("replicas", "cnLabels", "serviceType", "serviceAnnotations", "nodePort", "podsToDelete"):
        out.pop(key, None)
    out["podManagementPolicy"] = labels.POOLING
    out["pauseUpdate"] = True
    scaling = dump(template.scaling_config) if template.scaling_config is not None else {}
    out["scalingConfig"] = {**scaling, "storeDrainEnabled": True}
    out["updateStrategy"] = {"maxSurge": 0, "maxUnavailable": 1}
    overlay = template.overlay
    out["overlay"] = {
        **(dump(overlay) if overlay is not None else {}),
        "podLabels": {
            **((overlay.pod_labels if overlay is not None else None) or {}),
            **(spec.pod_labels or {}),
            labels.POOL_NAME: pool_name,
        },
    }
    return out


def max_pods(spec: CNPoolSpec) -> int:
    """``strategy.scaleStrategy.maxPods``; unset, the most a CNSet runs."""
    found = spec.strategy.scale_strategy.max_pods
    return MAX_REPLICAS if found is None else found


def revision_of(set_spec: Mapping[str, Any], deps: Mapping[str, Any]) -> str:
    return content_hash({"spec": set_spec, "deps": deps})[:REVISION_LENGTH]


def set_pods(env: Env, namespace: str, set_name: str) -> list[Mapping[str, Any]]:
    return env.caches.list(r.PODS, namespace, labels.sub_resource_labels(Component.CN, set_name, namespace))


def live(pods: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [p for p in pods if not is_deleting(p)]


def in_use(pods: Sequence[Mapping[str, Any]]) -> int:
    return sum(1 for p in live(pods) if phase_of(p) in IN_USE)


def replicas_of(cnset: Mapping[str, Any] | None) -> int:
    """A pool CNSet's ``spec.replicas`` (0 when it is not there, or does not admit)."""
    found = typed.read(CNSet, cnset) if cnset is not None else None
    return found.spec.replicas or 0 if found is not None and found.spec is not None else 0


def nominated_claims(
    pool: Mapping[str, Any], claims: Sequence[Mapping[str, Any]], pods: Sequence[Mapping[str, Any]]
) -> list[Mapping[str, Any]]:
    """The claims of ``claims`` nominated to ``pool`` that wait for a pod. A claim that a pod of ``pods``
    says it is bound to does not wait (the claim may not show its ``podName`` yet),
    so it is not counted twice."""
    name = name_of(pool)
    holding = {labels_of(p).get(labels.POOL_CLAIMED_BY) for p in live(pods)}
    out = []
    for claim in claims:
        spec = claim_spec(typed.read(CNClaim, claim))
        nominated = labels_of(claim).get(labels.POOL_NAME) == name
        waiting = not spec.pod_name and name_of(claim) not in holding
        if (nominated or spec.pool_name == name) and waiting and not is_deleting(claim):
            out.append(claim)
    return out


GiveBack = Callable[[Mapping[str, Any], str, Obj], Step]
"""Builds the step that gives ``pod``, Bound to the vanished claim ``holder``, back to its
pool with ``patch``: run only when the plan runs."""


@dataclass(frozen=True)
class PoolView:
    """What a CNPool's decision reads: the pool as admitted, the CNSet of its current
    template (``revision``) and those of older ones, their pods, the namespace's claims."""

    pool: Mapping[str, Any]
    spec: CNPoolSpec
    set_spec: Mapping[str, Any]
    """The CNSet spec the template makes (``set_spec_of``)."""
    deps: Mapping[str, Any]
    revision: str
    current: Mapping[str, Any] | None
    current_pods: tuple[Mapping[str, Any], ...]
    old_sets: tuple[Mapping[str, Any], ...]
    """Sorted by name."""
    old_pods: Mapping[str, tuple[Mapping[str, Any], ...]]
    """The pods of each older set, by its name."""
    claims: tuple[Mapping[str, Any], ...]
    now: float
    give_back: GiveBack
    applied: Mapping[Key, Applied] = field(default_factory=dict)
    """This process's applies of the pool's objects the cache may not show yet
    (``Unseen.of_owner``): an apply still on its way is not sent again."""


def current_name(view: PoolView) -> str:
    return f"{name_of(view.pool)}-{view.revision}"


def cnset_of(view: PoolView, replicas: int) -> Obj:
    """The current template's CNSet, of ``replicas`` pods, stamped as applied."""
    meta = meta_of(view.pool)
    obj: Obj = {
        "apiVersion": view.pool["apiVersion"],
        "kind": "CNSet",
        "metadata": {
            "name": current_name(view),
            "namespace": meta.namespace,
            "labels": {
                labels.MANAGED_BY: managed_by(meta.name),
                labels.OWNER_UID: meta.uid,
                labels.REVISION_HASH: view.revision,
                labels.POOL_NAME: meta.name,
            },
            "ownerReferences": [owner_reference(view.pool)],
        },
        "spec": {**copy.deepcopy(dict(view.set_spec)), "replicas": replicas},
        "deps": copy.deepcopy(dict(view.deps)),
    }
    stored: Obj = default("CNSet", obj, old=view.current)
    return stamped(stored)


def label(pod: Mapping[str, Any], values: Mapping[str, str | None]) -> Patch:
    """Set ``values`` on ``pod``'s labels, under the resourceVersion decided on."""
    body = {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"], "labels": dict(values)}}
    return Patch(
        r.PODS,
        namespace_of(pod),
        name_of(pod),
        body,
        what=f"label CN {name_of(pod)} {', '.join(f'{k}={v}' for k, v in values.items())}",
    )


def decide(view: PoolView) -> Decision:
    """Size the current template's CNSet (unless the cache has yet to show our last
    apply of it), give back the pods of vanished claims, retire the older templates'
    sets, and say how the pool fares. Pure: a function of ``view``."""
    spec, current = view.spec, view.current
    all_pods = [*view.current_pods, *(p for pods in view.old_pods.values() for p in pods)]
    pending = nominated_claims(view.pool, view.claims, all_pods)
    size = pool_replicas(
        in_use=in_use(view.current_pods),
        pending=len(pending),
        max_idle=spec.strategy.scale_strategy.max_idle,
        max_pods=max_pods(spec),
        old_in_use=sum(in_use(p) for p in view.old_pods.values()),
        current_replicas=replicas_of(current),
    )
    desired = cnset_of(view, size.replicas)
    intents: list[Intent] = list(applies([(r.CNSETS, desired)], lambda _res, _name: current, view.applied))
    orphans = _orphans(all_pods, {name_of(c) for c in view.claims})
    for pod, holder in orphans:
        patch = reclaim_patch(pod, EMPTY_SPEC, view.now)
        what = f"give CN {name_of(pod)} of the vanished claim {holder} back to its pool"
        intents.append(Call(view.give_back(pod, holder, patch), what))
    given_back = {name_of(p) for p, _ in orphans}
    for pod in live(view.current_pods):
        if name_of(pod) in given_back:
            continue  # one label patch per pod and resourceVersion; the next pass sees the rest
        if labels.POD_OUTDATED in labels_of(pod):
            intents.append(label(pod, {labels.POD_OUTDATED: None}))  # the template came back to this one
    draining_old: list[str] = []
    for cnset in view.old_sets:
        pods = [p for p in view.old_pods.get(name_of(cnset), ()) if name_of(p) not in given_back]
        intents.extend(_retire_set(cnset, pods))
        draining_old.extend(name_of(p) for p in live(pods) if phase_of(p) in IN_USE)
    conditions = _conditions(view, len(pending), size.capped, draining_old)
    return Decision(tuple(intents), conditions=conditions)


def _orphans(pods: Sequence[Mapping[str, Any]], claims: set[str]) -> list[tuple[Mapping[str, Any], str]]:
    """The pods Bound to a claim not among ``claims`` (gone), with that claim's name."""
    out = []
    for pod in live(pods):
        holder = labels_of(pod).get(labels.POOL_CLAIMED_BY)
        if phase_of(pod) == labels.POOL_PHASE_BOUND and holder and holder not in claims:
            out.append((pod, holder))
    return out


def _retire_set(cnset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> list[Intent]:
    """An older template's set: its pods are outdated, it keeps only those in use,
    and it goes once it has none."""
    intents: list[Intent] = [
        label(pod, {labels.POD_OUTDATED: OUTDATED_VALUE})
        for pod in live(pods)
        if labels_of(pod).get(labels.POD_OUTDATED) != OUTDATED_VALUE
    ]
    held = in_use(pods)
    namespace = namespace_of(cnset)
    if replicas_of(cnset) != held:
        intents.append(
            Patch(
                r.CNSETS,
                namespace,
                name_of(cnset),
                {"spec": {"replicas": held}},
                what=f"scale outdated CNSet {name_of(cnset)} to the {held} pods still claimed",
            )
        )
    elif not live(pods) and not is_deleting(cnset):
        intents.append(Delete(r.CNSETS, namespace, name_of(cnset), uid=uid_of(cnset)))
    return intents


def _conditions(
    view: PoolView, pending: int, capped: bool, draining_old: Sequence[str]
) -> tuple[SetCondition, SetCondition]:
    current, revision = view.current, view.revision
    counts = pool_counts(view.current_pods)
    summary = describe_counts(counts) + (f", {pending} claims waiting" if pending else "")
    set_ready = typed.status_of(CNSetStatus, current).condition("Ready") if current is not None else None
    if capped and pending:
        ready = SetCondition(
            "Ready", False, "MaxPodsReached", f"maxPods {max_pods(view.spec)} reached: {summary}"
        )
    elif current is None:
        ready = SetCondition("Ready", False, "Creating", f"creating CNSet {current_name(view)}")
    elif set_ready is None or set_ready.status != "True":
        why = (set_ready.message if set_ready is not None else None) or "its pods are starting"
        ready = SetCondition("Ready", False, "PodsNotReady", f"CNSet {name_of(current)}: {why}")
    else:
        ready = SetCondition("Ready", True, "PoolReady", summary)
    if draining_old:
        shown = ", ".join(sorted(draining_old)[:5])
        message = f"{len(draining_old)} pods of older templates are still claimed or draining: {shown}"
        return ready, SetCondition(UP_TO_DATE, False, "OldTemplatesDraining", message)
    return ready, SetCondition(UP_TO_DATE, True, "UpToDate", f"every pod runs template revision {revision}")


def decide_removal(pool: Mapping[str, Any], sets: Sequence[Mapping[str, Any]], recheck: float) -> Decision:
    """A deleted pool's finalizer: its CNSets (``sets``) go first, each on condition that it
    is the set judged; the finalizer goes once none is left."""
    if not sets:
        return Decision(finalized=True)
    deletes = tuple(
        Delete(r.CNSETS, namespace_of(s), name_of(s), uid=uid_of(s)) for s in sets if not is_deleting(s)
    )
    return Decision(deletes, later=Wait(recheck, f"CNSets of {name_of(pool)} to go first"))


class CNPoolActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    def _sets(self, pool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        selector = {labels.MANAGED_BY: managed_by(name_of(pool)), labels.OWNER_UID: uid_of(pool)}
        found = self.env.caches.list(r.CNSETS, namespace_of(pool), selector)
        return sorted((s for s in found if is_controlled_by(s, pool)), key=name_of)

    async def read(self, ctx: Context) -> PoolView:
        """Every read a decision needs, once: the pool as admitted, its sets and their
        pods, and the claims of its namespace."""
        pool, namespace = ctx.obj, ctx.namespace
        spec = admit(CNPool, pool).spec
        set_spec = set_spec_of(ctx.name, spec)
        deps = dump(spec.deps)
        revision = revision_of(set_spec, deps)
        name = f"{ctx.name}-{revision}"
        old_sets = tuple(s for s in self._sets(pool) if name_of(s) != name)
        return PoolView(
            pool=pool,
            spec=spec,
            set_spec=set_spec,
            deps=deps,
            revision=revision,
            current=self.env.caches.get(r.CNSETS, namespace, name),
            current_pods=tuple(set_pods(self.env, namespace, name)),
            old_sets=old_sets,
            old_pods={name_of(s): tuple(set_pods(self.env, namespace, name_of(s))) for s in old_sets},
            claims=tuple(self.env.caches.list(r.CNCLAIMS, namespace)),
            now=self.env.clock(),
            give_back=functools.partial(self._give_back, ctx),
            applied=self.env.unseen.of_owner(uid_of(pool)),
        )

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client, self.env.unseen)

    async def finalize(self, ctx: Context) -> bool:
        """The pool's CNSets go first (their pods with them; the claims of those pods
        read Lost)."""
        decision = decide_removal(ctx.obj, self._sets(ctx.obj), self.env.settings.busy_poll_seconds)
        return await decision.finalize(ctx, self.env.client)

    def _give_back(self, ctx: Context, pod: Mapping[str, Any], holder: str, patch: Obj) -> Step:
        client = self.env.client

        async def give_back() -> object:
            try:
                await client.patch(r.PODS, name_of(pod), patch, namespace_of(pod))
            except (Conflict, NotFound):
                # The pod changed since this decision: most often the claim's own finalizer
                # gave it back just before it went. The change wakes the pool to look again.
                return None
            ctx.event(
                "Warning",
                "OrphanReclaimed",
                f"CN pod {name_of(pod)} was bound to claim {holder}, which no longer exists: "
                "it goes back to the pool, draining",
            )
            return None

        return give_back
