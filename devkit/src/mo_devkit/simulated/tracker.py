"""``observe_instances`` over successive snapshots, computing only what changed.

An instance is a function of its pod, the ConfigMaps the pod mounts, whether its
node is Ready, the bad images, and the MatrixOne pods and Services of the
namespaces its HAKeeper addresses lead to. The tracker remembers, per pod, what
its last instance was computed from, and computes it again only when one of those
differs (objects compared by identity first, then by value). A refresh then costs
a few comparisons per pod plus the pods that changed, instead of reading every
pod's config again: the difference between a simulated fleet that converges in
linear time and one whose every change costs as much as the whole fleet.

``full()`` forgets everything, so the next ``observe`` computes every instance
afresh: the simulated MatrixOne does that periodically, as a backstop that bounds
how long any input the tracker failed to follow can go unseen.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mo_devkit.simulated.instances import Instance, observe_with_client
from mo_devkit.simulated.resolve import lookup_namespaces
from mo_devkit.simulated.view import Key, Obj, Snapshot

Token = tuple[tuple[Obj, ...], tuple[Obj, ...]]


def _config_map_names(pod: Mapping[str, Any]) -> tuple[str, ...]:
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return tuple(
        str(v["configMap"].get("name") or "") for v in volumes if isinstance(v.get("configMap"), Mapping)
    )


def _node_name(pod: Mapping[str, Any]) -> str:
    return str((pod.get("spec") or {}).get("nodeName") or "")


def _ready(node: Mapping[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


@dataclass
class _Known:
    """One pod's instance and what it was computed from."""

    pod: Obj
    inputs: tuple[object, ...]
    """The ConfigMaps the pod mounts, whether its node is Ready, the bad images."""
    lookups: dict[str, Token]
    """Namespace its HAKeeper lookup read → that namespace's token at the time."""
    instance: Instance | None


class InstanceTracker:
    """Answers exactly what ``observe_instances`` answers, computing less."""

    def __init__(self) -> None:
        self._known: dict[Key, _Known] = {}
        self.computed = 0
        """How many instances were computed rather than reused (for tests)."""

    def full(self) -> None:
        """Compute every instance afresh at the next ``observe``."""
        self._known = {}

    def observe(self, view: Snapshot, bad_images: Collection[str] = ()) -> list[Instance]:
        bad = tuple(bad_images)
        ready = {name: _ready(node) for name, node in view.nodes.items()}
        tokens: dict[str, Token] = {}

        def token(namespace: str) -> Token:
            found = tokens.get(namespace)
            if found is None:
                found = tokens[namespace] = view.namespace_token(namespace)
            return found

        known: dict[Key, _Known] = {}
        instances: list[Instance] = []
        for key, pod in view.pods.items():
            entry = self._known.get(key)
            if entry is not None and not self._still_valid(entry, pod, view, bad, ready, token):
                entry = None
            if entry is None:
                entry = self._compute(pod, view, bad, ready, token)
            known[key] = entry
            if entry.instance is not None:
                instances.append(entry.instance)
        self._known = known
        return instances

    @staticmethod
    def _inputs(
        pod: Obj, view: Snapshot, bad: tuple[str, ...], ready: Mapping[str, bool]
    ) -> tuple[object, ...]:
        namespace = str((pod.get("metadata") or {}).get("namespace") or "")
        mounted = tuple(view.configmap(namespace, n) for n in _config_map_names(pod))
        return mounted, ready.get(_node_name(pod), False), bad

    def _still_valid(
        self,
        entry: _Known,
        pod: Obj,
        view: Snapshot,
        bad: tuple[str, ...],
        ready: Mapping[str, bool],
        token: Callable[[str], Token],
    ) -> bool:
        if entry.pod is not pod and entry.pod != pod:
            return False
        if self._inputs(pod, view, bad, ready) != entry.inputs:
            return False
        return all(token(ns) == seen for ns, seen in entry.lookups.items())

    def _compute(
        self,
        pod: Obj,
        view: Snapshot,
        bad: tuple[str, ...],
        ready: Mapping[str, bool],
        token: Callable[[str], Token],
    ) -> _Known:
        self.computed += 1
        found = observe_with_client(pod, view, bad)
        instance, client = found if found is not None else (None, None)
        lookups: dict[str, Token] = {}
        if instance is not None and client is not None:
            lookups = {ns: token(ns) for ns in lookup_namespaces(client, instance.namespace)}
        return _Known(pod=pod, inputs=self._inputs(pod, view, bad, ready), lookups=lookups, instance=instance)
