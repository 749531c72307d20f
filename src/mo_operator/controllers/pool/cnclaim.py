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

A reconcile reads (``CNClaimActor.read``, ``cnclaim_reads``) the claim as admitted,
the pool pods of its namespace and, only when the decision needs them, HAKeeper's
record of its store and the load left on a draining source into a ``ClaimView``;
``decide`` is a pure function of it. Its MatrixOne calls and the bind (which tries
its candidates in turn) are ``Call`` intents, built on the view's ``ClaimCalls``
and run only by the plan. The finalizer goes the same way (``ReleaseView``, ``decide_release``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaimSpec, CNClaimStatus
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import Later, Requeue, Wait, sooner
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.errors import Conflict, NotFound
from mo_operator.kube.meta.objects import annotations_of, labels_of, spec_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, CNStore, MOAdminProvider, WorkState, cn_labels_from_spec

from ..cnset import pods as cnpods
from ..framework import resources as r
from ..framework.decision import Decision, Emit, SetCondition
from ..framework.env import Env
from ..framework.meta import name_of, namespace_of
from ..framework.writes import Call, Intent, Patch, Step, Writes
from ..specs import pods as podutil
from .cnclaim_reads import (
    ClaimView,
    ReleaseView,
    held_by,
    keep_phase,
    migration_source,
    read_claim,
    read_release,
)
from .decisions import (
    DONE,
    DRAINING,
    LOST,
    OUTDATED,
    PENDING,
    RECLAIM,
    claim_candidates,
    matching_pool,
    migration_step,
)

log = logging.getLogger(__name__)
Obj = dict[str, Any]

RESERVED_PREFIXES = ("matrixorigin.io/", "pool.matrixorigin.io/", "matrixone.cloud/")
"""Label keys a claim's ``additionalPodLabels`` never removes from a pod it gives back."""
SHOWN_CANDIDATES = 3


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


def store_labels(spec: CNClaimSpec) -> dict[str, tuple[str, ...]]:
    """The HAKeeper labels of the claimed store (``spec.cnLabels``)."""
    return cn_labels_from_spec([dump(label) for label in spec.cn_labels or ()])


def record_patch(claim: Mapping[str, Any], pod: Mapping[str, Any]) -> Obj:
    """The claim patch that records its bound ``pod`` (``podName``, ``nodeName``,
    ``poolName``), on condition that the claim is still the one decided on."""
    pool = labels_of(pod).get(labels.POOL_NAME)
    spec: Obj = {"podName": name_of(pod)}
    node = spec_of(pod).get("nodeName")
    if node:
        spec["nodeName"] = node
    meta: Obj = {"resourceVersion": claim["metadata"]["resourceVersion"]}
    if pool:
        spec["poolName"] = pool
        meta["labels"] = {labels.POOL_NAME: pool}
    return {"metadata": meta, "spec": spec}


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


@dataclass(frozen=True)
class ClaimCalls:
    """The steps a claim's decision plans that are code: MatrixOne's store calls, and the
    bind, which tries its candidates in turn until one is not taken meanwhile. Building
    a step calls nothing; the plan runs it."""

    client: Client
    admin: MOAdminProvider
    log: logging.LoggerAdapter[logging.Logger]

    def put_to_work(self, pod: Mapping[str, Any], spec: CNClaimSpec) -> Step:
        address = str(annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION) or "")
        admin = self.admin.admin(address)
        return functools.partial(
            admin.set_cn_work_state,
            cnpods.store_uuid(pod),
            WorkState.WORKING,
            store_labels(spec),
        )

    def drain(self, pod: Mapping[str, Any]) -> Step:
        """Set a reclaimed pod's store Draining; HAKeeper not answering is left to its CNSet."""
        address = str(annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION) or "")
        uuid, admin = cnpods.store_uuid(pod), self.admin

        async def drain() -> object:
            try:
                await admin.admin(address).set_cn_work_state(uuid, WorkState.DRAINING, {})
            except AdminError as e:  # its CNSet drains it as soon as HAKeeper answers
                log.info("cannot set reclaimed CN %s Draining yet: %s", name_of(pod), e)
            return None

        return drain

    def bind(
        self, claim: Mapping[str, Any], spec: CNClaimSpec, candidates: Sequence[Mapping[str, Any]]
    ) -> Step:
        client, namespace, name = self.client, namespace_of(claim), name_of(claim)
        claim_version = claim["metadata"]["resourceVersion"]
        wanted = bind_labels(claim, spec)

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
                    self.log.debug("CN %s was taken or changed meanwhile: trying the next", name_of(pod))
                    lost = e
                    continue
                await self.put_to_work(pod, spec)()
                await client.patch(r.CNCLAIMS, name, record_patch(claim, pod), namespace)
                self.log.info("bound CN pod %s", name_of(pod))
                return None
            assert lost is not None
            raise lost  # every candidate went to another claim: look again with a fresh cache

        return bind


