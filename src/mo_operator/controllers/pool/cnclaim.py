"""The CNClaim controller: a claim takes one idle CN of a pool and holds it.

**Binding.** A claim without a pod takes the first claimable pod (Idle, not
outdated, matching its ``selector`` and ``poolName``, not another claim's
``podName``; a pod its owner held last first, then name order). The take is
one label patch (``pool.matrixorigin.io/phase: Bound``,
``pool.matrixorigin.io/claimed-by: <claim>``, ``matrixorigin.io/owner``,
``matrixorigin.io/claimset``, ``additionalPodLabels``) under the pod's
resourceVersion as the claim saw it: two claims racing for one pod both
send it, one wins, the other gets a conflict and tries its next candidate.
Then the store is put to work in HAKeeper with the claim's ``cnLabels``, and
the claim records ``podName``, ``nodeName`` and ``poolName`` under its own
resourceVersion. A bind first checks that resourceVersion (a no-op patch): a
decision made on a stale copy of the claim, one that has not yet seen its
``podName``, stops there instead of taking a second pod. Should a claim hold
a second pod anyway, it gives that one back.

**No idle pod.** The claim stays Pending, says why, and is nominated to the
first pool whose ``podLabels`` its selector matches (``spec.poolName`` and the
``pool.matrixorigin.io/pool-name`` label): the pool counts it and starts a
pod. A pod becoming Idle wakes every claim waiting in its namespace.

**Bound.** ``status.phase`` is Bound (Outdated once the pool's template moved
on: the pod is labelled ``matrixorigin.io/outdated``), ``status.store`` is
the store as HAKeeper reports it, and the store is kept Working with the
claim's labels. A pod that goes (or fails) leaves the claim Lost, for good:
a new pod of the same name is not its pod (only a migration names another).

**Migration** (upstream's ``cnclaim/migrate.go``). Changing ``podName`` to
another idle pod, with ``sourcePod`` naming the pod it had, moves the claim:
the new pod is bound (labels, store Working with the claim's ``cnLabels``) and
reported in ``status.store``; once it has worked for its CNSet's
``scalingConfig.minDelaySeconds`` (default 15 s, upstream's fixed propagation
delay) so the proxy knows it, the source is reclaimed as below (Draining in
HAKeeper: the proxy moves its sessions to the claim's new CN).
``status.migrate.source`` counts what is left on it; once it is back in its
pool (Idle), or gone, ``sourcePod`` is cleared. A target that is gone or held
by another claim leaves the claim on its source, saying so.

**Reclaim.** Deleting a claim gives its pod back (finalizer
``matrixorigin.io/cn-claim-manager``): the pod is labelled Draining under its
resourceVersion, loses the claim's labels (its owner is kept as
``matrixorigin.io/last-owner``), gets ``matrixorigin.io/reclaimed-at``, and
its store is set Draining without labels. Its CNSet returns it to Idle once
its sessions left (``controllers/cnset/pooling.py``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaim, CNClaimSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.errors import Conflict, NotFound
from mo_operator.kube.meta.objects import annotations_of, labels_of, mapping_at, meta_of, spec_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, CNStore, WorkState, cn_labels_from_spec

from ..cnset import pods as cnpods
from ..cnset.drain import DEFAULT_MIN_DRAIN_SECONDS
from ..framework import resources as r
from ..framework.admission import admit
from ..framework.env import Env
from ..framework.meta import is_deleting, name_of
from ..framework.typed import read
from ..framework.writes import Step, Writes
from ..specs import pods as podutil
from .decisions import (
    DONE,
    DRAINING,
    LOST,
    OUTDATED,
    PENDING,
    RECLAIM,
    bound_phase,
    claim_candidates,
    matching_pool,
    migration_step,
    natural_key,
)

log = logging.getLogger(__name__)
Obj = dict[str, Any]

RESERVED_PREFIXES = ("matrixorigin.io/", "pool.matrixorigin.io/", "matrixone.cloud/")
"""Label keys a claim's ``additionalPodLabels`` never removes from a pod it gives back."""
SHOWN_CANDIDATES = 3


def pool_pods(env: Env, namespace: str) -> list[Mapping[str, Any]]:
    """Pods of pooling CNSets in ``namespace``."""
    return [p for p in env.caches.list(r.PODS, namespace) if labels.POOL_PHASE in labels_of(p)]


def held_by(pods: Sequence[Mapping[str, Any]], claim: str) -> list[Mapping[str, Any]]:
    """Live pods labelled Bound to ``claim``, in name order."""
    found = [
        p
        for p in pods
        if not is_deleting(p)
        and labels_of(p).get(labels.POOL_CLAIMED_BY) == claim
        and labels_of(p).get(labels.POOL_PHASE) == labels.POOL_PHASE_BOUND
    ]
    return sorted(found, key=lambda p: natural_key(name_of(p)))


