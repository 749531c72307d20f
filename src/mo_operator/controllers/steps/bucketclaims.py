"""The LogSet's side of a BucketClaim: claim the S3 path before anything writes to it,
keep the claim in step while bound, release or delete it on deletion.

``claim_decision`` is pure: given the LogSet and every claim of its path (from the
cache, any namespace), it says whether the LogSet holds the path (and what to write on
its claim), must create or bind a claim first, or is refused and why. The LogSet runs
no pod before it holds its path: two clusters writing under one prefix would corrupt
each other, and a path whose claim is being deleted is about to be emptied.

The claim is deliberately not owned by the LogSet (the one exception to "every object
we create has an owner reference"): with ``s3RetentionPolicy: Retain`` it must outlive
the LogSet, as a StatefulSet's PersistentVolumeClaims outlive it under ``Retain``; the
LogSet's finalizer releases or deletes it explicitly instead.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.controller.controller import Request
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.objects import (
    is_deleting,
    labels_of,
    mapping_at,
    meta_of,
    name_of,
    namespace_of,
    spec_of,
)
from mo_operator.matrixone import buckets, labels
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.env import Caches
from ..framework.meta import set_labels

Obj = dict[str, Any]

SCHEDULING_FIELDS = (
    "nodeSelector",
    "tolerations",
    "affinity",
    "imagePullSecrets",
    "serviceAccountName",
    "securityContext",
    "priorityClassName",
    "runtimeClassName",
    "dnsConfig",
    "hostAliases",
)
"""What the cleanup Job's pod takes from the LogSet's pods: where it may run and as whom."""

REFUSED_IN_USE = "BucketInUse"
REFUSED_DELETING = "BucketDeleting"
REFUSED_ELSEWHERE = "BucketReleasedElsewhere"


@dataclass(frozen=True)
class ClaimDecision:
    """What a LogSet must do about the claim of its S3 path."""

    holds: bool = False
    """The LogSet holds the path: its workload may run."""
    create: Obj | None = None
    """A claim to create (the LogSet holds no claim yet)."""
    patch: Obj | None = None
    """A merge patch of ``claim`` (binding it, or keeping it in step); carries its resourceVersion."""
    claim: Mapping[str, Any] | None = None
    """The claim the patch is for (or the claim the LogSet holds)."""
    refused: tuple[str, str] | None = None
    """``(reason, message)``: another LogSet holds the path, or its claim is being deleted."""


def s3_of(spec: Mapping[str, Any]) -> Mapping[str, Any] | None:
    s3 = mapping_at(spec, "sharedStorage").get("s3")
    return s3 if isinstance(s3, Mapping) else None


def claims_of_path(caches: Caches, s3: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """Every cached claim of the path ``s3`` names, in any namespace (a lookup: the
    caches index claims by this label)."""
    return caches.list(r.BUCKETCLAIMS, None, {buckets.UNIQUE_ID: buckets.unique_id(s3)})


def retention_policy(spec: Mapping[str, Any]) -> str:
    """The S3 retention policy a LogSet spec asks for, defaulted as the defaulting webhook
    does (it and pvcRetentionPolicy copy each other; Retain when neither is set)."""
    s3 = s3_of(spec) or {}
    policy = s3.get("s3RetentionPolicy") or spec.get("pvcRetentionPolicy") or buckets.RETAIN
    return buckets.DELETE if policy == buckets.DELETE else buckets.RETAIN


def scheduling_template(pod_template: Mapping[str, Any]) -> Obj:
    """The part of the LogSet's pod template the cleanup Job runs with (``spec.logSetSpec``)."""
    spec = spec_of(pod_template)
    kept = {k: copy.deepcopy(spec[k]) for k in SCHEDULING_FIELDS if spec.get(k) not in (None, [], {})}
    return {"spec": kept} if kept else {}


def claim_labels(logset: Mapping[str, Any], s3: Mapping[str, Any]) -> dict[str, str]:
    """A claim's labels: its LogSet's (and cluster's), and the path's unique id."""
    return {**set_labels(Component.LOG, logset), buckets.UNIQUE_ID: buckets.unique_id(s3)}


def new_claim(logset: Mapping[str, Any], s3: Mapping[str, Any], template: Mapping[str, Any]) -> Obj:
    """The claim a LogSet creates for its path, bound to it from the start, with
    upstream's data guard finalizer (the BucketClaim controller removes it when done)
    and the BucketClaim controller's own, so that controller need not patch it on."""
    meta = meta_of(logset)
    namespace, name = meta.namespace, meta.name
    return {
        "apiVersion": f"{r.BUCKETCLAIMS.group}/{r.BUCKETCLAIMS.version}",
        "kind": "BucketClaim",
        "metadata": {
            "name": buckets.claim_name(meta.uid),
            "namespace": namespace,
            "labels": claim_labels(logset, s3),
            "annotations": {buckets.BIND_TO: buckets.bind_mark(namespace, name)},
            "finalizers": [labels.BUCKET_DATA_FINALIZER, labels.finalizer("BucketClaim")],
        },
        "spec": {"s3": copy.deepcopy(dict(s3)), "logSetSpec": copy.deepcopy(dict(template))},
    }


