"""The resource types the server serves, built-in and custom, and the
discovery documents (``/api``, ``/apis``, group-version resource lists)
that describe them to kubectl and client libraries."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .resources import PrinterColumn, ResourceType, ScaleSubresource


class Registry:
    def __init__(self, builtins: Iterable[ResourceType]) -> None:
        self._builtins = tuple(builtins)
        self._custom: dict[str, tuple[ResourceType, ...]] = {}  # crd name -> served versions
        self._rebuild()

    def _rebuild(self) -> None:
        self._by_path: dict[tuple[str, str, str], ResourceType] = {}
        self._by_kind: dict[tuple[str, str], ResourceType] = {}
        for rt in self.all():
            self._by_path[(rt.group, rt.version, rt.plural)] = rt
            self._by_kind.setdefault((rt.group, rt.kind), rt)
        self.generation = getattr(self, "generation", 0) + 1

    def all(self) -> list[ResourceType]:
        out = list(self._builtins)
        for types in self._custom.values():
            out.extend(types)
        return out

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, group: str, kind: str) -> ResourceType | None:
        return self._by_kind.get((group, kind))

    def by_api_version_kind(self, api_version: str, kind: str) -> ResourceType | None:
        group, _, version = api_version.rpartition("/")
        rt = self._by_kind.get((group, kind))
        if rt is None:
            return None
        return self._by_path.get((group, version, rt.plural)) or rt

    def group_versions(self) -> dict[str, list[str]]:
        """Group name -> served versions, preferred first."""
        out: dict[str, list[str]] = {}
        for rt in self.all():
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        return out

    # ---------------------------------------------------------------- CRDs
    def set_custom(self, crd: dict[str, Any]) -> tuple[ResourceType, ...]:
        types = resource_types_of_crd(crd)
        self._custom[crd["metadata"]["name"]] = types
        self._rebuild()
        return types

    def remove_custom(self, crd_name: str) -> None:
        if self._custom.pop(crd_name, None) is not None:
            self._rebuild()

    def custom_types(self, crd_name: str) -> tuple[ResourceType, ...]:
        return self._custom.get(crd_name, ())

    # ----------------------------------------------------------- discovery
    def api_versions(self, server_address: str) -> dict[str, Any]:
        return {
            "kind": "APIVersions",
            "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
        }

    def api_group_list(self) -> dict[str, Any]:
        groups = []
        for group, versions in self.group_versions().items():
            if not group:
                continue
            groups.append(_api_group(group, versions))
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def api_group(self, group: str) -> dict[str, Any] | None:
        versions = self.group_versions().get(group)
        if not versions:
            return None
        return dict(_api_group(group, versions), kind="APIGroup", apiVersion="v1")

    def resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        types = [rt for rt in self.all() if rt.group == group and rt.version == version]
        if not types:
            return None
        resources: list[dict[str, Any]] = []
        for rt in types:
            entry: dict[str, Any] = {
                "name": rt.plural,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": list(rt.verbs),
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            resources.append(entry)
            if rt.status_subresource:
                resources.append(
                    {
                        "name": f"{rt.plural}/status",
                        "singularName": "",
                        "namespaced": rt.namespaced,
                        "kind": rt.kind,
                        "verbs": ["get", "patch", "update"],
                    }
                )
            if rt.scale is not None:
                resources.append(
                    {
                        "name": f"{rt.plural}/scale",
                        "singularName": "",
                        "namespaced": rt.namespaced,
                        "group": "autoscaling",
                        "version": "v1",
                        "kind": "Scale",
                        "verbs": ["get", "patch", "update"],
                    }
                )
            if rt.kind == "Pod" and rt.group == "":
                resources.append(
                    {
                        "name": "pods/binding",
                        "singularName": "",
                        "namespaced": True,
                        "kind": "Binding",
                        "verbs": ["create"],
                    }
                )
                resources.append(
                    {
                        "name": "pods/eviction",
                        "singularName": "",
                        "namespaced": True,
                        "group": "policy",
                        "version": "v1",
                        "kind": "Eviction",
                        "verbs": ["create"],
                    }
                )
            if rt.kind == "Namespace" and rt.group == "":
                resources.append(
                    {
                        "name": "namespaces/finalize",
                        "singularName": "",
                        "namespaced": False,
                        "kind": "Namespace",
                        "verbs": ["update"],
                    }
                )
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": vs, "preferredVersion": vs[0]}


def resource_types_of_crd(crd: dict[str, Any]) -> tuple[ResourceType, ...]:
    """The resource types a CustomResourceDefinition serves, one per served version."""
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    kind = names.get("kind", "")
    versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
    # The storage version first, so it is the preferred one in discovery.
    versions.sort(key=lambda v: not v.get("storage", False))
    out = []
    for v in versions:
        subresources = v.get("subresources") or {}
        scale = None
        if "scale" in subresources:
            s = subresources["scale"] or {}
            scale = ScaleSubresource(
                spec_replicas_path=s.get("specReplicasPath", ".spec.replicas"),
                status_replicas_path=s.get("statusReplicasPath", ".status.replicas"),
                label_selector_path=s.get("labelSelectorPath"),
            )
        columns = tuple(
            PrinterColumn(
                name=c.get("name", ""),
                type=c.get("type", "string"),
                json_path=c.get("jsonPath", ""),
                description=c.get("description", ""),
                priority=int(c.get("priority", 0) or 0),
                format=c.get("format", ""),
            )
            for c in v.get("additionalPrinterColumns") or []
        )
        out.append(
            ResourceType(
                group=group,
                version=v.get("name", ""),
                kind=kind,
                plural=names.get("plural", ""),
                singular=names.get("singular") or kind.lower(),
                namespaced=spec.get("scope", "Namespaced") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                status_subresource="status" in subresources,
                scale=scale,
                printer_columns=columns,
                schema=((v.get("schema") or {}).get("openAPIV3Schema")),
                crd_name=crd["metadata"]["name"],
            )
        )
    return tuple(out)
