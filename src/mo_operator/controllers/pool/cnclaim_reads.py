"""What a CNClaim's decisions read (``cnclaim``): the views, and the reads that fill
them once per reconcile, from the cache and, only when the decision needs it, from
MatrixOne (the bound pod's store, the propagation delay and the load left on a
migration's source).

The pure helpers both sides use live here too: a claim's spec as admitted, the pods
Bound to a claim, the pod a claim moves away from, the phase a claim with a pod keeps.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mo_operator.api.cnclaim import CNClaim, CNClaimSpec, CNClaimStatus
from mo_operator.api.cnset import CNSet
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import annotations_of, labels_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, CNStore

from ..cnset import pods as cnpods
from ..cnset.drain import DEFAULT_MIN_DRAIN_SECONDS
from ..cnset.pooling import phase_of
from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.env import Env
from ..framework.meta import is_deleting, name_of, namespace_of
from .decisions import BOUND, LOST, OUTDATED, bound_phase, natural_key

if TYPE_CHECKING:
    from .cnclaim import ClaimCalls

log = logging.getLogger(__name__)
Obj = dict[str, Any]


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
        pod = claim_spec(typed.read(CNClaim, other)).pod_name
        if pod and name_of(other) != claim and not is_deleting(other):
            out[pod] = name_of(other)
    return out


EMPTY_SPEC = CNClaimSpec.model_construct(selector=None)
"""The spec of a claim that has none, or an invalid one: it selects and labels nothing."""


def claim_spec(claim: CNClaim | None) -> CNClaimSpec:
    """A claim's spec as admitted (``EMPTY_SPEC`` when it has none)."""
    return claim.spec if claim is not None and claim.spec is not None else EMPTY_SPEC


def migration_source(spec: CNClaimSpec) -> str | None:
    """The pod a claim is moving away from (``spec.sourcePod.podName``), if it names
    one other than its ``podName``."""
    source = spec.source_pod.pod_name if spec.source_pod is not None else None
    return source if source and spec.pod_name and source != spec.pod_name else None


@dataclass(frozen=True)
class ClaimView:
    """What a CNClaim's decision reads. ``store``, ``source``, ``delay`` and ``load``
    are read only when the claim is bound (and migrating, for the last three)."""

    claim: Mapping[str, Any]
    spec: CNClaimSpec
    status: CNClaimStatus
    """As last written (the draft the reconcile starts from)."""
    pods: tuple[Mapping[str, Any], ...]
    """The pool pods of the claim's namespace."""
    now: float
    poll: float
    """How often a bound claim's store is looked at (``poll_seconds``)."""
    busy_poll: float
    calls: ClaimCalls
    taken: Mapping[str, str] = field(default_factory=dict)
    """Without a ``podName``: the pods other claims name, to the claim naming each."""
    pools: tuple[Mapping[str, Any], ...] = ()
    """Without a ``podName``: the CNPools of the namespace."""
    pod: Mapping[str, Any] | None = None
    """The ``podName`` pod."""
    store: CNStore | None = None
    """HAKeeper's record of the bound pod's store (None: it does not say)."""
    source: Mapping[str, Any] | None = None
    """The pod a migrating claim leaves."""
    delay: float = DEFAULT_MIN_DRAIN_SECONDS
    """How long the target must have worked before the source drains."""
    load: Obj | str | None = None
    """What still runs on a draining source (``status.migrate.source``), or why MatrixOne
    does not say."""


def keep_phase(
    status: CNClaimStatus, pod: Mapping[str, Any] | None, claim: str, source: str | None
) -> str | None:
    """The phase of a claim with a ``podName`` (see ``bound_phase``): Lost stays Lost
    unless a migration names another pod."""
    return LOST if status.phase == LOST and source is None else bound_phase(pod, claim)


@dataclass(frozen=True)
class ReleaseView:
    """What a deleted claim's finalizer reads: the pods Bound to it that no other claim names."""

    claim: Mapping[str, Any]
    spec: CNClaimSpec
    held: tuple[Mapping[str, Any], ...]
    now: float
    busy_poll: float
    calls: ClaimCalls


