"""Deployments of the stateless sets (proxy, web console), and how far their
rolls have got.

A Deployment rolls with ``maxSurge`` 1 and ``maxUnavailable`` 0 unless its
set's ``updateStrategy`` says otherwise: a new pod must be ready before an old
one goes, so a new version that never becomes ready stops the roll with the
old pods still serving.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mo_operator.api.common import RollingUpdateStrategy
from mo_operator.kube.meta.objects import spec_of, status_of

from ..framework.meta import child_metadata, is_deleting
from .statefulsets import Rollout, stall

Obj = dict[str, Any]


def deployment(
    owner: Mapping[str, Any],
    name: str,
    obj_labels: Mapping[str, str],
    selector: Mapping[str, str],
    *,
    replicas: int,
    template: Mapping[str, Any],
    min_ready_seconds: int = 0,
    update_strategy: RollingUpdateStrategy | None = None,
) -> Obj:
    """The Deployment of a stateless set; ``update_strategy`` (a set's
    ``{maxSurge, maxUnavailable}``) overrides the default roll field by field."""
    rolling: Obj = {"maxSurge": 1, "maxUnavailable": 0}
    if update_strategy is not None:
        if update_strategy.max_surge is not None:
            rolling["maxSurge"] = update_strategy.max_surge
        if update_strategy.max_unavailable is not None:
            rolling["maxUnavailable"] = update_strategy.max_unavailable
    spec: Obj = {
        "replicas": replicas,
        "selector": {"matchLabels": dict(selector)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
        "template": dict(template),
    }
    if min_ready_seconds:
        spec["minReadySeconds"] = min_ready_seconds
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": child_metadata(owner, name, obj_labels),
        "spec": spec,
    }


def rollout(
    dep: Mapping[str, Any] | None,
    pods: Iterable[Mapping[str, Any]],
    *,
    now: float,
    stall_seconds: float,
) -> Rollout:
    """The roll state of ``dep`` (as cached) and its ``pods``."""
    if dep is None:
        return Rollout(0, 0, 0, False)
    spec, status = spec_of(dep), status_of(dep)
    replicas = int(spec.get("replicas") or 0)
    observed = int(status.get("observedGeneration") or 0) >= int(dep["metadata"].get("generation") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    ready = int(status.get("readyReplicas") or 0)
    complete = (
        observed
        and updated == replicas
        and ready == replicas
        and int(status.get("availableReplicas") or 0) == replicas
        and int(status.get("replicas") or 0) == replicas
    )
    stalled, recheck = stall([p for p in pods if not is_deleting(p)], now, stall_seconds)
    return Rollout(replicas, min(ready, replicas), min(updated, replicas), complete, stalled, recheck)
