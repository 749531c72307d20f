"""Checks common to every pod set (upstream ``validatePodSet`` and friends): image,
resources, node selector, cluster domain, Prometheus discovery, GOMEMLIMIT, and the
cheap parts of the overlay.

A version that is not semantic is admitted with a warning (:mod:`.versions`), where
upstream's set webhooks refuse it ("a valid semanticVersion must be set...")."""

from __future__ import annotations

from typing import Any

from .errors import FieldError, child, index
from .images import image_errors
from .names import byte_len, dns1123_subdomain, fqdn, label_errors, qualified_name
from .resources import resources_errors, size_errors

__all__ = ["memory_limit_percent_errors", "overlay_errors", "podset_errors"]

_MAX_ANNOTATIONS_BYTES = 256 * 1024


def memory_limit_percent_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    pct = spec.get("memoryLimitPercent")
    if pct is not None and not 0 < pct <= 100:
        return [
            FieldError(
                child(path, "memoryLimitPercent"), "memoryLimitPercent value must be in interval (0, 100]"
            )
        ]
    return []


def _named_items(
    items: list[dict[str, Any]] | None, path: str, required: tuple[str, ...]
) -> list[FieldError]:
    errs = []
    for i, item in enumerate(items or []):
        for name in required:
            value = item.get(name)
            at = child(index(path, i), name)
            if value is None or value == "":
                errs.append(FieldError(at, "Required value"))
            elif not isinstance(value, str):
                errs.append(FieldError(at, "must be of type string"))
    return errs


def _object_name(value: str | None, path: str) -> list[FieldError]:
    if not value:
        return []
    return [FieldError(path, f'Invalid value: "{value}": {m}') for m in dns1123_subdomain(value)]


def overlay_errors(overlay: dict[str, Any] | None, path: str) -> list[FieldError]:
    """What an overlay can get wrong without a full Pod validation: names, labels, annotations."""
    if overlay is None:
        return []
    errs = label_errors(overlay.get("podLabels") or {}, child(path, "podLabels"))
    annotations: dict[str, str] = overlay.get("podAnnotations") or {}
    for k in annotations:
        errs += [
            FieldError(child(path, "podAnnotations"), f'Invalid value: "{k}": {m}')
            for m in qualified_name(k.lower())
        ]
    if sum(byte_len(k) + byte_len(v) for k, v in annotations.items()) > _MAX_ANNOTATIONS_BYTES:
        errs.append(
            FieldError(
                child(path, "podAnnotations"), f"Too long: must have at most {_MAX_ANNOTATIONS_BYTES} bytes"
            )
        )
    grace = overlay.get("terminationGracePeriodSeconds")
    if grace is not None and grace < 0:
        errs.append(FieldError(child(path, "terminationGracePeriodSeconds"), "must be greater than 0"))
    for name in ("serviceAccountName", "priorityClassName", "runtimeClassName"):
        errs += _object_name(overlay.get(name), child(path, name))
    errs += _named_items(overlay.get("env"), child(path, "env"), ("name",))
    errs += _named_items(overlay.get("volumes"), child(path, "volumes"), ("name",))
    errs += _named_items(overlay.get("volumeMounts"), child(path, "volumeMounts"), ("name", "mountPath"))
    errs += _named_items(overlay.get("initContainers"), child(path, "initContainers"), ("name",))
    errs += _named_items(overlay.get("sidecarContainers"), child(path, "sidecarContainers"), ("name",))
    return errs


def podset_errors(
    spec: dict[str, Any],
    path: str,
    *,
    image_required: bool = True,
) -> list[FieldError]:
    """Every pod set check. A cluster's component needs no image (``image_required``
    false): without one it runs the cluster's ``version``."""
    errs: list[FieldError] = []
    image = spec.get("image")
    domain = spec.get("clusterDomain")
    if domain:
        errs += [
            FieldError(child(path, "clusterDomain"), f'Invalid value: "{domain}": {m}') for m in fqdn(domain)
        ]
    errs += overlay_errors(spec.get("overlay"), child(path, "overlay"))
    if not image and image_required:
        errs.append(FieldError(child(path, "image"), "image must be set"))
    if image:
        errs += [
            FieldError(child(path, "image"), f'Invalid value: "{image}": {m}') for m in image_errors(image)
        ]
    for i, key in enumerate(spec.get("topologySpread") or []):
        at = index(child(path, "topologySpread"), i)
        errs += [FieldError(at, f'Invalid value: "{key}": {m}') for m in qualified_name(key)]
    if spec.get("exportToPrometheus") is True:
        scheme = spec.get("promDiscoveryScheme")
        at = child(path, "promDiscoveryScheme")
        if scheme is None:
            errs.append(
                FieldError(at, "ExportToPrometheus is enabled but PromDiscoveryScheme is not provided")
            )
        elif scheme not in ("Pod", "Service"):
            errs.append(
                FieldError(
                    at, f'Invalid value: "{scheme}": invalid PromDiscoveryScheme, must be Pod or Service'
                )
            )
    errs += resources_errors(spec.get("resources"), child(path, "resources"))
    errs += label_errors(spec.get("nodeSelector") or {}, child(path, "nodeSelector"))
    errs += memory_limit_percent_errors(spec, path)
    errs += size_errors(spec.get("memoryFsSize"), child(path, "memoryFsSize"))
    return errs
