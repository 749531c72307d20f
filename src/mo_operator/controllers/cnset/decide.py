"""What a CNSet round does, decided purely from what it read: one plan.

``decide(view, settings)`` returns the round's one ``Decision``: its intents in the
order they are written (the shared objects first: the budget, the config, the
Services, the metric Service, each where the cache does not hold it; then the pods'
and MatrixOne's part; then the growth of cache volume claims, and the deletion of
the configs no pod needs once no pod is left to create), the status drafted (the
references, the claims' growth, MatrixOne's and the drains' conditions, then the
roll or the pool), and when to look again, with why. ``decide_members`` is the pods'
and MatrixOne's part alone (pod creates and deletes with their uid, pod patches,
cache volume claims, MatrixOne calls as ``Call`` intents, the ``HAKeeper`` and
``Draining`` conditions, Events) and what the round reports from.
``decide_finalize(view)`` is the finalizer's: every CN drained before the set goes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.kube.controller.outcome import Wait, sooner
from mo_operator.kube.meta.objects import is_deleting, labels_of, meta_of, name_of, uid_of
from mo_operator.matrixone import labels, names
from mo_operator.settings import Settings

from ..framework import resources as r
from ..framework.decision import Decision
from ..framework.draft import StatusDraft
from ..framework.references import report_missing
from ..framework.writes import CREATE_LIMIT, Create, Delete, Intent, writes_workload
from ..specs import pods as podutil
from ..specs.configmaps import unused_deletions
from ..specs.statefulsets import stall
from ..steps.podset import shared_intents
from ..steps.status import NOT_STARTED, first_status
from . import pods as cnpods
from . import pooling
from .claims import grown_claims, missing_claims
from .drain import drain_enabled, progress_drains, start_drain, undrain
from .observed import CNSetView, Desired, Draft, Unserved
from .report import Pooling, Serving, first_fields, serving_rollout
from .scaling import CNPod, decide_pods, strategy_of
from .shared import COMPONENT, shared_objects
from .stats import sessions, stats_patches
from .stores import cordoned, report_hakeeper, store_of, sync_stores

Obj = dict[str, Any]


@dataclass(frozen=True)
class CNSetDecision:
    """The pods' and MatrixOne's part of a round, and what the round reports."""

    decision: Decision
    """Its intents, the status fields, the conditions of MatrixOne, drains and a pool."""
    report: Serving | Pooling
    """What the shared status steps report from: a roll, or a pool."""
    created: bool
    """Pods are made this round (the ConfigMaps no pod uses yet are kept)."""


def decide(view: CNSetView | Unserved, settings: Settings) -> Decision:
    """The round's one plan and status (see the module doc). A set with no log service
    yet reports every field it will and writes nothing. Pure: a function of ``view``."""
    meta = meta_of(view.obj)
    draft = StatusDraft(view.known, generation=meta.generation, namespace=meta.namespace)
    if isinstance(view, Unserved):
        waiting = view.waiting
        draft.set_condition("Ready", False, waiting.reason, waiting.message)
        selector = labels.sub_resource_labels(COMPONENT, meta.name, meta.namespace)
        first = first_fields(meta.name, meta.namespace, selector)
        first_status(draft, first, *NOT_STARTED, replicas=view.spec.replicas)
        return draft.decision()
    want = view.want
    assert want is not None, "a set's round decides from what its spec asks"
    if view.missing is not None:
        report_missing(draft, view.missing, view.recheck_refs)
    shared = shared_intents(view.obj, COMPONENT, view.spec, shared_objects(want), view.cached)
    grown = grown_claims(draft, view)
    made = decide_members(view, settings)
    members = made.decision
    status = draft.status
    fields = members.status if isinstance(members.status, Mapping) else dump(members.status)
    for key, value in fields.items():
        if value is None:
            status.pop(key, None)
        else:
            status[key] = value
    for condition in members.conditions:
        draft.set_condition(condition.type, condition.status, condition.reason, condition.message)
    if members.later is not None:
        draft.later = sooner(draft.later, members.later)
    intents: list[Intent] = [*shared, *members.intents, *grown]
    if not made.created and not grown:  # a pod restarting mid-roll must still find its config
        base = names.config_map_base_name(COMPONENT, view.name)
        intents += unused_deletions(view.obj, base, view.configs, view.pods, [name_of(want.config)])
    report = made.report
    if isinstance(report, Serving):
        report.report(draft, view, pending=writes_workload(intents))
    else:
        report.report(draft, view)
    if intents or report.busy:
        draft.wait(settings.busy_poll_seconds, "the CNs' work under way (drains, registrations, labels)")
    else:
        draft.requeue(settings.poll_seconds, "the CN stores as HAKeeper sees them")
    if report.recheck is not None:
        draft.requeue(report.recheck, "whether a starting CN is stalled")
    return draft.decision(intents, events=members.events, log=members.log)


def decide_members(view: CNSetView, settings: Settings) -> CNSetDecision:
    """A serving set's pods toward ``replicas`` on the current template, drained before
    they leave; a pooling set's toward what its pool asks. Pure: a function of ``view``."""
    assert view.want is not None, "a set's round decides from what its spec asks"
    out = Draft()
    if view.pods:  # HAKeeper is asked only about pods
        report_hakeeper(view, out)
    if pooling.pooled(view.spec):
        return _pool(view, view.want, settings, out)
    return _serve(view, view.want, settings, out)


