"""The LogSet actor: observe once, then sync the desired objects, HAKeeper's view,
status and failover; finalize releases the S3 path's claim.

Bring-up is upstream's (matrixone-operator ``pkg/controllers/logset/controller.go``
``Observe``): the discovery address is published once the discovery Service and the
StatefulSet exist, and ``Ready`` follows the log stores' pods. HAKeeper is asked for
what it knows, never waited on: the ``HAKeeper`` condition and ``status.hakeeperState``
report it, failover acts on it, and the calls failing are told apart (``rpchealth``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.logset import LogSet, LogSetSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import annotations_of, status_of
from mo_operator.matrixone import labels, names, ports, reserved
from mo_operator.matrixone.admin import AdminError, HAKeeperState
from mo_operator.matrixone.reserved import Numbering

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.desired import matches
from ..framework.env import Env
from ..framework.meta import name_of, owner_reference
from ..framework.references import report_references
from ..framework.writes import Writes
from ..specs.statefulsets import Rollout, rollout
from ..steps import bucketclaims
from ..steps.podset import STATEFUL, Desired, collect_configs, pod_set_references, sync_workload
from ..steps.rpchealth import Patience, judge
from ..steps.status import NOT_STARTED, Readiness, first_status, report_rollout, store_status
from . import detached
from .bootstrap import bootstrap_members
from .desired import COMPONENT, desired
from .finalizer import HAKEEPER, RUNNING, decide_deletion, ran_before, read_deletion, wrote
from .planned import Evictions
from .repair import failover

Obj = dict[str, Any]
STOPPED = "Stopped"
"""Ready's reason while ``replicas`` is 0 (the admission warning says what that means)."""
READINESS = Readiness(
    members="log stores ready", not_ready="StoresNotReady", all_ready="AllStoresReady", noun="log stores"
)
WAITING_FOR_STORES = ("WaitingForLogStores", "HAKeeper is asked once the log stores are ready")


class LogSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env
        self._patience = Patience()
        """Since when each LogSet's HAKeeper has gone unanswered."""
        self._evictions = Evictions()
        """The log pods of each LogSet a drain evicted, until they are back."""

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admit(LogSet, obj).spec
        plan = Writes(self.env.client)
        self._first_status(ctx, spec)
        members = bootstrap_members(obj, spec, plan)
        selector = labels.sub_resource_labels(COMPONENT, ctx.name, ctx.namespace)
        numbering = _numbering(obj, spec)
        wanted = desired(obj, spec, members, selector, numbering)
        await report_references(ctx, self.env.references, pod_set_references(spec, spec.shared_storage))
        if not self._holds_path(ctx, obj, spec, wanted, plan):
            return plan or None  # nothing runs before the LogSet holds its S3 path
        kept = self._detached(ctx, wanted, numbering, selector)
        if kept.adopt or kept.foreign:
            _adopt(ctx, kept, plan)  # before the StatefulSet, which would delete them
            ctx.wait(self.env.settings.busy_poll_seconds, "the stores it keeps itself to be adopted")
            return plan or None
        if kept.hold:
            wanted = desired(obj, spec, members, selector, numbering, hold=True)
        runs = _run_by_statefulset(numbering) if numbering.detached else None
        pods, roll = sync_workload(ctx, self.env, STATEFUL, COMPONENT, spec, wanted, plan, runs=runs)
        _keep_detached(ctx, kept, plan)
        roll = detached.combined(roll, kept, numbering)
        evicted = self._evictions.note((ctx.namespace, ctx.name), pods)
        keep = [name_of(d) for _, d in wanted]
        collect_configs(self.env, obj, COMPONENT, pods, keep, plan, rolled=roll.complete)
        state = await self._hakeeper(ctx, roll)
        self._status(ctx, spec, roll, pods, pending=plan.writes_workload)
        if _ran(ctx) and not plan:
            await failover(self.env, ctx, spec, pods, state, plan, numbering.live, evicted)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Release the claim of the S3 path (``finalizer.py``): read, decide, act."""
        self._evictions.forget((ctx.namespace, ctx.name))
        return await decide_deletion(await read_deletion(ctx, self.env)).finalize(ctx, self.env.client)

    # ------------------------------------------------------------ bucket claim
    def _holds_path(
        self,
        ctx: Context,
        obj: Mapping[str, Any],
        spec: LogSetSpec,
        desired: Desired,
        plan: Writes,
    ) -> bool:
        """Claim the S3 path (BucketClaim) and keep the claim in step; True once the
        LogSet holds it. A path another LogSet holds, or whose claim is being deleted,
        is refused with a condition and an Event until that changes."""
        if spec.shared_storage.s3 is None:
            return True
        s3 = dump(spec.shared_storage.s3)
        template = next(d for res, d in desired if res is r.STATEFULSETS)["spec"]["template"]
        decision = bucketclaims.claim_decision(
            obj,
            s3,
            bucketclaims.claims_of_path(self.env.caches, s3),
            bucketclaims.scheduling_template(template),
            written=wrote(obj, _restored_from(spec)),
        )
        if decision.refused is not None:
            raise TerminalError(*decision.refused)
        if decision.create is not None:
            plan.create(decision.create, r.BUCKETCLAIMS)
        if decision.patch is not None and decision.claim is not None:
            plan.patch(
                r.BUCKETCLAIMS,
                str(decision.claim["metadata"].get("namespace") or ""),
                name_of(decision.claim),
                decision.patch,
                what=f"{'update' if decision.holds else 'bind'} BucketClaim {name_of(decision.claim)}",
            )
        return decision.holds

    # ---------------------------------------------------------- detached stores
    def _detached(
        self, ctx: Context, wanted: Desired, numbering: Numbering, selector: Mapping[str, str]
    ) -> detached.Plan:
        """What the LogSet does for the stores it keeps itself (none without a reserved
        ordinal between live stores)."""
        if not numbering.detached:
            return detached.Plan()
        caches, namespace = self.env.caches, ctx.namespace
        sts = next(d for res, d in wanted if res is r.STATEFULSETS)
        cached = caches.get(r.STATEFULSETS, namespace, name_of(sts))
        pods = caches.list(r.PODS, namespace, selector)
        runs = _run_by_statefulset(numbering)
        sts_roll = rollout(
            cached,
            [p for p in pods if runs(p)],
            now=self.env.clock(),
            stall_seconds=self.env.settings.rollout_stall_seconds,
        )
        current = cached is not None and matches(sts["spec"]["template"], cached["spec"]["template"])
        return detached.decide(
            ctx.obj,
            sts,
            numbering,
            pods,
            lambda claim: caches.get(r.PVCS, namespace, claim),
            statefulset_rolled=current and sts_roll.complete,
        )

    # --------------------------------------------------------------- HAKeeper
    async def _hakeeper(self, ctx: Context, roll: Rollout) -> HAKeeperState | None:
        """HAKeeper's view, when there is any chance it answers (some store is ready), and
        the ``HAKeeper`` condition and ``hakeeperState`` that report it."""
        key, now = (ctx.namespace, ctx.name), self.env.clock()
        if roll.ready == 0 or (not _ran(ctx) and roll.ready < roll.replicas):
            # HAKeeper bootstraps once every initial member runs: not before all are ready
            self._patience.answered(key)
            ctx.set_condition(HAKEEPER, False, *WAITING_FOR_STORES)
            return None
        address = names.discovery_address(ctx.name, ctx.namespace)
        try:
            state = await self.env.admin.admin(address).hakeeper_state()
        except AdminError as e:
            trouble = judge(
                e,
                f"HAKeeper at {address}",
                not_yet="NotReady" if ctx.status.get("hakeeperState") == RUNNING else "Bootstrapping",
                waited=self._patience.unanswered(key, now),
                patience=self.env.settings.rpc_patience_seconds,
            )
            ctx.log.debug("HAKeeper does not answer: %s", e)
            ctx.set_condition(HAKEEPER, False, trouble.reason, trouble.message)
            return None
        self._patience.answered(key)
        ctx.status["hakeeperState"] = state.phase.mo_name
        if state.bootstrapped:
            up = len(state.up_log_uuids())
            ctx.set_condition(
                HAKEEPER, True, RUNNING, f"HAKeeper is running; {up}/{len(state.log_stores)} log stores up"
            )
        else:
            ctx.set_condition(HAKEEPER, False, "Bootstrapping", f"HAKeeper is {state.phase.mo_name}")
        return state

    # ----------------------------------------------------------------- status
    def _first_status(self, ctx: Context, spec: LogSetSpec) -> None:
        """Every field and condition a LogSet reports, before it runs anything (a field
        or condition appearing is written at once, so they appear together)."""
        if ctx.status.get("conditions"):
            return
        first_status(ctx, {"availableStores": [], "failedStores": []}, *NOT_STARTED, replicas=spec.replicas)
        ctx.set_condition("Ready", False, READINESS.not_ready, f"0/{spec.replicas} log stores ready")
        ctx.set_condition(HAKEEPER, False, *WAITING_FOR_STORES)

    def _status(
        self,
        ctx: Context,
        spec: LogSetSpec,
        roll: Rollout,
        pods: Sequence[Mapping[str, Any]],
        *,
        pending: bool,
    ) -> None:
        """``discovery`` (this round's plan made the discovery Service and the
        StatefulSet, or they exist: a status is written only after its plan ran), and
        ``Ready`` from the log stores' pods, as upstream's."""
        status = ctx.status
        status["discovery"] = {
            "address": names.discovery_host(ctx.name, ctx.namespace),
            "port": ports.LOG_SERVICE,
        }
        store_status(status, pods, self.env.clock())
        replicas = spec.replicas
        report_rollout(ctx, roll, replicas, READINESS, pending=pending, pods=pods)
        if replicas == 0:
            # Upstream's way to stop a cluster: no store, so no log service and no MatrixOne.
            ctx.set_condition("Ready", False, STOPPED, "replicas is 0: the log service is stopped")
        answers = any(c.get("type") == HAKEEPER and c.get("status") == "True" for c in status["conditions"])
        if not answers and roll.ready > 0:
            ctx.wait(self.env.settings.busy_poll_seconds, "HAKeeper to answer")  # any moment now
        ctx.requeue(self.env.settings.poll_seconds, "HAKeeper's view of the log stores")


def _ran(ctx: Context) -> bool:
    """HAKeeper has answered that it runs: failover may act, and HAKeeper is asked even
    while a log store is not ready."""
    return ctx.status.get("hakeeperState") == RUNNING or ran_before(status_of(ctx.obj))


def _restored_from(spec: LogSetSpec) -> str | None:
    """The backup the LogSet's path was restored from before it started, if any."""
    return spec.initial_config.restore_from if spec.initial_config is not None else None