def _sync_patch(
    claim: Mapping[str, Any],
    logset: Mapping[str, Any],
    s3: Mapping[str, Any],
    template: Mapping[str, Any],
    *,
    written: bool,
) -> Obj | None:
    """The merge patch that binds ``claim`` to ``logset`` and keeps it in step; None when it is."""
    meta = meta_of(claim)
    mark = buckets.bind_mark(namespace_of(logset), name_of(logset))
    annotations: Obj = {}
    have = meta.annotations
    if have.get(buckets.BIND_TO) != mark:
        annotations[buckets.BIND_TO] = mark
    if written and not buckets.ever_written(claim):
        annotations[buckets.ANY_INSTANCE_RUNNING] = "true"
    want_labels = claim_labels(logset, s3)
    have_labels = meta.labels
    new_labels: dict[str, str | None] = {k: v for k, v in want_labels.items() if have_labels.get(k) != v}
    if labels.CLUSTER in have_labels and labels.CLUSTER not in want_labels:
        new_labels[labels.CLUSTER] = None
    new_spec = merge_diff(spec_of(claim), {"s3": s3, "logSetSpec": template}) or {}
    finalizers = list(meta.finalizers)
    guarded = labels.BUCKET_DATA_FINALIZER in finalizers
    if not (annotations or new_labels or new_spec) and guarded:
        return None
    patch_meta: Obj = {"resourceVersion": meta.raw.get("resourceVersion")}
    if not guarded:  # upstream's data guard, on claims made before we added it
        patch_meta["finalizers"] = [*finalizers, labels.BUCKET_DATA_FINALIZER]
    if annotations:
        patch_meta["annotations"] = annotations
    if new_labels:
        patch_meta["labels"] = new_labels
    patch: Obj = {"metadata": patch_meta}
    if new_spec:
        patch["spec"] = new_spec
    return patch