def _serve(view: CNSetView, want: Desired, settings: Settings, out: Draft) -> CNSetDecision:
    out.intents.extend(stats_patches(view))
    loads = sessions(view)
    made = decide_pods(
        [_member(p, want.digest, loads) for p in view.pods],
        view.replicas,
        strategy_of(view.spec, view.replicas),
        max_create=CREATE_LIMIT,
    )
    out.intents.extend(Create(r.PODS, new_pod(want, index)) for index in made.create)
    out.intents.extend(missing_claims(view, want))
    by_name = view.by_name()
    for pod_name in made.undrain:
        undrain(view, by_name[pod_name], out)
    draining_now = _retire(view, made.retire, out)
    drains_pending = progress_drains(view, made.undrain, out)
    unsettled = sync_stores(view, set(made.retire) | draining_now, out)
    if view.registration_look is not None:
        out.look(Wait(view.registration_look, "CN stores to register with HAKeeper"))
    roll = serving_rollout(view, want.digest, settings.rollout_stall_seconds)
    busy = drains_pending or unsettled or not roll.complete
    report = Serving(roll, made.waiting, busy)
    return CNSetDecision(out.done(report.status(view, want.selector)), report, bool(made.create))


def _member(pod: Mapping[str, Any], digest: str, loads: Mapping[str, int]) -> CNPod:
    return CNPod(
        name_of(pod),
        cnpods.index_of(pod),
        labels_of(pod).get(cnpods.TEMPLATE_HASH) == digest,
        podutil.is_ready(pod),
        cnpods.draining_since(pod) is not None,
        is_deleting(pod),
        loads.get(name_of(pod), 0),
    )


def _retire(view: CNSetView, retire: Sequence[str], out: Draft) -> set[str]:
    """Start draining the pods that leave (a cordoned CN drains too, though not
    ready); delete at once those with nothing to drain. The pods now draining."""
    by_name = view.by_name()
    draining_now: set[str] = set()
    for pod_name in retire:
        victim = by_name[pod_name]
        # unknown when HAKeeper does not say: drain, and the drain ends by its timeout at worst
        registered = view.state is None or store_of(view.state, victim) is not None
        if drain_enabled(view.spec) and registered and (podutil.is_ready(victim) or cordoned(victim)):
            start_drain(view, victim, out)
            draining_now.add(pod_name)
        else:
            out.intents.append(Delete(r.PODS, view.namespace, pod_name, uid=uid_of(victim)))
    return draining_now


def _pool(view: CNSetView, want: Desired, settings: Settings, out: Draft) -> CNSetDecision:
    """``podManagementPolicy: Pooling`` (see ``pooling.py``): the set keeps the pods
    its pool asks for, moves them along their pool phases, and never rolls."""
    made = pooling.decide_pooling(
        pooling.members(view.pods),
        view.replicas,
        view.spec.pods_to_delete or (),
        max_create=CREATE_LIMIT,
    )
    out.intents.extend(Create(r.PODS, pooling.as_pool_pod(new_pod(want, index))) for index in made.create)
    out.intents.extend(missing_claims(view, want))
    by_name = view.by_name()
    for pod_name in made.retire:
        out.intents.extend(pooling.retire(by_name[pod_name]))
    unsettled = pooling.sync_pool_stores(view, made.retire, out)
    # After the phase moves: those carry the resourceVersion they were decided on.
    out.intents.extend(stats_patches(view))
    starting = [
        p for p in view.pods if not is_deleting(p) and pooling.phase_of(p) == labels.POOL_PHASE_UNKNOWN
    ]
    stalled, recheck = stall(starting, view.now, settings.rollout_stall_seconds)
    report = Pooling(stalled, recheck, unsettled)
    out.conditions.extend(report.conditions(view))
    return CNSetDecision(out.done(report.status(view, want.selector)), report, bool(made.create))


def decide_finalize(view: CNSetView, settings: Settings) -> Decision:
    """With ``terminationPolicy: Drain``: start draining every live CN that does not
    drain yet, remove those whose drain is over, and look again until none is left."""
    out = Draft()
    for pod in view.pods:
        if cnpods.draining_since(pod) is None:
            start_drain(view, pod, out)
    progress_drains(view, (), out)
    out.look(Wait(settings.busy_poll_seconds, "the CNs to drain before the set goes"))
    return out.done()


def new_pod(want: Desired, index: int) -> Obj:
    """CN pod ``index`` of the set, on the current template."""
    spec = want.spec
    return cnpods.cn_pod(
        want.obj,
        want.template,
        want.digest,
        index,
        discovery=want.service.discovery_address,
        logset=want.logset,
        cn_labels=cnpods.cn_labels_json(spec),
        cache_volume=spec.cache_volume is not None,
    )
