"""Whether a log store is down for planned work, from its pod as the cache holds it:
the failover decision reports such a store restarting (quiet) rather than down, and
still counts it lost once down for ``storeFailureTimeout``.

Planned work takes a store's pod away in one of two ways, each seen on a pod:

- the set's roll replaces it: the pod is being deleted while the StatefulSet rolls,
  or it is the replacement, on the revision rolled to;
- a drain evicts it: the pod carries the ``DisruptionTarget`` condition with reason
  ``EvictionByEvictionAPI`` (kube-apiserver's Eviction API sets it before deleting).
  The condition goes with the pod; the StatefulSet makes a new pod under the same
  name, which holds nothing of the old one's eviction. So the evicted pods seen are
  noted (:class:`Evictions`), and the pod of that name coming up (not ready, no
  container restarted) is the drained store coming back, until it is ready.

A store whose pod was ready and is not (a failing probe, a container that
restarted), is deleted by anything else (a person, a node's taint manager, the
kubelet under pressure), or whose replacement crashes, is not planned.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from mo_operator.kube.meta.objects import labels_of, mapping_at, meta_of

from ..specs import pods as podutil
from ..specs.statefulsets import REVISION_LABEL

__all__ = ["DISRUPTION_TARGET", "EVICTED", "Evictions", "evicted", "planned", "rolled", "starting"]

DISRUPTION_TARGET = "DisruptionTarget"
EVICTED = "EvictionByEvictionAPI"


def rolled(pod: Mapping[str, Any], roll_to: str | None) -> bool:
    """The StatefulSet's roll (to revision ``roll_to``, None when it is not rolling) is
    replacing the pod: deleting it, or it is the replacement."""
    if roll_to is None:
        return False
    return meta_of(pod).deleting or labels_of(pod).get(REVISION_LABEL) == roll_to


def evicted(pod: Mapping[str, Any]) -> bool:
    """Evicted through the Eviction API (a drain, a node-pool upgrade)."""
    c = podutil.condition(pod, DISRUPTION_TARGET)
    return c is not None and c.get("status") == "True" and c.get("reason") == EVICTED


def starting(pod: Mapping[str, Any]) -> bool:
    """Coming up: not ready, not being deleted, and none of its containers restarted."""
    if meta_of(pod).deleting or podutil.is_ready(pod):
        return False
    statuses = mapping_at(pod, "status").get("containerStatuses") or ()
    return not any(isinstance(s, Mapping) and int(s.get("restartCount") or 0) > 0 for s in statuses)


def planned(pod: Mapping[str, Any], roll_to: str | None, evicted_before: Collection[str] = ()) -> bool:
    """The pod is down for planned work (see the module). ``evicted_before``: the names
    of the set's pods seen evicted and not ready since (:meth:`Evictions.note`)."""
    if rolled(pod, roll_to) or evicted(pod):
        return True
    return meta_of(pod).name in evicted_before and starting(pod)


class Evictions:
    """The pods of each LogSet seen evicted, until a pod of the name is ready again.

    In memory, as the evicted pod's condition is the only record of a drain: an
    operator restarted while a drained store comes back reports it down, as before.
    Bounded by the set's pod names; a set's entry goes once none is left."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], set[str]] = {}

    def note(self, key: tuple[str, str], pods: Iterable[Mapping[str, Any]]) -> frozenset[str]:
        """Note the evicted pods among the set's ``pods``, forget those ready again, and
        return the names of the pods evicted and not back yet."""
        seen = self._seen.get(key, set())
        for pod in pods:
            name = meta_of(pod).name
            if evicted(pod):
                seen.add(name)
            elif podutil.is_ready(pod) and not meta_of(pod).deleting:
                seen.discard(name)
        if seen:
            self._seen[key] = seen
        else:
            self._seen.pop(key, None)
        return frozenset(seen)

    def forget(self, key: tuple[str, str]) -> None:
        """The set is gone."""
        self._seen.pop(key, None)
