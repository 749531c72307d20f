"""The CN pods' cache volume claims: made for each pod that mounts one, grown with
``cacheVolume.size``.

A CN pod has no StatefulSet to make its claim from a template, so the set makes
it, after the pod (a claim owned by its pod goes with it), and grows it in place
(patches only: no workload template holds its size).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.common import Volume
from mo_operator.kube.meta.objects import is_deleting, mapping_at, name_of, namespace_of, spec_of
from mo_operator.matrixone import layout

from ..framework import resources as r
from ..framework.env import Env
from ..specs.podtemplate import canonical_size
from ..steps.expansion import expand_claims
from . import pods as cnpods
from .observed import Desired, Observed


def sync_cache_claims(env: Env, seen: Observed, want: Desired) -> None:
    """Make the missing claims, then grow the existing ones (when ``cacheVolume`` is set)."""
    volume = seen.spec.cache_volume
    if not volume:
        return
    _make_missing(env, seen, want, volume)
    _grow(env, seen, want, str(volume.size))


def _make_missing(env: Env, seen: Observed, want: Desired, volume: Volume) -> None:
    """A claim for each pod that mounts one and has none yet."""
    size = canonical_size(volume.size)
    reuse = bool(seen.spec.reuse_pvc)
    for pod in seen.pods:
        if is_deleting(pod):
            continue
        claim_name = cnpods.cache_claim_name(name_of(pod))
        if _mounts(pod, claim_name) and env.caches.get(r.PVCS, namespace_of(pod), claim_name) is None:
            seen.plan.create(
                cnpods.cache_claim(
                    want.obj, pod, size, volume.storage_class_name, want.obj_labels, reuse=reuse
                ),
                r.PVCS,
            )


def _mounts(pod: Mapping[str, Any], claim_name: str) -> bool:
    """Whether ``pod`` mounts the claim ``claim_name``."""
    return any(
        mapping_at(v, "persistentVolumeClaim").get("claimName") == claim_name
        for v in spec_of(pod).get("volumes") or ()
    )


def _grow(env: Env, seen: Observed, want: Desired, size: str) -> None:
    """Grow the existing claims to ``size`` (new pods get claims of that size anyway)."""
    prefix = f"{layout.DATA_VOLUME}-"
    claims = [
        c for c in env.caches.list(r.PVCS, seen.ctx.namespace, want.selector) if name_of(c).startswith(prefix)
    ]
    expand_claims(seen.ctx, env, size, claims, seen.plan)
