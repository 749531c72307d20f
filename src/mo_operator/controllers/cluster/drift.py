"""A child set changed on the set itself (``kubectl scale cnset``, ``kubectl edit
logset``) while its MatrixOneCluster did not change: the cluster sets it back, and
says so in a Normal Event naming the cluster's field to change instead. The change
is told apart from the cluster's own by the applied hash: the cluster's last apply
left it on the child, and only a change of the cluster's spec changes it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api import ownership
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.kube.meta.objects import annotations_of, spec_of

from ..framework.desired import APPLIED_HASH, matches
from .children import Child

REVERTED = "ChildReverted"
"""Event reason: a direct change of a child set is set back to the cluster's spec."""


def drifted_fields(want: Mapping[str, Any], cached: Mapping[str, Any] | None) -> list[str]:
    """The spec fields of ``want`` (stamped) the child no longer holds though the
    cluster's spec for it did not change: someone changed the set itself."""
    if cached is None or annotations_of(want).get(APPLIED_HASH) != annotations_of(cached).get(APPLIED_HASH):
        return []
    spec, have = spec_of(want), spec_of(cached)
    return sorted(k for k, v in spec.items() if not matches({k: v}, have))


def cluster_field(child: Child, cluster: str, spec: MatrixOneClusterSpec) -> str:
    """Where the cluster's spec says what this child holds (the admission webhook's
    words, which read the stored spec as JSON)."""
    return ownership.cluster_field(child.resource.kind, child.name, cluster, dump(spec))


def reverted_message(child: Child, cluster: str, spec: MatrixOneClusterSpec, fields: list[str]) -> str:
    at = cluster_field(child, cluster, spec)
    changed = ", ".join(f"spec.{f}" for f in fields)
    instead = ", ".join(f"{at}.{f}" for f in fields)
    return (
        f"{child.label}: {changed} changed on the set itself is set back to what MatrixOneCluster "
        f"{cluster} says: change {instead} of the MatrixOneCluster instead"
    )
