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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.errors import AlreadyExists, Conflict
from mo_operator.kube.meta.objects import mapping_at

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.draft import Drafting
from ..framework.env import Env
from ..framework.meta import is_deleting, name_of
from ..framework.unseen import Applied, Key
from ..framework.writes import Call, Intent, Patch, Step, applies
from . import volumes

Obj = dict[str, Any]


def storage_classes(env: Env) -> dict[str, Mapping[str, Any]]:
    return {name_of(c): c for c in env.caches.list(r.STORAGECLASSES)}


def stateful_intents(
    draft: Drafting,
    desired: Sequence[tuple[Resource, Obj]],
    cached: Callable[[Resource, str], Mapping[str, Any] | None],
    pvcs: Sequence[Mapping[str, Any]],
    classes: Mapping[str, Mapping[str, Any]],
    applied: Mapping[Key, Applied],
    replace: Callable[[Obj, str], Step],
) -> list[Intent]:
    """The writes of a stateful set's ``desired`` objects, growing its volumes: the
    claim patches first, the StatefulSet (asking the sizes its claims can reach) last,
    so that what its pods mount exists before it; replaced rather than updated when its
    claim templates change, left alone while it is being deleted. Decided from what is
    ``cached`` (by resource and name), the
    set's claims ``pvcs``, the StorageClasses by name and our applies not seen yet;
    the ``VolumeExpansion`` condition goes into ``draft``; ``replace`` makes the step
    replacing the StatefulSet (the desired one, the uid of the one it replaces)."""
    index = next(i for i, (res, _) in enumerate(desired) if res is r.STATEFULSETS)
    sts = desired[index][1]
    name = name_of(sts)
    templates = sts["spec"].get("volumeClaimTemplates") or []
    have = cached(r.STATEFULSETS, name)
    current = volumes.template_sizes(mapping_at(have, "spec").get("volumeClaimTemplates") or ())
    claims = {
        str(t["metadata"]["name"]): [
            c for c in pvcs if _of_template(name_of(c), str(t["metadata"]["name"]), name)
        ]
        for t in templates
    }
    expansion = volumes.plan_expansion(volumes.template_sizes(templates), current, claims, classes)
    intents: list[Intent] = _claim_patches(draft.namespace, expansion)
    report(draft, expansion)
    if templates:
        spec = {
            **sts["spec"],
            "volumeClaimTemplates": volumes.with_sizes(templates, expansion.template_sizes),
        }
        sts = stamped({**sts, "spec": spec})
    intents += applies([d for i, d in enumerate(desired) if i != index], cached, applied)
    if have is not None and is_deleting(have):
        return intents  # being replaced: its deletion brings us back to create the new one
    if have is not None and volumes.must_replace(have, sts):
        what = f"replace StatefulSet {name} (new volume claim templates, pods kept)"
        return [*intents, Call(replace(sts, str(have["metadata"].get("uid") or "")), what)]
    return intents + applies([(r.STATEFULSETS, sts)], cached, applied)


def claim_growth(
    draft: Drafting, size: str, claims: Sequence[Mapping[str, Any]], classes: Mapping[str, Mapping[str, Any]]
) -> list[Intent]:
    """Grow claims made directly (a CN pod's cache volume) to ``size``: patches and the
    condition only, since no workload template holds a size."""
    template = "cache"
    expansion = volumes.plan_expansion({template: size}, {}, {template: claims}, classes)
    report(draft, expansion)
    return _claim_patches(draft.namespace, expansion)


def report(draft: Drafting, expansion: volumes.Expansion) -> None:
    """Set the ``VolumeExpansion`` condition (once a volume ever had to grow)."""
    reported = draft.condition(volumes.CONDITION) is not None
    found = volumes.condition(expansion, reported=reported)
    if found is not None:
        draft.set_condition(volumes.CONDITION, *found)


def _of_template(claim: str, template: str, workload: str) -> bool:
    """Claim ``<template>-<statefulset>-<ordinal>``, as the StatefulSet controller names them."""
    prefix = f"{template}-{workload}-"
    return claim.startswith(prefix) and claim[len(prefix) :].isdigit()


def _claim_patches(namespace: str, expansion: volumes.Expansion) -> list[Intent]:
    return [
        Patch(
            r.PVCS,
            namespace,
            claim,
            {"spec": {"resources": {"requests": {"storage": size}}}},
            what=f"grow PersistentVolumeClaim {claim} to {size}",
        )
        for claim, size in expansion.patches
    ]


def replace_step(ctx: Context, client: Client, sts: Obj, uid: str) -> Step:
    """Replace StatefulSet ``sts`` (the one of ``uid``): delete it orphaning its pods
    and claims, then create it anew; an Event says so once it is deleted."""
    name = name_of(sts)

    async def step() -> None:
        try:
            deleted = await client.delete(
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
            await client.create(r.STATEFULSETS, sts)

    return step