def merge_diff(have: Any, want: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns ``have`` into ``want``: maps compared
    key by key (a key ``want`` lacks becomes null), anything else replaced whole. None
    when nothing differs."""
    if isinstance(want, Mapping) and isinstance(have, Mapping):
        out: Obj = {k: None for k in have if k not in want}
        for key, value in want.items():
            if key not in have:
                out[key] = copy.deepcopy(value)
                continue
            sub = merge_diff(have[key], value)
            if sub is not None:
                out[key] = sub
        return out or None
    return None if have == want else copy.deepcopy(want)


def _describe(claim: Mapping[str, Any]) -> str:
    return f"{namespace_of(claim)}/{name_of(claim)}"


def claim_decision(
    logset: Mapping[str, Any],
    s3: Mapping[str, Any],
    claims: Sequence[Mapping[str, Any]],
    template: Mapping[str, Any],
    *,
    written: bool,
) -> ClaimDecision:
    """What LogSet ``logset`` (admitted S3 provider ``s3``) does about its path's ``claims``.

    ``template`` is the cleanup Job's pod template part (``scheduling_template``);
    ``written``: the LogSet's HAKeeper has bootstrapped, so data may exist.
    """
    namespace = namespace_of(logset)
    me = buckets.bind_mark(namespace, name_of(logset))
    live = [c for c in claims if not is_deleting(c)]
    deleting = [c for c in claims if is_deleting(c)]
    mine = [c for c in live if buckets.binding(c) == me]
    others = [c for c in live if buckets.binding(c) not in (None, me)]
    if mine or others:
        held = buckets.holder([*mine, *others])
        assert held is not None
        if buckets.binding(held) != me:
            return ClaimDecision(
                refused=(
                    REFUSED_IN_USE,
                    f"claimed bucket {_describe(held)} already bind to {buckets.binding(held)}",
                )
            )
        patch = _sync_patch(held, logset, s3, template, written=written)
        return ClaimDecision(holds=True, patch=patch, claim=held)
    if any(buckets.binding(c) == me for c in deleting):
        # someone deleted the claim of a running LogSet: like a PVC in use, the claim
        # waits (InUse) for the LogSet to go, and the LogSet keeps running meanwhile
        return ClaimDecision(holds=True, claim=next(c for c in deleting if buckets.binding(c) == me))
    if deleting:
        held = buckets.holder(deleting)
        assert held is not None
        return ClaimDecision(
            refused=(
                REFUSED_DELETING,
                f"claimed bucket {_describe(held)} state is deleting: waiting for it to go before using "
                f"s3://{s3.get('path')}",
            )
        )
    released = [c for c in live if namespace_of(c) == namespace]
    if released:
        held = buckets.holder(released)
        assert held is not None
        patch = _sync_patch(held, logset, s3, template, written=written)
        return ClaimDecision(patch=patch, claim=held)
    if live:
        held = buckets.holder(live)
        assert held is not None
        return ClaimDecision(
            refused=(
                REFUSED_ELSEWHERE,
                f"claimed bucket {_describe(held)} is Released in namespace {namespace_of(held)}: a LogSet "
                "can only take a released claim of its own namespace (delete that claim to free the path)",
            )
        )
    return ClaimDecision(create=new_claim(logset, s3, template))


def claims_to_release(
    caches: Caches, logset: Mapping[str, Any], s3: Mapping[str, Any], policy: str
) -> list[Mapping[str, Any]]:
    """The claims a deleted ``logset`` releases: those of its path bound to it (normally
    one) and, under Delete, one it released but did not get to delete (a failed attempt)."""
    namespace, name = namespace_of(logset), name_of(logset)
    me = buckets.bind_mark(namespace, name)
    out = []
    for c in claims_of_path(caches, s3):
        if is_deleting(c):
            continue
        bound = buckets.binding(c)
        last = labels_of(c)
        if bound == me or (
            bound is None
            and policy == buckets.DELETE
            and buckets.reclaim_policy(c) == buckets.DELETE
            and namespace_of(c) == namespace
            and last.get(labels.INSTANCE) == name
            and last.get(labels.COMPONENT) == Component.LOG.kind
        ):
            out.append(c)
    return out


def release_patch(claim: Mapping[str, Any], policy: str, *, written: bool = False) -> Obj:
    """The merge patch that unbinds ``claim`` and records the LogSet's reclaim policy on it,
    conditional on the claim as seen (a claim another LogSet took meanwhile is not ours to
    release); with ``written``, also that MatrixOne wrote to the path (the LogSet may not
    have recorded it before it was deleted)."""
    meta = claim["metadata"]
    annotations: Obj = {buckets.BIND_TO: ""}
    if written and not buckets.ever_written(claim):
        annotations[buckets.ANY_INSTANCE_RUNNING] = "true"
    patch: Obj = {"metadata": {"resourceVersion": meta["resourceVersion"], "annotations": annotations}}
    s3 = spec_of(claim).get("s3") or {}
    if s3.get("s3RetentionPolicy") != policy:
        patch["spec"] = {"s3": {"s3RetentionPolicy": policy}}
    return patch


async def release(client: Client, claim: Mapping[str, Any], policy: str, *, written: bool = False) -> None:
    """Release ``claim`` (Retain) or release and delete it (Delete).

    The delete is conditional on the resourceVersion the release produced: between the
    two, another LogSet could only take the claim by writing it, which makes the delete
    fail (and the claim stays with its new holder, data and all)."""
    namespace, name = namespace_of(claim), name_of(claim)
    patch = release_patch(claim, policy, written=written)
    released = await client.patch(r.BUCKETCLAIMS, name, patch, namespace or None)
    if policy == buckets.DELETE:
        await client.delete(
            r.BUCKETCLAIMS,
            name,
            namespace or None,
            resource_version=str(released["metadata"]["resourceVersion"]),
            missing_ok=True,
        )


# ------------------------------------------------------------------- wiring
def logsets_of_claim(caches: Caches) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a claim to the LogSets it matters to: the one it is bound to and, once it is
    released or being deleted, every LogSet using its path (a refused LogSet waits for
    just that)."""

    def mapper(claim: Mapping[str, Any]) -> Iterable[Request]:
        out: set[Request] = set()
        bound = buckets.binding(claim)
        if bound and "/" in bound:
            ns, name = bound.split("/", 1)
            out.add(Request(ns, name))
        uid = labels_of(claim).get(buckets.UNIQUE_ID)
        if uid and (bound is None or is_deleting(claim)):
            for logset in caches.list(r.LOGSETS):
                s3 = s3_of(spec_of(logset))
                if s3 is not None and buckets.unique_id(s3) == uid:
                    out.add(Request(namespace_of(logset), name_of(logset)))
        return sorted(out, key=lambda q: (q.namespace, q.name))

    return mapper


def claims_of_logset(caches: Caches) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a LogSet to the claims bound to it (so a claim notices its LogSet is gone)."""

    def mapper(logset: Mapping[str, Any]) -> Iterable[Request]:
        namespace = namespace_of(logset)
        mark = buckets.bind_mark(namespace, name_of(logset))
        return [
            Request(namespace_of(c), name_of(c))
            for c in caches.list(r.BUCKETCLAIMS, namespace)
            if buckets.binding(c) == mark
        ]

    return mapper