def _numbering(obj: Mapping[str, Any], spec: LogSetSpec) -> Numbering:
    """Where the stores run: past or around the reserved ordinals a taken-over LogSet records."""
    try:
        return reserved.recorded(annotations_of(obj), spec.replicas)
    except reserved.ReservedOrdinalsError as e:
        raise TerminalError(
            "InvalidReservedOrdinals", f"annotation {labels.LOGSET_RESERVED_ORDINALS}: {e}"
        ) from e


def _run_by_statefulset(numbering: Numbering) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a log pod is one the StatefulSet runs (at or past its start), not a detached one."""

    def runs(pod: Mapping[str, Any]) -> bool:
        ordinal = names.pod_ordinal(name_of(pod))
        return ordinal is not None and ordinal >= numbering.start

    return runs


def _adopt(ctx: Context, kept: detached.Plan, plan: Writes) -> None:
    """Pods at detached ordinals made the LogSet's, each only as it was judged (its resourceVersion)."""
    for pod in kept.adopt:
        plan.patch(
            r.PODS,
            ctx.namespace,
            pod.name,
            {
                "metadata": {
                    "resourceVersion": pod.resource_version,
                    "ownerReferences": [owner_reference(ctx.obj)],
                }
            },
            what=f"adopt log store pod {pod.name}, below the StatefulSet's first ordinal",
        )


def _keep_detached(ctx: Context, kept: detached.Plan, plan: Writes) -> None:
    """Claims before their pod; a stale or unwanted pod deleted only as it was judged (uid)."""
    for claim in kept.create_claims:
        plan.create(claim, r.PVCS)
    for pod in kept.create_pods:
        plan.create(pod, r.PODS)
    for name, uid in kept.delete_pods:
        plan.delete(r.PODS, ctx.namespace, name, uid=uid)
    for name, uid in kept.delete_claims:
        plan.delete(r.PVCS, ctx.namespace, name, uid=uid)
