"""The LogSet's decision: everything one reconcile does, from what it read, pure.

``decide(view)`` records the HAKeeper bootstrap decision on first sight, holds the S3
path (BucketClaim) before anything runs, adopts or keeps the stores the LogSet keeps
itself (detached ordinals), writes what differs of its objects through the set
skeleton's pure steps (``desired_intents``, ``rollbacks``, ``unused_deletions``),
reports HAKeeper's answer, the roll and the stores, and judges failover once HAKeeper
runs and nothing else is to be written. ``LogSetView`` is what the actor read for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.logset import LogSetSpec
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import annotations_of, meta_of, status_of
from mo_operator.matrixone import labels, names, ports, reserved
from mo_operator.matrixone.admin import AdminError, HAKeeperState
from mo_operator.matrixone.reserved import Numbering
from mo_operator.settings import Settings

from ..framework import resources as r
from ..framework.decision import Decision, Emit
from ..framework.desired import matches
from ..framework.draft import StatusDraft
from ..framework.meta import name_of, namespace_of, owner_reference
from ..framework.references import Ref, report_missing
from ..framework.writes import Create, Delete, Intent, Patch, Step, writes_workload
from ..specs import statefulsets
from ..specs.configmaps import unused_deletions
from ..specs.statefulsets import Rollout
from ..steps import bucketclaims
from ..steps.podset import STATEFUL, Desired, desired_intents
from ..steps.podset_input import Cached
from ..steps.rpchealth import judge
from ..steps.status import NOT_STARTED, Readiness, first_status, report_rollout, store_status
from . import detached
from . import failover as judged
from .bootstrap import bootstrap_members
from .desired import COMPONENT, desired
from .finalizer import HAKEEPER, RUNNING, ran_before, wrote
from .repair import judge as judge_stores
from .repair import policy

STOPPED = "Stopped"
"""Ready's reason while ``replicas`` is 0 (the admission warning says what that means)."""
READINESS = Readiness(
    members="log stores ready", not_ready="StoresNotReady", all_ready="AllStoresReady", noun="log stores"
)
WAITING_FOR_STORES = ("WaitingForLogStores", "HAKeeper is asked once the log stores are ready")


def _unbound(*args: Any) -> Step:
    """A step of a view built without one (a table test's): it fails if ever run."""

    async def step() -> None:
        raise RuntimeError(f"no step bound for {args!r}: the view was not read by the actor")

    return step


@dataclass(frozen=True)
class LogSetView:
    """What the LogSet's decision reads, once: the LogSet as admitted and its status as
    known, the claims of its S3 path, the references its pods miss, its objects, pods
    and claims as cached, HAKeeper's answer (when it was asked) and the failover's
    facts (when HAKeeper runs), the settings and the clock."""

    obj: Mapping[str, Any]
    spec: LogSetSpec
    known: Mapping[str, Any]
    """The status as the reconcile found it."""
    now: float
    settings: Settings = field(default_factory=Settings)
    s3: Mapping[str, Any] | None = None
    """The spec's S3 path as JSON (None without S3): what its claims are found and made by."""
    path_claims: tuple[Mapping[str, Any], ...] = ()
    """Every cached claim of the S3 path, in any namespace (none without S3)."""
    missing: tuple[Ref, ...] | None = None
    """The Secrets and ConfigMaps the pods need that do not exist (None: not looked up)."""
    recheck_refs: float = 0.0
    cached: Cached = field(default_factory=Cached)
    configs: tuple[Mapping[str, Any], ...] = ()
    pods: tuple[Mapping[str, Any], ...] = ()
    hakeeper: HAKeeperState | AdminError | None = None
    """HAKeeper's answer, or how asking it failed; None: not asked (no store ready yet)."""
    unanswered: float = 0.0
    """How long HAKeeper has gone unanswered, counting this time."""
    stores: tuple[judged.Store, ...] | None = None
    """The failover's facts of each store (None: not gathered, HAKeeper does not run)."""
    claim_named: Callable[[str], Mapping[str, Any] | None] | None = field(default=None, compare=False)
    """A claim of the namespace by name, as cached, for the detached stores (a taken-over
    LogSet's claims may lack its labels); None: among ``cached.pvcs``."""
    replace_pod: Callable[[str, str], Step] = field(default=_unbound, compare=False)
    replace_statefulset: Callable[[Any, str], Step] = field(default=_unbound, compare=False)


