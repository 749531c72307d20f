"""Immutable, content-named ConfigMaps and their garbage collection.

Every config change produces a new ConfigMap named ``<base>-<content
hash>`` and marked ``immutable``; the pod template names it, so the change
rolls the pods like any template change and a pod's spec always says which
config it runs. Old ConfigMaps are deleted once no pod of the set and no
desired workload mounts them any more (after the roll), never before: a pod
restarting mid-roll must still find its config.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import labels_of, mapping_at, spec_of
from mo_operator.matrixone.config.configmap import hashed_name
from mo_operator.matrixone.config.tomlconfig import ConfigError

from ..framework import resources as r
from ..framework.meta import child_metadata, is_controlled_by, is_deleting, name_of, namespace_of
from ..framework.writes import Delete

Obj = dict[str, Any]

CONFIG_HASH_LABEL = "matrixorigin.io/config-base"
"""On each hashed ConfigMap: the base name it was hashed from (which set and role it serves)."""


def hashed_config_map(
    owner: Mapping[str, Any], base: str, obj_labels: Mapping[str, str], data: Mapping[str, str]
) -> Obj:
    """The immutable ConfigMap holding ``data``, named by its content."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": child_metadata(owner, hashed_name(base, data), {**obj_labels, CONFIG_HASH_LABEL: base}),
        "data": dict(data),
        "immutable": True,
    }


def config_maps_in_use(pods: Iterable[Mapping[str, Any]]) -> set[str]:
    """Names of the ConfigMaps the pods mount."""
    used: set[str] = set()
    for pod in pods:
        for volume in spec_of(pod).get("volumes") or ():
            name = mapping_at(volume, "configMap").get("name")
            if name:
                used.add(name)
    return used


def unused_config_maps(
    owner: Mapping[str, Any],
    base: str,
    existing: Iterable[Mapping[str, Any]],
    keep: Iterable[str],
) -> list[Mapping[str, Any]]:
    """Hashed ConfigMaps of ``owner`` for ``base`` that nothing in ``keep`` names."""
    kept = set(keep)
    return [
        cm
        for cm in existing
        if labels_of(cm).get(CONFIG_HASH_LABEL) == base
        and is_controlled_by(cm, owner)
        and name_of(cm) not in kept
        and not is_deleting(cm)
    ]


def unused_deletions(
    owner: Mapping[str, Any],
    base: str,
    existing: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    keep: Iterable[str],
) -> list[Delete]:
    """The deletions of ``owner``'s hashed ConfigMaps for ``base`` among ``existing``
    (the set's, as cached) that no pod mounts and ``keep`` (the desired objects' names)
    does not name. Only once the roll is complete, so a pod restarting mid-roll keeps
    its config."""
    namespace = namespace_of(owner)
    return [
        Delete(r.CONFIGMAPS, namespace, name_of(cm), uid=cm["metadata"]["uid"])
        for cm in unused_config_maps(owner, base, existing, config_maps_in_use(pods) | set(keep))
    ]


@contextmanager
def invalid_config_is_terminal() -> Iterator[None]:
    """A config that cannot render is the user's to fix: retrying will not help."""
    try:
        yield
    except ConfigError as e:
        raise TerminalError("InvalidConfig", f"spec.config: {e}") from e
