"""What wakes the pool controllers: pods and claims mapped to the objects that
decide about them (pods are owned by CNSets, so the ``Owns`` wiring alone
would never reach a pool or a claim)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mo_operator.api.cnclaim import CNClaim, CNClaimSpec
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.meta.objects import labels_of
from mo_operator.matrixone import labels

from ..framework import resources as r
from ..framework import typed
from ..framework.env import Caches
from ..framework.meta import is_deleting, name_of, namespace_of

Mapper = Callable[[Mapping[str, Any]], Iterable[Request]]


def pool_of_pod(pod: Mapping[str, Any]) -> Iterable[Request]:
    """A pool's pod to its pool (phases and counts changed)."""
    pool = labels_of(pod).get(labels.POOL_NAME)
    return [Request(namespace_of(pod), pool)] if pool else []


def _spec(claim: Mapping[str, Any]) -> CNClaimSpec | None:
    """A claim's spec as admitted (None: it has none, or it is invalid)."""
    found = typed.read(CNClaim, claim)
    return found.spec if found is not None else None


def pool_of_claim(claim: Mapping[str, Any]) -> Iterable[Request]:
    """A claim to the pool it is nominated to (its pending claims count)."""
    spec = _spec(claim)
    pool = (spec.pool_name if spec is not None else None) or labels_of(claim).get(labels.POOL_NAME)
    return [Request(namespace_of(claim), str(pool))] if pool else []


def _waiting(caches: Caches, namespace: str) -> list[Request]:
    out = []
    for claim in caches.list(r.CNCLAIMS, namespace):
        spec = _spec(claim)
        if not (spec is not None and spec.pod_name) and not is_deleting(claim):
            out.append(Request(namespace, name_of(claim)))
    return out


def _migrating_from(caches: Caches, namespace: str, pod: str) -> list[Request]:
    out = []
    for claim in caches.list(r.CNCLAIMS, namespace):
        spec = _spec(claim)
        source = spec.source_pod if spec is not None else None
        if source is not None and source.pod_name == pod:
            out.append(Request(namespace, name_of(claim)))
    return out


def claims_of_pod(caches: Caches) -> Mapper:
    """A pool pod to the claim that holds it, or, when it is Idle, to every claim of
    its namespace waiting for a pod; and to the claims migrating away from it (a
    reclaimed source no longer names its claim, whose migration ends when it is Idle)."""

    def mapper(pod: Mapping[str, Any]) -> Iterable[Request]:
        pod_labels = labels_of(pod)
        if labels.POOL_PHASE not in pod_labels:
            return []
        out = []
        holder = pod_labels.get(labels.POOL_CLAIMED_BY)
        if holder:
            out.append(Request(namespace_of(pod), holder))
        elif pod_labels.get(labels.POOL_PHASE) == labels.POOL_PHASE_IDLE:
            out.extend(_waiting(caches, namespace_of(pod)))
        out.extend(q for q in _migrating_from(caches, namespace_of(pod), name_of(pod)) if q not in out)
        return out

    return mapper


def claims_waiting_in_namespace(caches: Caches) -> Mapper:
    """A pool (new, or changed) to the claims of its namespace waiting for a pod."""

    def mapper(pool: Mapping[str, Any]) -> Iterable[Request]:
        return _waiting(caches, namespace_of(pool))

    return mapper