def decide(view: LogSetView) -> Decision:
    """The LogSet's writes, status, Events and look-again from ``view``: pure."""
    obj, spec, settings = view.obj, view.spec, view.settings
    draft = StatusDraft(view.known, generation=meta_of(obj).generation, namespace=namespace_of(obj))
    _first_status(draft, spec)
    intents: list[Intent] = []
    members, record = bootstrap_members(obj, spec)
    if record is not None:
        intents.append(record)
    selector = labels.sub_resource_labels(COMPONENT, name_of(obj), namespace_of(obj))
    numbering = numbering_of(obj, spec)
    wanted = desired(obj, spec, members, selector, numbering)
    if view.missing is not None:
        report_missing(draft, view.missing, view.recheck_refs)
    holds, claim_writes = _holds_path(view, wanted)
    intents += claim_writes
    if not holds:
        return draft.decision(intents)  # nothing runs before the LogSet holds its S3 path
    kept = kept_stores(view, wanted, numbering, selector)
    if kept.adopt or kept.foreign:
        intents += _adopt(obj, kept)  # before the StatefulSet, which would delete them
        draft.wait(settings.busy_poll_seconds, "the stores it keeps itself to be adopted")
        return draft.decision(intents)
    if kept.hold:
        wanted = desired(obj, spec, members, selector, numbering, hold=True)
    intents += desired_intents(
        draft, obj, STATEFUL, COMPONENT, spec, wanted, view.cached, view.replace_statefulset
    )
    roll = statefulset_roll(view, numbering)
    intents += statefulsets.rollbacks(roll, view.replace_pod)
    intents += _keep_detached(namespace_of(obj), kept)
    roll = detached.combined(roll, kept, numbering)
    if roll.complete and not intents:
        base = names.config_map_base_name(COMPONENT, name_of(obj))
        intents += unused_deletions(obj, base, view.configs, view.pods, [name_of(d) for _, d in wanted])
    _report_hakeeper(draft, view)
    _status(draft, view, roll, pending=writes_workload(intents))
    events: list[Emit] = []
    if view.stores is not None and ran(draft.status, obj) and not intents:
        intents += _failover(draft, view, events)
    return draft.decision(intents, events=events)


