"""Growing a set's volumes on the cluster (the decisions are in ``volumes.py``):
claims and StorageClasses come from the caches, the claim patches and the
StatefulSet's replacement go into the plan, and the ``VolumeExpansion``
condition says how far it got.

Replacing a StatefulSet is two writes that must converge whatever the cache
shows and wherever the operator is killed: the delete names the uid judged (a
StatefulSet already replaced answers 409 and is left alone; one already gone
answers 404) and orphans the pods and claims; the create of the new one is
skipped while the old one still exists (its orphaning finishes, its deletion
wakes the set and the create is asked again). A StatefulSet being deleted is
never written to.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.kube.meta.errors import AlreadyExists, Conflict
from mo_operator.kube.meta.objects import mapping_at

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.env import Env
from ..framework.meta import is_deleting, name_of
from ..framework.writes import Writes
from . import volumes

Obj = dict[str, Any]


def storage_classes(env: Env) -> dict[str, Mapping[str, Any]]:
    return {name_of(c): c for c in env.caches.list(r.STORAGECLASSES)}


def sync_stateful(ctx: Context, env: Env, desired: Sequence[tuple[Resource, Obj]], plan: Writes) -> None:
    """``plan.sync`` of a stateful set's objects, growing its volumes: the claim
    patches first, the StatefulSet (asking the sizes its claims can reach) last, so
    that what its pods mount exists before it; replaced rather than updated when
    its claim templates change, and left alone while it is being deleted."""
    index = next(i for i, (res, _) in enumerate(desired) if res is r.STATEFULSETS)
    sts = desired[index][1]
    namespace, name = ctx.namespace, name_of(sts)
    templates = sts["spec"].get("volumeClaimTemplates") or []
    cached = env.caches.get(r.STATEFULSETS, namespace, name)
    current = volumes.template_sizes(mapping_at(cached, "spec").get("volumeClaimTemplates") or ())
    pvcs = env.caches.list(r.PVCS, namespace, sts["spec"]["selector"]["matchLabels"])
    claims = {
        str(t["metadata"]["name"]): [
            c for c in pvcs if _of_template(name_of(c), str(t["metadata"]["name"]), name)
        ]
        for t in templates
    }
    expansion = volumes.plan_expansion(
        volumes.template_sizes(templates), current, claims, storage_classes(env)
    )
    _patch_claims(ctx, expansion, plan)
    report(ctx, expansion)
    if templates:
        spec = {
            **sts["spec"],
            "volumeClaimTemplates": volumes.with_sizes(templates, expansion.template_sizes),
        }
        sts = stamped({**sts, "spec": spec})
    plan.sync(env, [d for i, d in enumerate(desired) if i != index])
    if cached is not None and is_deleting(cached):
        return  # being replaced: its deletion brings us back to create the new one
    if cached is not None and volumes.must_replace(cached, sts):
        _replace(ctx, plan, sts, str(cached["metadata"].get("uid") or ""))
        return
    plan.sync(env, [(r.STATEFULSETS, sts)])


def expand_claims(
    ctx: Context, env: Env, size: str, claims: Sequence[Mapping[str, Any]], plan: Writes
) -> None:
    """Grow claims made directly (a CN pod's cache volume) to ``size``: patches and the
    condition only, since no workload template holds a size."""
    template = "cache"
    expansion = volumes.plan_expansion({template: size}, {}, {template: claims}, storage_classes(env))
    _patch_claims(ctx, expansion, plan)
    report(ctx, expansion)


def report(ctx: Context, expansion: volumes.Expansion) -> None:
    """Set the ``VolumeExpansion`` condition (once a volume ever had to grow)."""
    reported = get_condition(ctx.status.get("conditions") or (), volumes.CONDITION) is not None
    found = volumes.condition(expansion, reported=reported)
    if found is not None:
        ctx.set_condition(volumes.CONDITION, *found)


def _of_template(claim: str, template: str, workload: str) -> bool:
    """Claim ``<template>-<statefulset>-<ordinal>``, as the StatefulSet controller names them."""
    prefix = f"{template}-{workload}-"
    return claim.startswith(prefix) and claim[len(prefix) :].isdigit()


def _patch_claims(ctx: Context, expansion: volumes.Expansion, plan: Writes) -> None:
    for claim, size in expansion.patches:
        plan.patch(
            r.PVCS,
            ctx.namespace,
            claim,
            {"spec": {"resources": {"requests": {"storage": size}}}},
            what=f"grow PersistentVolumeClaim {claim} to {size}",
        )


def _replace(ctx: Context, plan: Writes, sts: Obj, uid: str) -> None:
    name = name_of(sts)

    async def step() -> None:
        try:
            deleted = await plan.client.delete(
                r.STATEFULSETS,
                name,
                ctx.namespace or None,
                uid=uid,
                propagation_policy="Orphan",
                missing_ok=True,
            )
        except Conflict:
            deleted = None  # another uid holds the name: already replaced
        if deleted is not None:
            ctx.event(
                "Normal",
                "StatefulSetReplaced",
                f"StatefulSet {name} replaced to change its volume claim templates; its pods and "
                "volumes are kept",
            )
        # AlreadyExists: the old one is still orphaning its pods; its deletion brings us back
        with contextlib.suppress(AlreadyExists):
            await plan.client.create(r.STATEFULSETS, sts)

    plan.call(f"replace StatefulSet {name} (new volume claim templates, pods kept)", step)
