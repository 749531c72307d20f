"""The CN pods' cache volume claims: made for each pod that mounts one, grown with
``cacheVolume.size``.

A CN pod has no StatefulSet to make its claim from a template, so the set makes
it, after the pod (a claim owned by its pod goes with it), and grows it in place
(patches only: no workload template holds its size).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.meta.objects import is_deleting, mapping_at, name_of, namespace_of, spec_of
from mo_operator.matrixone import layout

from ..framework import resources as r
from ..framework.draft import Drafting
from ..framework.writes import Create, Intent
from ..specs.podtemplate import canonical_size
from ..steps.expansion import claim_growth
from . import pods as cnpods
from .observed import CNSetView, Desired


def claims_to_mount(pods: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(namespace, claim name) of each live pod's cache volume claim it mounts."""
    out = []
    for pod in pods:
        claim_name = cnpods.cache_claim_name(name_of(pod))
        if not is_deleting(pod) and _mounts(pod, claim_name):
            out.append((namespace_of(pod), claim_name))
    return out


def missing_claims(view: CNSetView, want: Desired) -> list[Create]:
    """A claim for each pod that mounts one and has none yet (when ``cacheVolume`` is set)."""
    volume = view.spec.cache_volume
    if not volume:
        return []
    size = canonical_size(volume.size)
    reuse = bool(view.spec.reuse_pvc)
    return [
        Create(
            r.PVCS,
            cnpods.cache_claim(want.obj, pod, size, volume.storage_class_name, want.obj_labels, reuse=reuse),
        )
        for pod in view.pods
        if not is_deleting(pod)
        and _mounts(pod, claim := cnpods.cache_claim_name(name_of(pod)))
        and claim not in view.cache_claims
    ]


def _mounts(pod: Mapping[str, Any], claim_name: str) -> bool:
    """Whether ``pod`` mounts the claim ``claim_name``."""
    return any(
        mapping_at(v, "persistentVolumeClaim").get("claimName") == claim_name
        for v in spec_of(pod).get("volumes") or ()
    )


def grown_claims(draft: Drafting, view: CNSetView) -> list[Intent]:
    """The patches growing the existing claims to ``cacheVolume.size`` (new pods get
    claims of that size anyway): the shared expansion step, with its ``VolumeExpansion``
    condition."""
    volume = view.spec.cache_volume
    if not volume:
        return []
    prefix = f"{layout.DATA_VOLUME}-"
    claims = [c for c in view.cached.pvcs if name_of(c).startswith(prefix)]
    return claim_growth(draft, str(volume.size), claims, view.cached.classes)
