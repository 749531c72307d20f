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
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaim
from mo_operator.api.cnpool import CNPool, CNPoolSpec
from mo_operator.api.defaulting import default
from mo_operator.api.limits import MAX_REPLICAS
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.errors import Conflict, NotFound
from mo_operator.kube.meta.objects import condition_of, labels_of, mapping_at, meta_of, namespace_of, spec_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..cnset.pooling import IN_USE, describe_counts, phase_of, pool_counts
from ..framework import resources as r
from ..framework.admission import admit
from ..framework.desired import content_hash, stamped
from ..framework.env import Env
from ..framework.meta import is_controlled_by, is_deleting, name_of, owner_reference, uid_of
from ..framework.typed import read
from ..framework.writes import Step, Writes, delete_dependents_first
from ..steps.status import UP_TO_DATE
from .cnclaim import EMPTY_SPEC, claim_spec, reclaim_patch
from .decisions import pool_replicas

Obj = dict[str, Any]

REVISION_LENGTH = 10
OUTDATED_VALUE = "y"
"""Upstream's value of ``matrixorigin.io/outdated``."""


def managed_by(pool_name: str) -> str:
    return f"CNPool-{pool_name}"


def set_spec_of(pool_name: str, spec: CNPoolSpec) -> Obj:
    """The CNSet spec (without ``replicas``) a pool's template makes."""
    out = dump(spec.template)
    for key in ("replicas", "cnLabels", "serviceType", "serviceAnnotations", "nodePort", "podsToDelete"):
        out.pop(key, None)
    out["podManagementPolicy"] = labels.POOLING
    out["pauseUpdate"] = True
    out["scalingConfig"] = {**(out.get("scalingConfig") or {}), "storeDrainEnabled": True}
    out["updateStrategy"] = {"maxSurge": 0, "maxUnavailable": 1}
    overlay = dict(out.get("overlay") or {})
    overlay["podLabels"] = {
        **(overlay.get("podLabels") or {}),
        **(spec.pod_labels or {}),
        labels.POOL_NAME: pool_name,
    }
    out["overlay"] = overlay
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
        spec = claim_spec(read(CNClaim, claim))
        nominated = labels_of(claim).get(labels.POOL_NAME) == name
        waiting = not spec.pod_name and name_of(claim) not in holding
        if (nominated or spec.pool_name == name) and waiting and not is_deleting(claim):
            out.append(claim)
    return out


class CNPoolActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    def _sets(self, pool: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        selector = {labels.MANAGED_BY: managed_by(name_of(pool)), labels.OWNER_UID: uid_of(pool)}
        found = self.env.caches.list(r.CNSETS, namespace_of(pool), selector)
        return sorted((s for s in found if is_controlled_by(s, pool)), key=name_of)

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admit(CNPool, obj).spec
        namespace, name = ctx.namespace, ctx.name
        set_spec = set_spec_of(name, spec)
        deps = dump(spec.deps)
        revision = revision_of(set_spec, deps)
        current_name = f"{name}-{revision}"
        current = self.env.caches.get(r.CNSETS, namespace, current_name)
        current_pods = set_pods(self.env, namespace, current_name)
        old_sets = [s for s in self._sets(obj) if name_of(s) != current_name]
        old_pods = {name_of(s): set_pods(self.env, namespace, name_of(s)) for s in old_sets}
        all_pods = [*current_pods, *(p for pods in old_pods.values() for p in pods)]
        claims = self.env.caches.list(r.CNCLAIMS, namespace)
        pending = nominated_claims(obj, claims, all_pods)
        scale = spec.strategy.scale_strategy
        size = pool_replicas(
            in_use=in_use(current_pods),
            pending=len(pending),
            max_idle=scale.max_idle,
            max_pods=max_pods(spec),
            old_in_use=sum(in_use(p) for p in old_pods.values()),
            current_replicas=int(mapping_at(current, "spec").get("replicas") or 0),
        )
        plan = Writes(self.env.client)
        desired = self._cnset(obj, deps, set_spec, current_name, revision, size.replicas, current)
        plan.sync(self.env, [(r.CNSETS, desired)])
        orphans = self._reclaim_orphans(ctx, all_pods, {name_of(c) for c in claims}, plan)
        for pod in live(current_pods):
            if name_of(pod) in orphans:
                continue  # one label patch per pod and resourceVersion; the next pass sees the rest
            if labels.POD_OUTDATED in labels_of(pod):
                self._label(pod, {labels.POD_OUTDATED: None}, plan)  # the template came back to this one
        draining_old: list[str] = []
        for cnset in old_sets:
            pods = [p for p in old_pods[name_of(cnset)] if name_of(p) not in orphans]
            self._retire_set(cnset, pods, plan, draining_old)
        self._status(ctx, spec, current, current_pods, len(pending), size.capped, revision, draining_old)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """The pool's CNSets go first (their pods with them; the claims of those pods
        read Lost)."""
        return await delete_dependents_first(
            ctx, self.env.client, r.CNSETS, self._sets(ctx.obj), self.env.settings.busy_poll_seconds
        )

    # ---------------------------------------------------------------- desired
    def _cnset(
        self,
        pool: Mapping[str, Any],
        deps: Obj,
        set_spec: Mapping[str, Any],
        name: str,
        revision: str,
        replicas: int,
        current: Mapping[str, Any] | None,
    ) -> Obj:
        meta = meta_of(pool)
        obj: Obj = {
            "apiVersion": pool["apiVersion"],
            "kind": "CNSet",
            "metadata": {
                "name": name,
                "namespace": meta.namespace,
                "labels": {
                    labels.MANAGED_BY: managed_by(meta.name),
                    labels.OWNER_UID: meta.uid,
                    labels.REVISION_HASH: revision,
                    labels.POOL_NAME: meta.name,
                },
                "ownerReferences": [owner_reference(pool)],
            },
            "spec": {**copy.deepcopy(dict(set_spec)), "replicas": replicas},
            "deps": deps,
        }
        stored: Obj = default("CNSet", obj, old=current)
        return stamped(stored)

    def _label(self, pod: Mapping[str, Any], values: Mapping[str, str | None], plan: Writes) -> None:
        plan.patch(
            r.PODS,
            namespace_of(pod),
            name_of(pod),
            {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"], "labels": dict(values)}},
            what=f"label CN {name_of(pod)} {', '.join(f'{k}={v}' for k, v in values.items())}",
        )

    def _reclaim_orphans(
        self, ctx: Context, pods: Sequence[Mapping[str, Any]], claims: set[str], plan: Writes
    ) -> set[str]:
        """Give back the pods Bound to a claim not among ``claims`` (gone); their names."""
        orphans: set[str] = set()
        for pod in live(pods):
            holder = labels_of(pod).get(labels.POOL_CLAIMED_BY)
            if phase_of(pod) != labels.POOL_PHASE_BOUND or not holder or holder in claims:
                continue
            orphans.add(name_of(pod))
            plan.call(
                f"give CN {name_of(pod)} of the vanished claim {holder} back to its pool",
                self._give_back(ctx, pod, holder),
            )
        return orphans

    def _give_back(self, ctx: Context, pod: Mapping[str, Any], holder: str) -> Step:
        patch = reclaim_patch(pod, EMPTY_SPEC, self.env.clock())

        async def give_back() -> object:
            try:
                await self.env.client.patch(r.PODS, name_of(pod), patch, namespace_of(pod))
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

    def _retire_set(
        self, cnset: Mapping[str, Any], pods: Sequence[Mapping[str, Any]], plan: Writes, draining: list[str]
    ) -> None:
        """An older template's set: its pods are outdated, it keeps only those in use,
        and it goes once it has none."""
        for pod in live(pods):
            if labels_of(pod).get(labels.POD_OUTDATED) != OUTDATED_VALUE:
                self._label(pod, {labels.POD_OUTDATED: OUTDATED_VALUE}, plan)
        held = in_use(pods)
        draining.extend(name_of(p) for p in live(pods) if phase_of(p) in IN_USE)
        namespace = namespace_of(cnset)
        if int(spec_of(cnset).get("replicas") or 0) != held:
            plan.patch(
                r.CNSETS,
                namespace,
                name_of(cnset),
                {"spec": {"replicas": held}},
                what=f"scale outdated CNSet {name_of(cnset)} to the {held} pods still claimed",
            )
        elif not live(pods) and not is_deleting(cnset):
            plan.delete(r.CNSETS, namespace, name_of(cnset), uid=uid_of(cnset))

    # ---------------------------------------------------------------- status
    def _status(
        self,
        ctx: Context,
        spec: CNPoolSpec,
        current: Mapping[str, Any] | None,
        pods: Sequence[Mapping[str, Any]],
        pending: int,
        capped: bool,
        revision: str,
        draining_old: Sequence[str],
    ) -> None:
        counts = pool_counts(pods)
        summary = describe_counts(counts) + (f", {pending} claims waiting" if pending else "")
        set_ready = condition_of(current, "Ready") or {}
        if capped and pending:
            ctx.set_condition(
                "Ready", False, "MaxPodsReached", f"maxPods {max_pods(spec)} reached: {summary}"
            )
        elif current is None:
            ctx.set_condition("Ready", False, "Creating", f"creating CNSet {ctx.name}-{revision}")
        elif set_ready.get("status") != "True":
            why = set_ready.get("message") or "its pods are starting"
            ctx.set_condition("Ready", False, "PodsNotReady", f"CNSet {name_of(current)}: {why}")
        else:
            ctx.set_condition("Ready", True, "PoolReady", summary)
        if draining_old:
            shown = ", ".join(sorted(draining_old)[:5])
            ctx.set_condition(
                UP_TO_DATE,
                False,
                "OldTemplatesDraining",
                f"{len(draining_old)} pods of older templates are still claimed or draining: {shown}",
            )
        else:
            ctx.set_condition(UP_TO_DATE, True, "UpToDate", f"every pod runs template revision {revision}")
