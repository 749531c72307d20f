"""What a kubelet needs to exist before it starts a pod's containers
(``pkg/kubelet/kubelet_pods.go`` ``makeEnvironmentVariables``, and the secret and
configMap volume plugins): the Secrets and ConfigMaps its volumes mount, and
those its containers' ``env`` and ``envFrom`` read, unless marked optional.

A volume source that is missing keeps the whole pod from starting (its volumes
are set up before any container runs; the kubelet says so only in a
``FailedMount`` Event, and retries); an environment source that is missing keeps
that container waiting with reason ``CreateContainerConfigError`` and the
kubelet's message. Containers already running are left alone, as a kubelet
leaves them when a Secret they were started with goes away.

The ConfigMap ``kube-root-ca.crt`` of a pod's service account token volume is
taken as there: kube-controller-manager publishes it in every namespace of a real
cluster, and the embedded control plane, which runs no container that would read
it, does not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.objects import Obj, namespace_of, spec_of

__all__ = ["Lookup", "Unmet", "unmet_references"]

Lookup = Callable[[str, str, str], Obj | None]
"""An object by kind (``Secret`` or ``ConfigMap``), namespace and name, as cached."""


@dataclass(frozen=True)
class Unmet:
    volume: str | None = None
    """Why the pod's volumes cannot be set up (the ``FailedMount`` message), if so."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Container name → why its environment cannot be made (``CreateContainerConfigError``)."""

    def __bool__(self) -> bool:
        return self.volume is not None or bool(self.env)


def _keys(obj: Obj, kind: str) -> set[str]:
    keys = set((obj.get("data") or {}).keys())
    if kind == "ConfigMap":
        keys |= set((obj.get("binaryData") or {}).keys())
    return keys


def _missing(lookup: Lookup, kind: str, ns: str, name: str, key: str | None = None) -> str | None:
    """The kubelet's message when ``kind`` ``name`` (or its ``key``) is not there."""
    found = lookup(kind, ns, name)
    if found is None:
        return f'{kind.lower()} "{name}" not found'
    if key is not None and key not in _keys(found, kind):
        return f"couldn't find key {key} in {kind} {ns}/{name}"
    return None


def _required(source: Any, name_key: str) -> tuple[str, str | None] | None:
    if not isinstance(source, Mapping) or source.get("optional"):
        return None
    name = source.get(name_key)
    return (str(name), source.get("key")) if name else None


def _env_problem(container: Mapping[str, Any], ns: str, lookup: Lookup) -> str | None:
    for env in container.get("env") or ():
        value_from = (env or {}).get("valueFrom") or {}
        for kind, ref_key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
            ref = _required(value_from.get(ref_key), "name")
            if ref is not None and (why := _missing(lookup, kind, ns, ref[0], ref[1])):
                return why
    for env_from in container.get("envFrom") or ():
        for kind, ref_key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
            ref = _required((env_from or {}).get(ref_key), "name")
            if ref is not None and (why := _missing(lookup, kind, ns, ref[0])):
                return why
    return None


_ROOT_CA = "kube-root-ca.crt"


def _volume_sources(volume: Mapping[str, Any]) -> Iterator[tuple[str, tuple[str, str | None] | None]]:
    yield "Secret", _required(volume.get("secret"), "secretName")
    yield "ConfigMap", _required(volume.get("configMap"), "name")
    for source in (volume.get("projected") or {}).get("sources") or ():
        yield "Secret", _required((source or {}).get("secret"), "name")
        config_map = (source or {}).get("configMap")
        if (config_map or {}).get("name") != _ROOT_CA:
            yield "ConfigMap", _required(config_map, "name")


def unmet_references(pod: Obj, lookup: Lookup) -> Unmet:
    """What of the pod's references is missing, as its kubelet finds out."""
    ns, spec = namespace_of(pod), spec_of(pod)
    volume_problem = None
    for volume in spec.get("volumes") or ():
        for kind, ref in _volume_sources(volume or {}):
            if ref is not None and (why := _missing(lookup, kind, ns, ref[0])):
                volume_problem = f'MountVolume.SetUp failed for volume "{volume.get("name")}" : {why}'
                break
        if volume_problem:
            break
    env: dict[str, str] = {}
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        why = _env_problem(container or {}, ns, lookup)
        if why is not None:
            env[str(container.get("name"))] = why
    return Unmet(volume_problem, env)
