"""Whether the running operator may take a set over from Kruise by itself.

Nothing is taken over by surprise: the operator acts only on a set opted
in, by the operator's ``--adopt-kruise`` flag (every set it watches), or by
the annotation ``matrixorigin.io/adopt: "kruise"`` on the set or on the
MatrixOneCluster (or, for a pool's set, the CNPool) that owns it. Without either, ``mo-operator adopt`` is the
way, and the set's condition says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.meta.objects import meta_of

from ..framework import resources as r
from ..framework.env import Env

ADOPT_ANNOTATION = "matrixorigin.io/adopt"
"""On a MatrixOneCluster or a set: ``kruise`` lets the running operator take it over."""
ADOPT_KRUISE = "kruise"
FLAG = "--adopt-kruise"
OWNERS = {res.kind: res for res in (r.MATRIXONE_CLUSTERS, r.CNPOOLS)}
"""The owners whose annotation opts in the sets they own: a cluster's, a pool's."""


def opted_in(env: Env, obj: Mapping[str, Any]) -> bool:
    """``obj`` (a set) may be taken over by the running operator."""
    if env.settings.adopt_kruise or _annotated(obj):
        return True
    meta = meta_of(obj)
    owner = meta.controller
    res = OWNERS.get(str((owner or {}).get("kind")))
    if owner is None or res is None:
        return False
    found = env.caches.get(res, meta.namespace, str(owner.get("name")))
    return found is not None and _annotated(found)


def _annotated(obj: Mapping[str, Any]) -> bool:
    return meta_of(obj).annotations.get(ADOPT_ANNOTATION) == ADOPT_KRUISE


def how_to_opt_in(namespace: str) -> str:
    return (
        f'annotate the MatrixOneCluster, CNPool or set {ADOPT_ANNOTATION}="{ADOPT_KRUISE}", '
        f"start the operator with {FLAG}, or run `mo-operator adopt -n {namespace}`"
    )
