"""Where a MatrixOneCluster's spec says what each of its child sets holds: the field
a user changes instead of the set itself. Shared by the cluster's revert of a direct
change (its Event) and the validating webhook's warning on that change."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = ["CHILD_KINDS", "cluster_field"]

CHILD_KINDS: Final = frozenset({"LogSet", "DNSet", "TNSet", "CNSet", "ProxySet", "WebUI"})
"""The kinds of the sets a MatrixOneCluster creates and keeps to its spec."""


def cluster_field(kind: str, child: str, cluster: str, spec: Mapping[str, Any]) -> str:
    """The field of the cluster's ``spec`` that the set ``child`` (of ``kind``) follows.

    A CN group's set is ``<cluster>-<group>``: the deprecated ``spec.tp`` and
    ``spec.ap`` when the cluster still uses them, ``spec.cnGroups[name=<group>]``
    otherwise; the TN set follows ``spec.tn``, or ``spec.dn`` on a cluster that
    uses the older name."""
    if kind == "LogSet":
        return "spec.logService"
    if kind in ("DNSet", "TNSet"):
        return "spec.tn" if spec.get("tn") else "spec.dn"
    if kind == "CNSet":
        group = child[len(cluster) + 1 :] if child.startswith(f"{cluster}-") else child
        legacy = group in ("tp", "ap") and spec.get(group)
        return f"spec.{group}" if legacy else f"spec.cnGroups[name={group}]"
    if kind == "ProxySet":
        return "spec.proxy"
    if kind == "WebUI":
        return "spec.webui"
    raise KeyError(kind)