class _Draft:
    """A decision as it is built: what ``decide`` accumulates, handed out as a ``Decision``."""

    def __init__(self) -> None:
        self.intents: list[Intent] = []
        self.status: Obj = {}
        self.conditions: list[SetCondition] = []
        self.events: list[Emit] = []
        self.later: Later | None = None
        self.log: list[str] = []

    def set(self, condition: SetCondition) -> None:
        """Set a condition; a later step of the decision says it better (a migration's progress)."""
        self.conditions = [c for c in self.conditions if c.type != condition.type]
        self.conditions.append(condition)

    def pending(self, reason: str, message: str) -> None:
        self.status["phase"] = PENDING
        self.set(SetCondition("Ready", False, reason, message))

    def look_again(self, later: Later) -> None:
        self.later = sooner(self.later, later)

    def decision(self) -> Decision:
        return Decision(
            tuple(self.intents),
            self.status,
            tuple(self.conditions),
            tuple(self.events),
            self.later,
            tuple(self.log),
        )


def reclaim(view: ClaimView | ReleaseView, pod: Mapping[str, Any]) -> list[Intent]:
    """Give ``pod`` back to its pool, Draining, and set its store Draining."""
    return [
        Patch(
            r.PODS,
            namespace_of(pod),
            name_of(pod),
            reclaim_patch(pod, view.spec, view.now),
            what=f"give CN {name_of(pod)} back to its pool",
        ),
        Call(view.calls.drain(pod), f"set CN {name_of(pod)} Draining"),
    ]


def decide(view: ClaimView) -> Decision:
    """Bind a pod, keep the bound one working (or move to another), and give back any
    other pod the claim holds. Pure: a function of ``view``."""
    draft = _Draft()
    name, spec = name_of(view.claim), view.spec
    mine = held_by(view.pods, name)
    pod_name, source = spec.pod_name, migration_source(spec)
    if not pod_name:
        _find_pod(view, mine, draft)
    else:
        _keep_pod(view, pod_name, source, draft)
    keep = {pod_name or (name_of(mine[0]) if mine else None), source}  # no podName: the first is adopted
    for extra in mine:
        if name_of(extra) not in keep:
            draft.log.append(f"the claim holds a second pod, {name_of(extra)}: giving it back")
            draft.intents.extend(reclaim(view, extra))
    return draft.decision()


