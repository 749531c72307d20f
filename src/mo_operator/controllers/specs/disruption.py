"""The PodDisruptionBudget of each MatrixOne set: how many of its pods a node drain, a
managed node-pool upgrade or anything else using the Eviction API may take down at once.

Each log, TN, CN and proxy set owns one, named like its workload (``<ls>-log``,
``<tn>-dn``, ``<cn>-cn``, ``<p>-proxy``) and selecting its pods, made with the set
and collected with it. Its bound is the set's ``podDisruptionBudget`` when that gives
one, else the default:

- a log service may lose, at once, what its Raft groups can lose and keep a majority:
  ``(n - 1) // 2`` of ``n``, ``n`` the smaller of its replicas and of each log shard's
  replicas (``logShardReplicas``): 1 of 3, 2 of 5, and 0 of a single store, which no
  drain may evict (the log service would stop);
- a TN, CN group or proxy set may lose one pod at a time (``maxUnavailable: 1``), as
  their rolls do.

``maxUnavailable`` keeps its meaning when the set scales (the disruption controller
counts the set's desired replicas, not the pods that happen to exist). ``enabled:
false`` removes the budget. A CNSet that a CNPool runs (``Pooling``) has none: its idle
pods serve no one, and its bound pods belong to their claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.cnset import CNSetSpec
from mo_operator.api.common import DisruptionBudget, PodSet
from mo_operator.api.logset import LogSetSpec
from mo_operator.api.validation.capacity import quorum_safe
from mo_operator.kube.meta.intstr import scaled_value
from mo_operator.kube.meta.objects import annotations_of
from mo_operator.matrixone import labels, names, reserved
from mo_operator.matrixone.bootstrap import default_log_shard_replicas
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.meta import (
    child_metadata,
    is_controlled_by,
    is_deleting,
    name_of,
    namespace_of,
    set_labels,
    uid_of,
)
from ..framework.writes import Delete

Obj = dict[str, Any]

BUDGETED = frozenset({Component.LOG, Component.TN, Component.CN, Component.PROXY})
"""The components whose sets keep a PodDisruptionBudget."""
DEFAULT_MAX_UNAVAILABLE = 1
"""TN, CN and proxy sets: one pod at a time, as a roll takes them."""
_NO_BUDGET = DisruptionBudget()


def default_max_unavailable(component: Component, spec: PodSet) -> int:
    """The bound of a set whose spec gives none. For the log service, what every log shard
    can lose and keep its quorum (a drain may take down stores holding replicas of the
    same shard)."""
    if component is not Component.LOG:
        return DEFAULT_MAX_UNAVAILABLE
    replicas = spec.replicas
    initial = spec.initial_config if isinstance(spec, LogSetSpec) else None
    shard = initial.log_shard_replicas if initial is not None else None
    return quorum_safe(min(replicas, int(shard or default_log_shard_replicas(replicas))))


def budget_spec(
    component: Component, spec: PodSet, selector: Mapping[str, str], *, detached: bool = False
) -> Obj | None:
    """The PodDisruptionBudget's spec for a set, None when it should have none. A log set
    with ``detached`` stores (pods the LogSet controls, below a reserved ordinal) counts
    in ``minAvailable``: the disruption controller reckons ``maxUnavailable`` from each
    pod's controller's scale, which a LogSet does not have."""
    if component not in BUDGETED or (isinstance(spec, CNSetSpec) and spec.pod_management_policy == "Pooling"):
        return None
    given: DisruptionBudget = getattr(spec, "pod_disruption_budget", None) or _NO_BUDGET
    if given.enabled is False:
        return None
    out: Obj = {}
    bound = given.max_unavailable
    if given.min_available is not None:
        out["minAvailable"] = given.min_available
    elif detached and (lose := _unavailable(component, spec, bound)) is not None:
        out["minAvailable"] = max(spec.replicas - lose, 0)
    else:
        out["maxUnavailable"] = default_max_unavailable(component, spec) if bound is None else bound
    out["selector"] = {"matchLabels": dict(selector)}
    return out


def _unavailable(component: Component, spec: PodSet, bound: int | str | None) -> int | None:
    """How many pods ``maxUnavailable`` lets go, as the disruption controller reckons it
    (a percentage of the replicas rounded up); None for a bound it would not read."""
    if bound is None:
        return default_max_unavailable(component, spec)
    return scaled_value(bound, spec.replicas, round_up=True)


def desired_budget(owner: Mapping[str, Any], component: Component, spec: PodSet) -> Obj | None:
    """The set's PodDisruptionBudget, stamped, when it should have one."""
    meta = owner["metadata"]
    namespace, set_name = meta.get("namespace") or "", meta["name"]
    selector = labels.sub_resource_labels(component, set_name, namespace)
    wanted = budget_spec(component, spec, selector, detached=_has_detached(component, owner, spec))
    if wanted is None:
        return None
    return stamped(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": child_metadata(
                owner, names.workload_name(component, set_name), set_labels(component, owner)
            ),
            "spec": wanted,
        }
    )


def unwanted_budget(
    owner: Mapping[str, Any], component: Component, cached: Mapping[str, Any] | None
) -> Delete | None:
    """The deletion of the set's cached PodDisruptionBudget once it should have none."""
    if component not in BUDGETED or cached is None:
        return None
    if not is_controlled_by(cached, owner) or is_deleting(cached):
        return None
    return Delete(r.PDBS, namespace_of(cached), name_of(cached), uid=uid_of(cached))


def _has_detached(component: Component, owner: Mapping[str, Any], spec: PodSet) -> bool:
    """Whether a LogSet keeps stores itself (a reserved ordinal between live ones)."""
    if component is not Component.LOG:
        return False
    try:
        return bool(reserved.recorded(annotations_of(owner), spec.replicas).detached)
    except reserved.ReservedOrdinalsError:
        return False
