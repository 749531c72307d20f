"""The slice of the API the simulated MatrixOne looks at, as one consistent snapshot.

A MatrixOne process sees the world through its pod: the ConfigMaps mounted into it,
the DNS names (Services, pod hostnames) its config refers to, and whether its node is
up. The simulation decides everything from such a snapshot, so the same decision code
runs on objects watched from a server and on hand-built dicts in unit tests.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.objects import labels_of, name_of, namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]
Key = tuple[str, str]
"""``(namespace, name)`` of a namespaced object."""

MO_COMPONENTS = frozenset(c.kind for c in Component) | {"TNSet"}
"""``matrixorigin.io/component`` values of pods the simulation plays."""


def key_of(obj: Mapping[str, Any]) -> Key:
    return namespace_of(obj), name_of(obj)


def mo_component(pod: Mapping[str, Any]) -> Component | None:
    """The MatrixOne component a pod runs, from its labels; None for other pods.

    A pod needs both the component and the instance label: without the instance the
    simulation cannot tell which set (and so which LogSet) the pod belongs to.
    """
    found = labels_of(pod)
    kind, instance = found.get(labels.COMPONENT), found.get(labels.INSTANCE)
    if kind not in MO_COMPONENTS or not instance:
        return None
    return Component.from_kind(kind)


@dataclass(frozen=True)
class Snapshot:
    """MatrixOne pods with the ConfigMaps, Services, Nodes and volume claims they may refer to."""

    pods: Mapping[Key, Obj] = field(default_factory=dict)
    configmaps: Mapping[Key, Obj] = field(default_factory=dict)
    services: Mapping[Key, Obj] = field(default_factory=dict)
    nodes: Mapping[str, Obj] = field(default_factory=dict)
    volume_claims: frozenset[Key] = frozenset()
    """The PersistentVolumeClaims that exist: where a log store's data outlives its pod."""
    claim_uids: Mapping[Key, str] = field(default_factory=dict)
    """Each claim's UID: a claim deleted and made again under its name is a new, empty disk."""

    @classmethod
    def of(
        cls,
        *,
        pods: Iterable[Obj] = (),
        configmaps: Iterable[Obj] = (),
        services: Iterable[Obj] = (),
        nodes: Iterable[Obj] = (),
        volume_claims: Iterable[Obj] = (),
    ) -> Snapshot:
        """A snapshot of these objects; pods that run no MatrixOne component are left out."""
        claims = list(volume_claims)
        return cls(
            pods={key_of(p): p for p in pods if mo_component(p) is not None},
            configmaps={key_of(c): c for c in configmaps},
            services={key_of(s): s for s in services},
            nodes={key_of(n)[1]: n for n in nodes},
            volume_claims=frozenset(key_of(c) for c in claims),
            claim_uids={key_of(c): str((c.get("metadata") or {}).get("uid") or "") for c in claims},
        )

    def pod(self, namespace: str, name: str) -> Obj | None:
        return self.pods.get((namespace, name))

    def configmap(self, namespace: str, name: str) -> Obj | None:
        return self.configmaps.get((namespace, name))

    def service(self, namespace: str, name: str) -> Obj | None:
        return self.services.get((namespace, name))

    def node(self, name: str) -> Obj | None:
        return self.nodes.get(name)

    def pods_in(self, namespace: str) -> list[Obj]:
        return self._pods_by_namespace.get(namespace, [])

    def namespace_token(self, namespace: str) -> tuple[tuple[Obj, ...], tuple[Obj, ...]]:
        """The MatrixOne pods and the Services of ``namespace``: all that a name in it
        can resolve to. Two snapshots with equal tokens resolve its names alike."""
        return (
            tuple(self._pods_by_namespace.get(namespace, ())),
            tuple(self._services_by_namespace.get(namespace, ())),
        )

    @functools.cached_property
    def _pods_by_namespace(self) -> Mapping[str, list[Obj]]:
        """Built once per snapshot: every instance resolves its addresses among its namespace's pods."""
        return _by_namespace(self.pods)

    @functools.cached_property
    def _services_by_namespace(self) -> Mapping[str, list[Obj]]:
        return _by_namespace(self.services)


def _by_namespace(objects: Mapping[Key, Obj]) -> dict[str, list[Obj]]:
    found: dict[str, list[Obj]] = {}
    for (namespace, _), obj in objects.items():
        found.setdefault(namespace, []).append(obj)
    return found