def _find_pod(view: ClaimView, mine: Sequence[Mapping[str, Any]], draft: _Draft) -> None:
    claim, spec = view.claim, view.spec
    namespace, name = namespace_of(claim), name_of(claim)
    if mine:  # a bind took this pod, then stopped before recording it
        pod = mine[0]
        draft.intents.append(Call(view.calls.put_to_work(pod, spec), f"put CN {name_of(pod)} to work"))
        draft.intents.append(
            Patch(r.CNCLAIMS, namespace, name, record_patch(claim, pod), what="record the bound pod")
        )
        draft.pending("Binding", f"binding CN pod {name_of(pod)}")
        return
    candidates = claim_candidates(spec, view.pods, view.taken)
    if candidates:
        shown = ", ".join(name_of(p) for p in candidates[:SHOWN_CANDIDATES])
        draft.intents.append(Call(view.calls.bind(claim, spec, candidates), f"bind an idle CN ({shown})"))
        draft.pending("Binding", f"binding an idle CN ({shown})")
        return
    pool = spec.pool_name
    if not pool:
        found = matching_pool(spec, view.pools)
        if found is None:
            draft.pending(
                "NoMatchingPool",
                "no idle CN matches the selector, and no CNPool of the namespace has podLabels it matches",
            )
            return
        pool = name_of(found)
    if labels_of(claim).get(labels.POOL_NAME) != pool or not spec.pool_name:
        nominate = {"metadata": {"labels": {labels.POOL_NAME: pool}}, "spec": {"poolName": pool}}
        draft.intents.append(
            Patch(r.CNCLAIMS, namespace, name, nominate, what=f"nominate the claim to pool {pool}")
        )
    draft.pending("WaitingForPod", f"no idle CN of pool {pool} matches the selector yet: the pool starts one")


def _keep_pod(view: ClaimView, pod_name: str, source: str | None, draft: _Draft) -> None:
    claim, spec, pod = view.claim, view.spec, view.pod
    phase = keep_phase(view.status, pod, name_of(claim), source)
    if phase is None:
        assert pod is not None
        draft.intents.append(Call(view.calls.bind(claim, spec, [pod]), f"bind CN {pod_name}"))
        if source is None:
            draft.pending("Binding", f"binding CN pod {pod_name}")
        else:
            draft.set(
                SetCondition("Ready", True, "Migrating", f"binding CN pod {pod_name} to move from {source}")
            )
        return
    if phase == LOST and source is not None:
        draft.set(
            SetCondition(
                "Ready",
                True,
                "MigrationBlocked",
                f"CN pod {pod_name} is gone or held by another claim: the claim stays on {source}; "
                "set spec.podName to an idle pod of the pool",
            )
        )
        draft.look_again(Requeue(view.poll, f"whether CN pod {pod_name} is back"))
        return
    if phase == LOST:
        draft.status["phase"] = LOST
        draft.set(
            SetCondition(
                "Ready", False, "PodLost", f"CN pod {pod_name} is gone or no longer bound to this claim"
            )
        )
        return
    assert pod is not None
    missing = {k: v for k, v in bind_labels(claim, spec).items() if labels_of(pod).get(k) != v}
    if missing:
        draft.intents.append(
            Patch(
                r.PODS,
                namespace_of(claim),
                pod_name,
                {"metadata": {"labels": missing}},
                what=f"label CN {pod_name}",
            )
        )
    now = podutil.format_time(view.now)
    draft.status["phase"] = phase
    draft.status["boundTime"] = view.status.bound_time or now
    store = view.store
    working = _working(view.status)
    if store is not None:
        want = store_labels(spec)
        if store.work_state is not WorkState.WORKING or dict(store.labels) != want:
            draft.intents.append(Call(view.calls.put_to_work(pod, spec), f"put CN {pod_name} to work"))
        previous = view.status.store
        since = previous.bound_time if previous is not None and previous.pod_name == pod_name else None
        draft.status["store"] = store_status(store, pod_name, since or now)
        working = (pod_name, store.work_state.value, since or now)
    if phase == OUTDATED:
        draft.set(
            SetCondition(
                "Ready", True, "Outdated", f"bound to CN pod {pod_name}, of an older template of its pool"
            )
        )
    else:
        draft.set(SetCondition("Ready", True, "Bound", f"bound to CN pod {pod_name}"))
    if store is not None:
        draft.look_again(Requeue(view.poll, f"the store of CN {pod_name} as HAKeeper sees it"))
    else:
        draft.look_again(Wait(view.busy_poll, f"HAKeeper to know the store of CN {pod_name}"))
    if source is not None:
        _migrate(view, pod_name, source, working, draft)
    else:
        draft.status["migrate"] = None


