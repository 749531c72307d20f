"""Parsing of kube-apiserver resource URLs into (type, namespace, name,
subresource), the same way for every resource."""

from __future__ import annotations

from dataclasses import dataclass

from .registry import Registry
from .resources import ResourceType


@dataclass(frozen=True)
class Target:
    rt: ResourceType
    namespace: str  # "" for cluster-scoped requests or all namespaces
    name: str
    subresource: str
    all_namespaces: bool


class UnknownResource(Exception):
    pass


_NAMESPACE_SUBRESOURCES = frozenset(("status", "finalize"))


def parse_resource_path(registry: Registry, path: str) -> Target | None:
    """``/api/v1/...`` or ``/apis/<group>/<version>/...``; None when the path is
    a discovery path rather than a resource."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    if parts[0] == "api":
        if len(parts) < 3:
            return None
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis":
        if len(parts) < 4:
            return None
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        rt = registry.lookup(group, version, rest[2])
        if rt is not None and rt.namespaced:
            namespace, rest = rest[1], rest[2:]
        elif rt is None and rest[2] not in _NAMESPACE_SUBRESOURCES:
            raise UnknownResource(rest[2])
    rt = registry.lookup(group, version, rest[0])
    if rt is None:
        raise UnknownResource(rest[0])
    name = rest[1] if len(rest) > 1 else ""
    sub = "/".join(rest[2:]) if len(rest) > 2 else ""
    all_ns = rt.namespaced and not namespace
    if rt.namespaced and name and not namespace:
        raise UnknownResource(rest[0])
    return Target(rt, namespace, name, sub, all_ns)
