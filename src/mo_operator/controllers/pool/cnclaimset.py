"""The CNClaimSet controller: ``replicas`` claims from a template, as a
ReplicaSet keeps pods.

Its claims are named ``<set>-<index>`` (the lowest free index: a claim
asked for twice, because the cache had not shown the first yet, is asked for
under the same name and made once), labelled ``matrixorigin.io/claimset`` and
``claim.matrixorigin.io/instance-id`` (upstream's labels; upstream's ids are
random) and owned by the set; ``ownerName`` defaults to the set's name, so a
claim prefers the pod its set held last. A Lost claim is deleted and
replaced.

Scale-in deletes the claims that matter least (``decisions.claim_deletion_order``):
those without a pod, then by phase, then by their pod, the one with the lowest
``controller.kubernetes.io/pod-deletion-cost`` and the fewest sessions first
(asked of MatrixOne at the moment of the decision). A deleted claim gives its
pod back to the pool (the claim's own finalizer).

When the pool's template moves on, the set rolls as upstream's does: one
more claim while some hold outdated pods, then an Outdated claim goes once the
new one is bound.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnclaim import CNClaim, CNClaimSet, CNClaimSetSpec, CNClaimStatus
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import (
    annotations_of,
    labels_of,
    meta_of,
    namespace_of,
    spec_of,
    status_of,
)
from mo_operator.kube.meta.selectors import selector_from_dict, selector_from_labels
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.names import free_ordinals

from ..cnset import pods as cnpods
from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.decision import Decision, SetCondition
from ..framework.env import Env
from ..framework.meta import is_controlled_by, is_deleting, name_of, owner_reference, uid_of
from ..framework.writes import CREATE_LIMIT, Create, Delete, Intent, Writes, delete_dependents_first
from ..specs import pods as podutil
from .cnclaim_reads import claim_spec
from .decisions import (
    BOUND,
    LOST,
    OUTDATED,
    PENDING,
    ClaimVictim,
    claim_deletion_order,
    claimset_scale,
    natural_key,
)

Obj = dict[str, Any]


def claim_phase(claim: Mapping[str, Any]) -> str:
    return typed.status_of(CNClaimStatus, claim).phase or PENDING


def instance_index(claim: Mapping[str, Any]) -> int | None:
    value = labels_of(claim).get(labels.CLAIM_INSTANCE_ID)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def template_labels(spec: CNClaimSetSpec) -> dict[str, str]:
    meta = spec.template.metadata
    return dict(meta.labels or {}) if meta is not None else {}


def claim_of(claimset: Mapping[str, Any], spec: CNClaimSetSpec, index: int) -> Obj:
    """Claim ``<set>-<index>`` of ``claimset`` (with admitted ``spec``)."""
    template = spec.template
    meta = meta_of(claimset)
    claim_spec = dump(template.spec) if template.spec is not None else {}
    for key in ("podName", "nodeName", "sourcePod"):
        claim_spec.pop(key, None)
    claim_spec.setdefault("ownerName", meta.name)
    metadata: Obj = {
        "name": f"{meta.name}-{index}",
        "namespace": meta.namespace,
        "labels": {
            **template_labels(spec),
            labels.CLAIMSET: meta.name,
            labels.CLAIM_INSTANCE_ID: str(index),
        },
        "ownerReferences": [owner_reference(claimset)],
    }
    annotations = template.metadata.annotations if template.metadata is not None else None
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": claimset["apiVersion"], "kind": "CNClaim", "metadata": metadata, "spec": claim_spec}


def pod_selector(name: str) -> str:
    """The pods the set's claims hold (``status.labelSelector``, as upstream's)."""
    return str(selector_from_labels({labels.CLAIMSET: name, labels.POOL_PHASE: labels.POOL_PHASE_BOUND}))


@dataclass(frozen=True)
class ClaimSetView:
    """What a CNClaimSet's decision reads: the set, its admitted spec, its claims (in
    index order) and, only when it has claims to spare, how each would fare on scale-in."""

    claimset: Mapping[str, Any]
    spec: CNClaimSetSpec
    claims: tuple[Mapping[str, Any], ...]
    victims: tuple[ClaimVictim, ...] = ()


def _owned(claims: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The live claims the set counts: not Lost, with an index of its own."""
    return [
        c for c in claims if not is_deleting(c) and claim_phase(c) != LOST and instance_index(c) is not None
    ]


