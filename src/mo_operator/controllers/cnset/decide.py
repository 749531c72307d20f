"""What a CNSet round does to its pods and to MatrixOne, decided purely from its view.

``decide(view)`` returns the pod-level ``Decision`` (pod creates and deletes with
their uid, pod patches, cache volume claims, MatrixOne calls as ``Call`` intents,
the ``HAKeeper`` and ``Draining`` conditions, Events, when to look again and why)
and what the round reports (its roll or its pool). The set's shared objects (its
ConfigMap and Services, the collection of unused ConfigMaps, the growth of cache
claims) are the set skeleton's steps, which the actor runs around it.
``decide_finalize(view)`` is the finalizer's: every CN drained before the set goes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.controller.outcome import Wait
from mo_operator.kube.meta.objects import is_deleting, labels_of, name_of, uid_of
from mo_operator.matrixone import labels

from ..framework import resources as r
from ..framework.decision import Decision
from ..framework.writes import CREATE_LIMIT, Create, Delete
from ..specs import pods as podutil
from ..specs.statefulsets import stall
from . import pods as cnpods
from . import pooling
from .claims import missing_claims
from .drain import drain_enabled, progress_drains, start_drain, undrain
from .observed import CNSetView, Desired, Draft
from .report import Pooling, Serving, serving_rollout
from .scaling import CNPod, decide_pods, strategy_of
from .stats import sessions, stats_patches
from .stores import cordoned, report_hakeeper, store_of, sync_stores

Obj = dict[str, Any]


@dataclass(frozen=True)
class Settings:
    """The operator settings a CNSet's decision takes."""

    rollout_stall_seconds: float
    busy_poll_seconds: float


@dataclass(frozen=True)
class CNSetDecision:
    """The pod-level decision and what the round reports."""

    decision: Decision
    """Its intents, the status fields, the conditions of MatrixOne, drains and a pool."""
    report: Serving | Pooling
    """What the shared status steps report from: a roll, or a pool."""
    created: bool
    """Pods are made this round (the ConfigMaps no pod uses yet are kept)."""


def decide(view: CNSetView, settings: Settings) -> CNSetDecision:
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