def taken_by_others(env: Env, namespace: str, claim: str) -> dict[str, str]:
    """``podName`` → claim, for the other live claims of the namespace."""
    out: dict[str, str] = {}
    for other in env.caches.list(r.CNCLAIMS, namespace):
        pod = claim_spec(read(CNClaim, other)).pod_name
        if pod and name_of(other) != claim and not is_deleting(other):
            out[pod] = name_of(other)
    return out


EMPTY_SPEC = CNClaimSpec.model_construct(selector=None)
"""The spec of a claim that has none, or an invalid one: it selects and labels nothing."""


def claim_spec(claim: CNClaim | None) -> CNClaimSpec:
    """A claim's spec as admitted (``EMPTY_SPEC`` when it has none)."""
    return claim.spec if claim is not None and claim.spec is not None else EMPTY_SPEC


def bind_labels(claim: Mapping[str, Any], spec: CNClaimSpec) -> dict[str, str]:
    """The labels a pod takes when ``claim`` binds it."""
    out = dict(spec.additional_pod_labels or {})
    out[labels.POOL_PHASE] = labels.POOL_PHASE_BOUND
    out[labels.POOL_CLAIMED_BY] = name_of(claim)
    if spec.owner_name:
        out[labels.POD_OWNER] = spec.owner_name
    claimset = labels_of(claim).get(labels.CLAIMSET)
    if claimset:
        out[labels.CLAIMSET] = claimset
    return out


def reclaim_labels(pod: Mapping[str, Any], spec: CNClaimSpec) -> dict[str, str | None]:
    """The label changes that give ``pod`` back to its pool, Draining."""
    current = labels_of(pod)
    out: dict[str, str | None] = {
        k: None for k in spec.additional_pod_labels or {} if not k.startswith(RESERVED_PREFIXES)
    }
    out[labels.POOL_PHASE] = labels.POOL_PHASE_DRAINING
    out[labels.POOL_CLAIMED_BY] = None
    out[labels.CLAIMSET] = None
    if current.get(labels.POD_OWNER):
        out[labels.POD_OWNER] = None
        out[labels.POD_LAST_OWNER] = current[labels.POD_OWNER]
    return out


def reclaim_patch(pod: Mapping[str, Any], spec: CNClaimSpec, now: float) -> Obj:
    """The pod patch that gives ``pod`` back to its pool, Draining from ``now``, under the
    resourceVersion it was decided on (so it never undoes a change made meanwhile)."""
    return {
        "metadata": {
            "resourceVersion": pod["metadata"]["resourceVersion"],
            "labels": reclaim_labels(pod, spec),
            "annotations": {labels.RECLAIMED_AT: podutil.format_time(now)},
        }
    }


def migration_source(spec: CNClaimSpec) -> str | None:
    """The pod a claim is moving away from (``spec.sourcePod.podName``), if it names
    one other than its ``podName``."""
    source = spec.source_pod.pod_name if spec.source_pod is not None else None
    return source if source and spec.pod_name and source != spec.pod_name else None


def store_labels(spec: CNClaimSpec) -> dict[str, tuple[str, ...]]:
    """The HAKeeper labels of the claimed store (``spec.cnLabels``)."""
    return cn_labels_from_spec([dump(label) for label in spec.cn_labels or ()])


def store_status(store: CNStore, pod_name: str, bound_time: str | None) -> Obj:
    """``status.store`` (upstream's CNStoreStatus; the pod's name is under ``string``)."""
    out: Obj = {
        "serviceID": store.uuid,
        "lockServiceAddress": store.lock_service_address,
        "sqlAddress": store.sql_address,
        "queryAddress": store.query_address,
        "workState": store.work_state.value,
        "labels": [{"key": k, "values": list(v)} for k, v in sorted(store.labels.items())],
        "string": pod_name,
        "boundTime": bound_time,
    }
    return {k: v for k, v in out.items() if v not in ("", None, [])}


class CNClaimActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        spec = claim_spec(admit(CNClaim, ctx.obj))
        namespace, name = ctx.namespace, ctx.name
        pods = pool_pods(self.env, namespace)
        mine = held_by(pods, name)
        plan = Writes(self.env.client)
        pod_name = spec.pod_name
        source = migration_source(spec)
        if not pod_name:
            self._find_pod(ctx, spec, pods, mine, plan)
        else:
            await self._keep_pod(ctx, spec, pod_name, plan, source)
        keep = {pod_name or (name_of(mine[0]) if mine else None), source}  # no podName: the first is adopted
        for extra in mine:
            if name_of(extra) not in keep:
                ctx.log.info("the claim holds a second pod, %s: giving it back", name_of(extra))
                self._reclaim(spec, extra, plan)
        return plan or None

    def _find_pod(
        self,
        ctx: Context,
        spec: CNClaimSpec,
        pods: Sequence[Mapping[str, Any]],
        mine: Sequence[Mapping[str, Any]],
        plan: Writes,
    ) -> None:
        namespace, name = ctx.namespace, ctx.name
        if mine:  # a bind took this pod, then stopped before recording it
            pod = mine[0]
            plan.call(f"put CN {name_of(pod)} to work", self._put_to_work(pod, spec))
            self._record(ctx, pod, plan)
            self._pending(ctx, "Binding", f"binding CN pod {name_of(pod)}")
            return
        candidates = claim_candidates(spec, pods, taken_by_others(self.env, namespace, name))
        if candidates:
            shown = ", ".join(name_of(p) for p in candidates[:SHOWN_CANDIDATES])
            plan.call(f"bind an idle CN ({shown})", self._bind(ctx, spec, candidates))
            self._pending(ctx, "Binding", f"binding an idle CN ({shown})")
            return
        pool = spec.pool_name
        if not pool:
            found = matching_pool(spec, self.env.caches.list(r.CNPOOLS, namespace))
            if found is None:
                self._pending(
                    ctx,
                    "NoMatchingPool",
                    "no idle CN matches the selector, and no CNPool of the namespace has podLabels it matches",
                )
                return
            pool = name_of(found)
        if labels_of(ctx.obj).get(labels.POOL_NAME) != pool or not spec.pool_name:
            plan.patch(
                r.CNCLAIMS,
                namespace,
                name,
                {"metadata": {"labels": {labels.POOL_NAME: pool}}, "spec": {"poolName": pool}},
                what=f"nominate the claim to pool {pool}",
            )
        self._pending(
            ctx, "WaitingForPod", f"no idle CN of pool {pool} matches the selector yet: the pool starts one"
        )

    async def _keep_pod(
        self, ctx: Context, spec: CNClaimSpec, pod_name: str, plan: Writes, source: str | None
    ) -> None:
        status = ctx.status
        pod = self.env.caches.get(r.PODS, ctx.namespace, pod_name)
        phase = LOST if status.get("phase") == LOST and source is None else bound_phase(pod, ctx.name)
        if phase is None:
            assert pod is not None
            plan.call(f"bind CN {pod_name}", self._bind(ctx, spec, [pod]))
            if source is None:
                self._pending(ctx, "Binding", f"binding CN pod {pod_name}")
            else:
                ctx.set_condition(
                    "Ready", True, "Migrating", f"binding CN pod {pod_name} to move from {source}"
                )
            return
        if phase == LOST and source is not None:
            ctx.set_condition(
                "Ready",
                True,
                "MigrationBlocked",
                f"CN pod {pod_name} is gone or held by another claim: the claim stays on {source}; "
                "set spec.podName to an idle pod of the pool",
            )
            ctx.requeue(self.env.settings.poll_seconds, f"whether CN pod {pod_name} is back")
            return
        if phase == LOST:
            status["phase"] = LOST
            ctx.set_condition(
                "Ready", False, "PodLost", f"CN pod {pod_name} is gone or no longer bound to this claim"
            )
            return
        assert pod is not None
        missing = {k: v for k, v in bind_labels(ctx.obj, spec).items() if labels_of(pod).get(k) != v}
        if missing:
            plan.patch(
                r.PODS,
                ctx.namespace,
                pod_name,
                {"metadata": {"labels": missing}},
                what=f"label CN {pod_name}",
            )
        now = podutil.format_time(self.env.clock())
        status["phase"] = phase
        status.setdefault("boundTime", now)
        store = await self._store(ctx, pod)
        if store is not None:
            want = store_labels(spec)
            if store.work_state is not WorkState.WORKING or dict(store.labels) != want:
                plan.call(f"put CN {pod_name} to work", self._put_to_work(pod, spec))
            previous = status.get("store") or {}
            since = previous.get("boundTime") if previous.get("string") == pod_name else None
            status["store"] = store_status(store, pod_name, since or now)
        if phase == OUTDATED:
            ctx.set_condition(
                "Ready", True, "Outdated", f"bound to CN pod {pod_name}, of an older template of its pool"
            )
        else:
            ctx.set_condition("Ready", True, "Bound", f"bound to CN pod {pod_name}")
        if store is not None:
            ctx.requeue(self.env.settings.poll_seconds, f"the store of CN {pod_name} as HAKeeper sees it")
        else:
            ctx.wait(self.env.settings.busy_poll_seconds, f"HAKeeper to know the store of CN {pod_name}")
        if source is not None:
            await self._migrate(ctx, spec, pod, source, plan)
        else:
            status.pop("migrate", None)

    async def _store(self, ctx: Context, pod: Mapping[str, Any]) -> CNStore | None:
        address = annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION)
        if not address:
            return None
        try:
            state = await self.env.admin.admin(str(address)).hakeeper_state()
        except AdminError as e:
            ctx.log.debug("HAKeeper does not answer: %s", e)
            return None
        return state.cn(cnpods.store_uuid(pod))

    async def _migrate(
        self, ctx: Context, spec: CNClaimSpec, target: Mapping[str, Any], source_name: str, plan: Writes
    ) -> None:
        """The next step of moving the claim from ``source_name`` to ``target`` (bound)."""
        target_name = name_of(target)
        source = self.env.caches.get(r.PODS, ctx.namespace, source_name)
        step = migration_step(
            source,
            ctx.name,
            self._working_since(ctx, target_name),
            self.env.clock(),
            self._propagation_delay(ctx, target),
        )
        settings = self.env.settings
        if step.action == DONE:
            ctx.status.pop("migrate", None)
            self._end_migration(ctx, source_name, target_name, plan)
            return
        assert source is not None
        moving = f"bound to CN pod {target_name}, moving from {source_name}"
        if step.action == RECLAIM:
            self._reclaim(spec, source, plan)
            ctx.set_condition("Ready", True, "Migrating", f"{moving}: {source_name} drains")
            ctx.wait(settings.busy_poll_seconds, f"CN {source_name} to drain")
        elif step.action == DRAINING:
            left = await self._load(source)
            if isinstance(left, dict):
                ctx.status["migrate"] = {"source": left}
                shown = f": {left['connections']} sessions left on {source_name}"
            else:
                shown = f": waiting for MatrixOne to say what is left on {source_name} ({left})"
            ctx.set_condition("Ready", True, "Migrating", moving + shown)
            ctx.wait(settings.busy_poll_seconds, f"the sessions left on CN {source_name}")
        else:
            ctx.set_condition(
                "Ready",
                True,
                "Migrating",
                f"{moving} once {target_name} has worked {int(step.wait) + 1}s more",
            )
            ctx.requeue(max(step.wait, 0.1), f"CN {target_name} to have worked long enough")

    def _working_since(self, ctx: Context, target: str) -> float | None:
        """When the claim first saw ``target``'s store Working for it (``status.store``)."""
        store = ctx.status.get("store") or {}
        if store.get("string") != target or store.get("workState") != WorkState.WORKING.value:
            return None
        return podutil.parse_time(store.get("boundTime"))

    def _propagation_delay(self, ctx: Context, target: Mapping[str, Any]) -> float:
        """``scalingConfig.minDelaySeconds`` of the target's CNSet: how long the proxy
        needs to learn of a store's new state (upstream waits a fixed 15 s)."""
        set_name = labels_of(target).get(labels.INSTANCE)
        cnset = self.env.caches.get(r.CNSETS, ctx.namespace, str(set_name)) if set_name else None
        scaling = mapping_at(cnset, "spec", "scalingConfig")
        return float(scaling.get("minDelaySeconds", DEFAULT_MIN_DRAIN_SECONDS))

    async def _load(self, pod: Mapping[str, Any]) -> Obj | str:
        """``status.migrate.source``: what still runs on ``pod``, or why MatrixOne does not say."""
        address = str(annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION) or "")
        try:
            load = await self.env.admin.admin(address).cn_load(cnpods.store_uuid(pod))
        except AdminError as e:
            log.debug("cannot read the load of CN %s: %s", name_of(pod), e)
            return str(e)
        return {"connections": load.sessions, "pipelines": load.pipelines, "replicas": load.replicas}

    def _end_migration(self, ctx: Context, source: str, target: str, plan: Writes) -> None:
        """Clear ``sourcePod``, on condition that the claim is the one we decided on."""
        plan.patch(
            r.CNCLAIMS,
            ctx.namespace,
            ctx.name,
            {
                "metadata": {"resourceVersion": ctx.obj["metadata"]["resourceVersion"]},
                "spec": {"sourcePod": None},
            },
            what=f"end the migration from {source}",
        )

        async def tell() -> None:
            ctx.event("Normal", "Migrated", f"moved from CN pod {source} to {target}")

        plan.call("report the migration", tell)

    def _pending(self, ctx: Context, reason: str, message: str) -> None:
        ctx.status["phase"] = PENDING
        ctx.set_condition("Ready", False, reason, message)

    # ---------------------------------------------------------------- writes
    def _put_to_work(self, pod: Mapping[str, Any], spec: CNClaimSpec) -> Step:
        address = str(annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION) or "")
        admin = self.env.admin.admin(address)
        return functools.partial(
            admin.set_cn_work_state,
            cnpods.store_uuid(pod),
            WorkState.WORKING,
            store_labels(spec),
        )

    def _record(self, ctx: Context, pod: Mapping[str, Any], plan: Writes) -> None:
        """Write the bound pod into the claim's spec, on condition that the claim is
        still the one we decided on."""
        plan.patch(
            r.CNCLAIMS, ctx.namespace, ctx.name, self._record_patch(ctx, pod), what="record the bound pod"
        )

    def _record_patch(self, ctx: Context, pod: Mapping[str, Any]) -> Obj:
        pool = labels_of(pod).get(labels.POOL_NAME)
        spec: Obj = {"podName": name_of(pod)}
        node = spec_of(pod).get("nodeName")
        if node:
            spec["nodeName"] = node
        meta: Obj = {"resourceVersion": ctx.obj["metadata"]["resourceVersion"]}
        if pool:
            spec["poolName"] = pool
            meta["labels"] = {labels.POOL_NAME: pool}
        return {"metadata": meta, "spec": spec}

    def _bind(self, ctx: Context, spec: CNClaimSpec, candidates: Sequence[Mapping[str, Any]]) -> Step:
        client, namespace, name = self.env.client, ctx.namespace, ctx.name
        claim_version = ctx.obj["metadata"]["resourceVersion"]
        wanted = bind_labels(ctx.obj, spec)

        async def bind() -> object:
            # The claim as seen must be current: a stale copy may not show the pod it took already.
            await client.patch(r.CNCLAIMS, name, {"metadata": {"resourceVersion": claim_version}}, namespace)
            lost: Exception | None = None
            for pod in candidates:
                patch = {
                    "metadata": {"resourceVersion": pod["metadata"]["resourceVersion"], "labels": wanted}
                }
                try:
                    await client.patch(r.PODS, name_of(pod), patch, namespace)
                except (Conflict, NotFound) as e:
                    ctx.log.debug("CN %s was taken or changed meanwhile: trying the next", name_of(pod))
                    lost = e
                    continue
                await self._put_to_work(pod, spec)()
                await client.patch(r.CNCLAIMS, name, self._record_patch(ctx, pod), namespace)
                ctx.log.info("bound CN pod %s", name_of(pod))
                return None
            assert lost is not None
            raise lost  # every candidate went to another claim: look again with a fresh cache

        return bind

    def _reclaim(self, spec: CNClaimSpec, pod: Mapping[str, Any], plan: Writes) -> None:
        meta = meta_of(pod)
        plan.patch(
            r.PODS,
            meta.namespace,
            name_of(pod),
            reclaim_patch(pod, spec, self.env.clock()),
            what=f"give CN {name_of(pod)} back to its pool",
        )
        address = str(meta.annotations.get(cnpods.HAKEEPER_ANNOTATION) or "")
        uuid = cnpods.store_uuid(pod)

        async def drain() -> object:
            try:
                await self.env.admin.admin(address).set_cn_work_state(uuid, WorkState.DRAINING, {})
            except AdminError as e:  # its CNSet drains it as soon as HAKeeper answers
                log.info("cannot set reclaimed CN %s Draining yet: %s", name_of(pod), e)
            return None

        plan.call(f"set CN {name_of(pod)} Draining", drain)

    # --------------------------------------------------------------- finalize
    async def finalize(self, ctx: Context) -> bool:
        """Give the claim's pod back to its pool; done once no pod is Bound to it."""
        spec = claim_spec(read(CNClaim, ctx.obj))  # an invalid claim still gives its pods back
        others = taken_by_others(self.env, ctx.namespace, ctx.name)
        held = [p for p in held_by(pool_pods(self.env, ctx.namespace), ctx.name) if name_of(p) not in others]
        if not held:
            return True
        plan = Writes(self.env.client)
        for pod in held:
            self._reclaim(spec, pod, plan)
            ctx.event("Normal", "Reclaimed", f"CN pod {name_of(pod)} goes back to its pool")
        await plan(ctx)
        ctx.wait(self.env.settings.busy_poll_seconds, "the claim's pods to go back to their pool")
        return False