def decide(view: ClaimSetView) -> Decision:
    """Replace Lost (or unindexed) claims, make the claims missing at the lowest free
    indexes (at most a round's worth), delete the claims that matter least when there
    are too many, and count what is kept. Pure: a function of ``view``."""
    spec, namespace = view.spec, namespace_of(view.claimset)
    owned = _owned(view.claims)
    intents: list[Intent] = [
        Delete(r.CNCLAIMS, namespace, name_of(c), uid=uid_of(c))
        for c in view.claims
        if not is_deleting(c) and c not in owned
    ]
    scale = claimset_scale([claim_phase(c) for c in owned], spec.replicas)
    if scale.create:
        used = {i for c in view.claims if (i := instance_index(c)) is not None}
        for index in free_ordinals(min(scale.create, CREATE_LIMIT), used):
            intents.append(Create(r.CNCLAIMS, claim_of(view.claimset, spec, index)))
    victims: list[str] = []
    if scale.delete:
        victims = claim_deletion_order(view.victims)[: scale.delete]
        intents.extend(
            Delete(r.CNCLAIMS, namespace, name_of(c), uid=uid_of(c)) for c in owned if name_of(c) in victims
        )
    kept = [c for c in owned if name_of(c) not in victims]
    ready = sum(1 for c in kept if claim_phase(c) in (BOUND, OUTDATED))
    status = {
        "replicas": len(kept),
        "readyReplicas": ready,
        "claims": [
            {k: v for k, v in status_of(c).items() if k != "conditions"} or {"phase": PENDING} for c in kept
        ],
        "labelSelector": pod_selector(name_of(view.claimset)),
    }
    if ready >= spec.replicas:
        condition = SetCondition("Ready", True, "AllClaimsBound", f"{ready}/{spec.replicas} claims bound")
    else:
        condition = SetCondition("Ready", False, "ClaimsPending", f"{ready}/{spec.replicas} claims bound")
    log = (f"scaling in: deleting claims {', '.join(victims)}",) if victims else ()
    return Decision(tuple(intents), status, (condition,), log=log)


class CNClaimSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    def _claims(self, claimset: Mapping[str, Any], spec: CNClaimSetSpec) -> list[Mapping[str, Any]]:
        """The set's claims: labelled with its name, matching its selector, owned by it."""
        name = name_of(claimset)
        written = dump(spec.selector) if spec.selector is not None else None
        selector = written or {"matchLabels": template_labels(spec)}
        matches = selector_from_dict(selector)
        found = self.env.caches.list(r.CNCLAIMS, namespace_of(claimset), {labels.CLAIMSET: name})
        return sorted(
            (c for c in found if is_controlled_by(c, claimset) and matches.matches_object(c)),
            key=lambda c: natural_key(name_of(c)),
        )

    async def read(self, ctx: Context) -> ClaimSetView:
        """Every read a decision needs, once: the set as admitted, its claims, and,
        when it holds more claims than it keeps, what scale-in chooses by (its claims'
        pods and their sessions, asked of MatrixOne)."""
        spec = admit(CNClaimSet, ctx.obj).spec
        if spec is None:
            raise TerminalError("InvalidSpec", "spec: Required value")
        claims = tuple(self._claims(ctx.obj, spec))
        owned = _owned(claims)
        spare = claimset_scale([claim_phase(c) for c in owned], spec.replicas).delete
        victims = tuple(await self._victims(owned)) if spare else ()
        return ClaimSetView(ctx.obj, spec, claims, victims)

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)

    async def finalize(self, ctx: Context) -> bool:
        """The set's claims go first, each giving its pod back."""
        found = self.env.caches.list(r.CNCLAIMS, ctx.namespace, {labels.CLAIMSET: ctx.name})
        claims = [c for c in found if is_controlled_by(c, ctx.obj)]
        return await delete_dependents_first(
            ctx, self.env.client, r.CNCLAIMS, claims, self.env.settings.busy_poll_seconds
        )

    async def _victims(self, claims: Sequence[Mapping[str, Any]]) -> list[ClaimVictim]:
        out = []
        for claim in claims:
            phase = claim_phase(claim)
            pod_name = claim_spec(typed.read(CNClaim, claim)).pod_name
            pod = self.env.caches.get(r.PODS, namespace_of(claim), pod_name) if pod_name else None
            index = instance_index(claim) or 0
            if pod is None or is_deleting(pod):
                out.append(ClaimVictim(name_of(claim), index, phase))
                continue
            out.append(
                ClaimVictim(
                    name_of(claim),
                    index,
                    phase,
                    has_pod=True,
                    scheduled=bool(spec_of(pod).get("nodeName")),
                    pod_phase=str(status_of(pod).get("phase") or ""),
                    ready=podutil.is_ready(pod),
                    deletion_cost=_deletion_cost(pod),
                    sessions=await self._sessions(pod),
                    pod_created=podutil.parse_time(meta_of(pod).creation_timestamp) or 0.0,
                )
            )
        return out

    async def _sessions(self, pod: Mapping[str, Any]) -> int:
        address = annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION)
        if not address:
            return 0
        try:
            return (await self.env.admin.admin(str(address)).cn_load(cnpods.store_uuid(pod))).sessions
        except AdminError:
            return 0


def _deletion_cost(pod: Mapping[str, Any]) -> int:
    value = annotations_of(pod).get(labels.POD_DELETION_COST)
    try:
        return int(str(value)) if value is not None else 0
    except ValueError:
        return 0