async def read_claim(env: Env, ctx: Context, calls: ClaimCalls) -> ClaimView:
    """Every read a decision needs, once: the claim as admitted and as last reported,
    the pool pods of its namespace; without a pod, the pods other claims name and the
    pools; bound, its pod's store in HAKeeper; migrating, the source, its CNSet's
    propagation delay and, once it drains, what is left on it."""
    claim = ctx.obj
    spec = claim_spec(admit(CNClaim, claim))
    status = typed.parse_status(CNClaimStatus, ctx.status)
    namespace, name = ctx.namespace, ctx.name
    settings = env.settings
    view = ClaimView(
        claim,
        spec,
        status,
        tuple(pool_pods(env, namespace)),
        env.clock(),
        settings.poll_seconds,
        settings.busy_poll_seconds,
        calls,
    )
    if not spec.pod_name:
        taken = taken_by_others(env, namespace, name)
        return dataclasses.replace(view, taken=taken, pools=tuple(env.caches.list(r.CNPOOLS, namespace)))
    pod = env.caches.get(r.PODS, namespace, spec.pod_name)
    source_name = migration_source(spec)
    if keep_phase(status, pod, name, source_name) not in (BOUND, OUTDATED):
        return dataclasses.replace(view, pod=pod)
    assert pod is not None
    store = await _store(env, ctx, pod)
    if source_name is None:
        return dataclasses.replace(view, pod=pod, store=store)
    source = env.caches.get(r.PODS, namespace, source_name)
    draining = (
        source is not None and not is_deleting(source) and phase_of(source) == labels.POOL_PHASE_DRAINING
    )
    load = await _load(env, source) if draining and source is not None else None
    return dataclasses.replace(
        view, pod=pod, store=store, source=source, delay=_propagation_delay(env, pod), load=load
    )


async def _store(env: Env, ctx: Context, pod: Mapping[str, Any]) -> CNStore | None:
    """HAKeeper's record of ``pod``'s store; None when the pod does not say where
    HAKeeper is yet, or HAKeeper does not answer (the claim looks again soon)."""
    address = annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION)
    if not address:
        return None
    try:
        state = await env.admin.admin(str(address)).hakeeper_state()
    except AdminError as e:
        ctx.log.debug("HAKeeper does not answer: %s", e)
        return None
    return state.cn(cnpods.store_uuid(pod))


def _propagation_delay(env: Env, target: Mapping[str, Any]) -> float:
    """``scalingConfig.minDelaySeconds`` of the target's CNSet: how long the proxy
    needs to learn of a store's new state (upstream waits a fixed 15 s)."""
    set_name = labels_of(target).get(labels.INSTANCE)
    cached = env.caches.get(r.CNSETS, namespace_of(target), str(set_name)) if set_name else None
    cnset = typed.read(CNSet, cached) if cached is not None else None
    scaling = cnset.spec.scaling_config if cnset is not None and cnset.spec is not None else None
    delay = scaling.min_delay_seconds if scaling is not None else None
    return float(DEFAULT_MIN_DRAIN_SECONDS if delay is None else delay)


async def _load(env: Env, pod: Mapping[str, Any]) -> Obj | str:
    """``status.migrate.source``: what still runs on ``pod``, or why MatrixOne does not say."""
    address = str(annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION) or "")
    try:
        load = await env.admin.admin(address).cn_load(cnpods.store_uuid(pod))
    except AdminError as e:
        log.debug("cannot read the load of CN %s: %s", name_of(pod), e)
        return str(e)
    return {"connections": load.sessions, "pipelines": load.pipelines, "replicas": load.replicas}


async def read_release(env: Env, ctx: Context, calls: ClaimCalls) -> ReleaseView:
    """The claim (an invalid one still gives its pods back) and the pods Bound to it
    that no other claim names."""
    spec = claim_spec(typed.read(CNClaim, ctx.obj))
    others = taken_by_others(env, ctx.namespace, ctx.name)
    held = [p for p in held_by(pool_pods(env, ctx.namespace), ctx.name) if name_of(p) not in others]
    return ReleaseView(ctx.obj, spec, tuple(held), env.clock(), env.settings.busy_poll_seconds, calls)