def _working(status: CNClaimStatus) -> tuple[str | None, int | None, str | None]:
    """The pod, work state and bound time ``status.store`` reports."""
    store = status.store
    return (None, None, None) if store is None else (store.pod_name, store.work_state, store.bound_time)


def _migrate(
    view: ClaimView,
    target: str,
    source_name: str,
    working: tuple[str | None, int | None, str | None],
    draft: _Draft,
) -> None:
    """The next step of moving the claim from ``source_name`` to ``target`` (bound);
    ``working``: the store as ``status.store`` will report it."""
    store_pod, state, bound_time = working
    since = (
        podutil.parse_time(bound_time) if store_pod == target and state == WorkState.WORKING.value else None
    )
    source = view.source
    step = migration_step(source, name_of(view.claim), since, view.now, view.delay)
    if step.action == DONE:
        draft.status["migrate"] = None
        end = {
            "metadata": {"resourceVersion": view.claim["metadata"]["resourceVersion"]},
            "spec": {"sourcePod": None},
        }
        draft.intents.append(
            Patch(
                r.CNCLAIMS,
                namespace_of(view.claim),
                name_of(view.claim),
                end,
                what=f"end the migration from {source_name}",
            )
        )
        draft.events.append(
            Emit("Normal", "Migrated", f"moved from CN pod {source_name} to {target}", after_writes=True)
        )
        return
    assert source is not None
    moving = f"bound to CN pod {target}, moving from {source_name}"
    if step.action == RECLAIM:
        draft.intents.extend(reclaim(view, source))
        draft.set(SetCondition("Ready", True, "Migrating", f"{moving}: {source_name} drains"))
        draft.look_again(Wait(view.busy_poll, f"CN {source_name} to drain"))
    elif step.action == DRAINING:
        left = view.load
        if isinstance(left, dict):
            draft.status["migrate"] = {"source": left}
            shown = f": {left['connections']} sessions left on {source_name}"
        else:
            shown = f": waiting for MatrixOne to say what is left on {source_name} ({left})"
        draft.set(SetCondition("Ready", True, "Migrating", moving + shown))
        draft.look_again(Wait(view.busy_poll, f"the sessions left on CN {source_name}"))
    else:
        draft.set(
            SetCondition(
                "Ready", True, "Migrating", f"{moving} once {target} has worked {int(step.wait) + 1}s more"
            )
        )
        draft.look_again(Requeue(max(step.wait, 0.1), f"CN {target} to have worked long enough"))


def decide_release(view: ReleaseView) -> Decision:
    """Give the claim's pods back to their pool; the finalizer goes once none is Bound to it."""
    if not view.held:
        return Decision(finalized=True)
    intents = [intent for pod in view.held for intent in reclaim(view, pod)]
    events = tuple(
        Emit("Normal", "Reclaimed", f"CN pod {name_of(p)} goes back to its pool") for p in view.held
    )
    later = Wait(view.busy_poll, "the claim's pods to go back to their pool")
    return Decision(tuple(intents), events=events, later=later)


class CNClaimActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    def _calls(self, ctx: Context) -> ClaimCalls:
        return ClaimCalls(self.env.client, self.env.admin, ctx.log)

    async def read(self, ctx: Context) -> ClaimView:
        return await read_claim(self.env, ctx, self._calls(ctx))

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)

    async def finalize(self, ctx: Context) -> bool:
        """Give the claim's pod back to its pool; done once no pod is Bound to it."""
        view = await read_release(self.env, ctx, self._calls(ctx))
        return await decide_release(view).finalize(ctx, self.env.client)