def ran(status: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """HAKeeper has answered that it runs (``status`` as drafted): failover may act, and
    HAKeeper is asked even while a log store is not ready."""
    return status.get("hakeeperState") == RUNNING or ran_before(status_of(obj))


def asks_hakeeper(roll: Rollout, status: Mapping[str, Any], obj: Mapping[str, Any]) -> bool:
    """Whether HAKeeper has any chance to answer: some store is ready, and, before it
    first ran, every initial member (HAKeeper bootstraps once they all run)."""
    return roll.ready > 0 and (ran(status, obj) or roll.ready >= roll.replicas)


def numbering_of(obj: Mapping[str, Any], spec: LogSetSpec) -> Numbering:
    """Where the stores run: past or around the reserved ordinals a taken-over LogSet records."""
    try:
        return reserved.recorded(annotations_of(obj), spec.replicas)
    except reserved.ReservedOrdinalsError as e:
        raise TerminalError(
            "InvalidReservedOrdinals", f"annotation {labels.LOGSET_RESERVED_ORDINALS}: {e}"
        ) from e


def run_by_statefulset(numbering: Numbering) -> Callable[[Mapping[str, Any]], bool]:
    """Whether a log pod is one the StatefulSet runs (at or past its start), not a detached one."""

    def runs(pod: Mapping[str, Any]) -> bool:
        ordinal = names.pod_ordinal(name_of(pod))
        return ordinal is not None and ordinal >= numbering.start

    return runs


def statefulset_roll(view: LogSetView, numbering: Numbering) -> Rollout:
    """How far the StatefulSet's roll got, over the pods it runs."""
    sts = view.cached.get(r.STATEFULSETS, names.workload_name(COMPONENT, name_of(view.obj)))
    pods = view.pods
    if numbering.detached:
        runs = run_by_statefulset(numbering)
        pods = tuple(p for p in pods if runs(p))
    return statefulsets.rollout(sts, pods, now=view.now, stall_seconds=view.settings.rollout_stall_seconds)


def store_roll(view: LogSetView) -> Rollout:
    """The roll across every store the reconcile found (the StatefulSet's and the
    detached ones), as the question to HAKeeper needs it."""
    obj, spec = view.obj, view.spec
    numbering = numbering_of(obj, spec)
    roll = statefulset_roll(view, numbering)
    if not numbering.detached:
        return roll
    members, _ = bootstrap_members(obj, spec)
    selector = labels.sub_resource_labels(COMPONENT, name_of(obj), namespace_of(obj))
    wanted = desired(obj, spec, members, selector, numbering)
    return detached.combined(roll, kept_stores(view, wanted, numbering, selector), numbering)


# ------------------------------------------------------------ bucket claim
def _holds_path(view: LogSetView, wanted: Desired) -> tuple[bool, list[Intent]]:
    """Claim the S3 path (BucketClaim) and keep the claim in step; True once the LogSet
    holds it. A path another LogSet holds, or whose claim is being deleted, is refused
    with a condition and an Event until that changes."""
    spec, obj, s3 = view.spec, view.obj, view.s3
    if s3 is None:
        return True, []
    template = next(d for res, d in wanted if res is r.STATEFULSETS)["spec"]["template"]
    restored = spec.initial_config.restore_from if spec.initial_config is not None else None
    decision = bucketclaims.claim_decision(
        obj,
        s3,
        list(view.path_claims),
        bucketclaims.scheduling_template(template),
        written=wrote(obj, restored),
    )
    if decision.refused is not None:
        raise TerminalError(*decision.refused)
    intents: list[Intent] = []
    if decision.create is not None:
        intents.append(Create(r.BUCKETCLAIMS, decision.create))
    if decision.patch is not None and decision.claim is not None:
        claim = decision.claim
        intents.append(
            Patch(
                r.BUCKETCLAIMS,
                namespace_of(claim),
                name_of(claim),
                decision.patch,
                what=f"{'update' if decision.holds else 'bind'} BucketClaim {name_of(claim)}",
            )
        )
    return decision.holds, intents


# ---------------------------------------------------------- detached stores
def kept_stores(
    view: LogSetView, wanted: Desired, numbering: Numbering, selector: Mapping[str, str]
) -> detached.Plan:
    """What the LogSet does for the stores it keeps itself (none without a reserved
    ordinal between live stores)."""
    if not numbering.detached:
        return detached.Plan()
    sts = next(d for res, d in wanted if res is r.STATEFULSETS)
    cached = view.cached.get(r.STATEFULSETS, name_of(sts))
    current = cached is not None and matches(sts["spec"]["template"], cached["spec"]["template"])
    claim_named = view.claim_named or {name_of(c): c for c in view.cached.pvcs}.get
    return detached.decide(
        view.obj,
        sts,
        numbering,
        list(view.pods),
        claim_named,
        statefulset_rolled=current and statefulset_roll(view, numbering).complete,
    )


def _adopt(obj: Mapping[str, Any], kept: detached.Plan) -> list[Intent]:
    """Pods at detached ordinals made the LogSet's, each only as it was judged (its resourceVersion)."""
    return [
        Patch(
            r.PODS,
            namespace_of(obj),
            pod.name,
            {
                "metadata": {
                    "resourceVersion": pod.resource_version,
                    "ownerReferences": [owner_reference(obj)],
                }
            },
            what=f"adopt log store pod {pod.name}, below the StatefulSet's first ordinal",
        )
        for pod in kept.adopt
    ]


def _keep_detached(namespace: str, kept: detached.Plan) -> list[Intent]:
    """Claims before their pod; a stale or unwanted pod deleted only as it was judged (uid)."""
    intents: list[Intent] = [Create(r.PVCS, claim) for claim in kept.create_claims]
    intents += [Create(r.PODS, pod) for pod in kept.create_pods]
    intents += [Delete(r.PODS, namespace, name, uid) for name, uid in kept.delete_pods]
    intents += [Delete(r.PVCS, namespace, name, uid) for name, uid in kept.delete_claims]
    return intents


# --------------------------------------------------------------- HAKeeper
def _report_hakeeper(draft: StatusDraft, view: LogSetView) -> None:
    """The ``HAKeeper`` condition and ``hakeeperState`` from HAKeeper's answer."""
    answer = view.hakeeper
    if answer is None:
        draft.set_condition(HAKEEPER, False, *WAITING_FOR_STORES)
        return
    if isinstance(answer, AdminError):
        address = names.discovery_address(name_of(view.obj), namespace_of(view.obj))
        trouble = judge(
            answer,
            f"HAKeeper at {address}",
            not_yet="NotReady" if draft.status.get("hakeeperState") == RUNNING else "Bootstrapping",
            waited=view.unanswered,
            patience=view.settings.rpc_patience_seconds,
        )
        draft.set_condition(HAKEEPER, False, trouble.reason, trouble.message)
        return
    draft.status["hakeeperState"] = answer.phase.mo_name
    if answer.bootstrapped:
        up = len(answer.up_log_uuids())
        draft.set_condition(
            HAKEEPER, True, RUNNING, f"HAKeeper is running; {up}/{len(answer.log_stores)} log stores up"
        )
    else:
        draft.set_condition(HAKEEPER, False, "Bootstrapping", f"HAKeeper is {answer.phase.mo_name}")


# ----------------------------------------------------------------- status
def _first_status(draft: StatusDraft, spec: LogSetSpec) -> None:
    """Every field and condition a LogSet reports, before it runs anything (a field
    or condition appearing is written at once, so they appear together)."""
    if draft.status.get("conditions"):
        return
    first_status(draft, {"availableStores": [], "failedStores": []}, *NOT_STARTED, replicas=spec.replicas)
    draft.set_condition("Ready", False, READINESS.not_ready, f"0/{spec.replicas} log stores ready")
    draft.set_condition(HAKEEPER, False, *WAITING_FOR_STORES)


def _status(draft: StatusDraft, view: LogSetView, roll: Rollout, *, pending: bool) -> None:
    """``discovery`` (this round's plan made the discovery Service and the
    StatefulSet, or they exist: a status is written only after its plan ran), and
    ``Ready`` from the log stores' pods, as upstream's."""
    obj, settings = view.obj, view.settings
    status = draft.status
    status["discovery"] = {
        "address": names.discovery_host(name_of(obj), namespace_of(obj)),
        "port": ports.LOG_SERVICE,
    }
    store_status(status, view.pods, view.now)
    replicas = view.spec.replicas
    report_rollout(draft, roll, replicas, READINESS, pending=pending, pods=view.pods)
    if replicas == 0:
        # Upstream's way to stop a cluster: no store, so no log service and no MatrixOne.
        draft.set_condition("Ready", False, STOPPED, "replicas is 0: the log service is stopped")
    answers = any(c.get("type") == HAKEEPER and c.get("status") == "True" for c in status["conditions"])
    if not answers and roll.ready > 0:
        draft.wait(settings.busy_poll_seconds, "HAKeeper to answer")  # any moment now
    draft.requeue(settings.poll_seconds, "HAKeeper's view of the log stores")


# ---------------------------------------------------------------- failover
def _failover(draft: StatusDraft, view: LogSetView, events: list[Emit]) -> list[Intent]:
    """Judge the log stores (``repair.judge``) from the facts read."""
    rules = policy(view.spec, namespace_of(view.obj), enabled=view.settings.failover)
    quorum = isinstance(view.hakeeper, HAKeeperState)
    return judge_stores(
        draft, name_of(view.obj), view.stores or (), rules, view.now, quorum=quorum, events=events
    )
