"""Fields the schema accepts (manifests written for the Go operator must apply) but
the operator does not act on. Each one set gets an admission warning naming it and
saying why, so nothing a user writes is silently dropped. docs/webhooks.md lists
them; a field leaves this table when a controller starts honouring it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ..common import POD_OVERLAY_FIELDS
from .errors import child
from .versions import pod_set_specs

__all__ = ["WEBUI_OVERLAY_FIELDS", "ignored_warnings"]

Obj = dict[str, Any]

WEBUI_OVERLAY_FIELDS: Final = frozenset({"imagePullPolicy", *POD_OVERLAY_FIELDS})
"""The overlay fields the WebUI's Deployment takes: every pod field, and the pull policy;
its containers are the dashboard's own."""

_WEBUI_IGNORED: Final = {
    "image": "the console runs the dashboard images (as upstream)",
    "semanticVersion": "the console runs the dashboard images",
    "config": "the console's config is the operator's",
    "serviceArgs": "the console runs the dashboard images",
    "topologySpread": "not applied to the console's pods",
    "memoryLimitPercent": "not applied to the console's pods",
    "memoryFsSize": "not applied to the console's pods",
    "exportToPrometheus": "the console exports no metrics",
    "promDiscoveryScheme": "the console exports no metrics",
    "dnsBasedIdentity": "the console has no store identity",
}

_NO_EFFECT = "has no effect"


def _set(value: Any) -> bool:
    """Whether a field was given a value that could change anything (false and empty cannot)."""
    return value is not None and value is not False and value != [] and value != {}


def _pod_set(kind: str, path: str, spec: Obj) -> Iterator[tuple[str, str]]:
    """Fields of a MatrixOne pod set spec at ``path`` that nothing reads."""
    if _set(spec.get("clusterDomain")):
        yield child(path, "clusterDomain"), "pod DNS names use the cluster's own domain (as upstream)"
    for volume in ("volume", "cacheVolume"):
        if _set((spec.get(volume) or {}).get("memoryCacheSize")):
            yield (
                child(child(path, volume), "memoryCacheSize"),
                "deprecated, use sharedStorageCache.memoryCacheSize",
            )
    is_log = kind == "LogSet" or path == "spec.logService"
    if is_log and _set(spec.get("dnsBasedIdentity")):
        yield child(path, "dnsBasedIdentity"), "log stores keep their ordinal identities (as upstream)"
    stateless = kind in ("CNSet", "ProxySet", "CNPool") or path.startswith(
        ("spec.cnGroups", "spec.tp", "spec.ap", "spec.proxy")
    )
    if stateless and _set((spec.get("overlay") or {}).get("volumeClaims")):
        yield child(child(path, "overlay"), "volumeClaims"), "CN and proxy pods get no volume claims"


def _webui(path: str, spec: Obj) -> Iterator[tuple[str, str]]:
    for field, why in _WEBUI_IGNORED.items():
        if _set(spec.get(field)):
            yield child(path, field), why
    if _set(spec.get("clusterDomain")):
        yield child(path, "clusterDomain"), "pod DNS names use the cluster's own domain (as upstream)"
    overlay = spec.get("overlay") or {}
    for field in sorted(overlay):
        if field not in WEBUI_OVERLAY_FIELDS and _set(overlay[field]):
            yield child(child(path, "overlay"), field), "not applied to the console's containers"


def _kind_fields(kind: str, obj: Obj) -> Iterator[tuple[str, str]]:
    spec = obj.get("spec") or {}
    if kind == "MatrixOneCluster":
        if _set(spec.get("metricReaderEnabled")):
            yield "spec.metricReaderEnabled", "the operator does not create the metric_reader user"
        if isinstance(spec.get("webui"), dict):
            yield from _webui("spec.webui", spec["webui"])
    elif kind == "WebUI":
        yield from _webui("spec", spec)
        if _set((obj.get("deps") or {}).get("cnset")):
            yield "deps.cnset", "the console does not wait for a CNSet"
    elif kind == "CNClaim":
        source = (spec.get("sourcePod") or {}).get("podName")
        if _set(spec.get("sourcePod")) and (not source or source == spec.get("podName")):
            yield "spec.sourcePod", "a claim migrates only when spec.podName names another pod than sourcePod"
    elif kind == "CNClaimSet":
        claim = (spec.get("template") or {}).get("spec") or {}
        for field in ("podName", "nodeName", "sourcePod"):
            if _set(claim.get(field)):
                yield f"spec.template.spec.{field}", "each claim of the set binds a pod of its own"
    elif kind == "CNPool":
        if _set(spec["template"].get("replicas")):
            yield "spec.template.replicas", "the pool sizes its CNSets itself"
        if _set(spec["strategy"]["updateStrategy"].get("reclaimTimeout")):
            yield (
                "spec.strategy.updateStrategy.reclaimTimeout",
                "a claimed pod of an older template stays until its claim goes (as upstream)",
            )


def ignored_warnings(kind: str, obj: Obj) -> list[str]:
    """One warning per field of a schema-valid object that is set but not acted on."""
    found = list(_kind_fields(kind, obj))
    for path, spec in pod_set_specs(kind, obj):
        found += _pod_set(kind, path, spec)
    return [f"{path}: {_NO_EFFECT}: {why}" for path, why in found]
