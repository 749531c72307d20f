"""MatrixOneCluster checks: its name, its TN, its CN groups, and every component
checked as the set it becomes (so a child is never refused after its cluster was
accepted)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .derived import group_name_errors
from .errors import FieldError, child, index
from .images import repository_errors, tag_errors
from .names import dns1035_label, dns1123_subdomain
from .podset import podset_errors
from .sets import (
    cnset_spec_errors,
    dnset_spec_errors,
    logset_spec_errors,
    proxyset_spec_errors,
    shard_errors,
    webui_spec_errors,
)
from .versions import log_service_version

__all__ = ["MAX_CLUSTER_NAME_LENGTH", "cluster_errors", "cluster_name_errors"]

MAX_CLUSTER_NAME_LENGTH = 46
"""Longest cluster name whose children's names (``<name>-log-headless``, ...) still fit."""

_SpecCheck = Callable[[dict[str, Any], str], list[FieldError]]


def cluster_name_errors(metadata: dict[str, Any]) -> list[FieldError]:
    name = metadata.get("name")
    if not isinstance(name, str):
        return []
    errs = []
    if len(name) > MAX_CLUSTER_NAME_LENGTH:
        errs.append(FieldError("metadata.name", f"must be no more than {MAX_CLUSTER_NAME_LENGTH} characters"))
    errs += [FieldError("metadata.name", f'Invalid value: "{name}": {m}') for m in dns1035_label(name)]
    return errs


def _group_name_errors(spec: dict[str, Any]) -> list[FieldError]:
    """Group names are DNS subdomains and unique, the legacy tp and ap included."""
    errs = []
    taken = {legacy for legacy in ("tp", "ap") if legacy in spec}
    for i, group in enumerate(spec.get("cnGroups") or []):
        at = child(index("spec.cnGroups", i), "name")
        name = group["name"]
        errs += [FieldError(at, f'Invalid value: "{name}": {m}') for m in dns1123_subdomain(name)]
        if name in taken:
            errs.append(FieldError(at, "name must be unique"))
        taken.add(name)
    return errs


def _components(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any], _SpecCheck]]:
    parts: list[tuple[str, dict[str, Any], _SpecCheck]] = [
        ("spec.logService", spec["logService"], logset_spec_errors)
    ]
    parts += [(f"spec.{n}", spec[n], dnset_spec_errors) for n in ("dn", "tn") if n in spec]
    parts += [(f"spec.{n}", spec[n], cnset_spec_errors) for n in ("tp", "ap") if n in spec]
    parts += [
        (index("spec.cnGroups", i), g, cnset_spec_errors) for i, g in enumerate(spec.get("cnGroups") or [])
    ]
    if "proxy" in spec:
        parts.append(("spec.proxy", spec["proxy"], proxyset_spec_errors))
    if "webui" in spec:
        parts.append(("spec.webui", spec["webui"], webui_spec_errors))
    return parts


def cluster_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj["spec"]
    errs = cluster_name_errors(obj.get("metadata") or {})
    if spec["version"] == "":
        errs.append(FieldError("spec.version", "version must be set"))
    if "dn" not in spec and "tn" not in spec:
        errs.append(FieldError("spec.tn", ".spec.tn must be set"))
    if "dn" in spec and "tn" in spec:
        errs.append(FieldError("spec.dn", "legacy component .spec.dn cannot be set when .spec.tn is set"))
    errs += _group_name_errors(spec)
    name = (obj.get("metadata") or {}).get("name")
    if isinstance(name, str) and name:
        errs += group_name_errors(name, spec.get("cnGroups") or [], "spec.cnGroups")
    for path, component, check in _components(spec):
        errs += check(component, path)
        # A component without an image runs the cluster's ``version``.
        errs += podset_errors(component, path, image_required=False)
    errs += shard_errors(spec["logService"], "spec.logService", log_service_version("MatrixOneCluster", obj))
    return errs + _default_image_errors(spec)


def _default_image_errors(spec: dict[str, Any]) -> list[FieldError]:
    """``<imageRepository>:<version>``, the image of every MatrixOne component that names
    none, must be an image reference (the web console runs its own images)."""
    users = [path for path, c, _ in _components(spec) if not c.get("image") and path != "spec.webui"]
    if not users:
        return []
    used_by = f"the image of {', '.join(users)}"
    errs = []
    repository = spec.get("imageRepository")
    if repository:
        errs += [
            FieldError("spec.imageRepository", f'Invalid value: "{repository}": {m} ({used_by})')
            for m in repository_errors(repository)
        ]
    version = spec["version"]
    if version:
        errs += [
            FieldError("spec.version", f'Invalid value: "{version}": {m} ({used_by})')
            for m in tag_errors(version)
        ]
    return errs
