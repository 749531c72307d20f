"""Spec-level checks of each kind of set (upstream ``ValidateSpecCreate``): what is
checked for a standalone set and for the same component inside a cluster."""

from __future__ import annotations

import tomllib
from typing import Any

from ..fields import parse_duration
from ..semver import SemVer
from .errors import FieldError, child, index
from .images import image_errors
from .names import qualified_name
from .resources import volume_errors
from .rpcconfig import compressed_rpc_errors
from .storage import cache_errors, shared_storage_errors

__all__ = [
    "cn_label_errors",
    "cnset_spec_errors",
    "disruption_budget_errors",
    "dnset_spec_errors",
    "logset_spec_errors",
    "proxyset_spec_errors",
    "rolling_update_errors",
    "shard_errors",
    "webui_spec_errors",
]

_PERCENT = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"


def _duration_errors(spec: dict[str, Any], name: str, path: str) -> list[FieldError]:
    value = spec.get(name)
    if value is not None and parse_duration(value) < 0:
        return [FieldError(child(path, name), "must not be negative")]
    return []


def logset_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """Volume, bootstrap settings that keep a quorum, shared storage, failover
    timeout, and an RPC config the operator can talk to."""
    errs = volume_errors(spec["volume"], child(path, "volume"))
    errs += compressed_rpc_errors(spec, path, "logservice")
    initial = spec.get("initialConfig") or {}
    initial_path = child(path, "initialConfig")
    replicas, shard_replicas = spec["replicas"], initial.get("logShardReplicas")
    if shard_replicas is not None and replicas != 0 and shard_replicas > replicas:
        errs.append(
            FieldError(
                child(initial_path, "logShardReplicas"),
                "logShardReplicas must not larger then logservice replicas",
            )
        )
    errs += shared_storage_errors(spec["sharedStorage"], child(path, "sharedStorage"))
    errs += _duration_errors(spec, "storeFailureTimeout", path)
    return errs + disruption_budget_errors(spec, path)


_ONE_TN_SHARD = SemVer(2, 0, 0)
"""From MatrixOne 2.0 on, HAKeeper stops ("only support 1 dn shards",
``pkg/hakeeper/rsm.go``) when bootstrapped with any other number of TN shards."""


def shard_errors(spec: dict[str, Any], path: str, version: SemVer | None) -> list[FieldError]:
    """The shards HAKeeper bootstraps with must be a layout MatrixOne runs: one TN shard
    per log shard (its log service refuses to start otherwise, ``pkg/logservice/config.go``:
    "NumOfDNShards does not match NumOfLogShards"), and a single one from 2.0 on."""
    at = child(path, "initialConfig")
    initial = spec.get("initialConfig") or {}
    log_shards, tn_shards = initial.get("logShards"), initial.get("dnShards")
    errs = []
    if log_shards is not None and tn_shards is not None and log_shards != tn_shards:
        errs.append(
            FieldError(
                child(at, "dnShards"),
                "dnShards must equal logShards: MatrixOne runs one TN shard per log shard, "
                "and its log service refuses to start otherwise",
            )
        )
    if tn_shards not in (None, 1) and version is not None and version >= _ONE_TN_SHARD:
        errs.append(
            FieldError(
                child(at, "dnShards"),
                f"dnShards must be 1: MatrixOne {version} runs exactly one TN shard "
                "(its HAKeeper stops on any other number)",
            )
        )
    return errs


def dnset_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """Cache volume and caches, and a config that names the TN section once."""
    errs = volume_errors(spec.get("cacheVolume"), child(path, "cacheVolume"))
    errs += cache_errors(spec, path)
    config = spec.get("config")
    if config is not None:
        sections = tomllib.loads(config)
        if "tn" in sections and "dn" in sections:
            errs.append(FieldError(child(path, "config"), "[tn] and [dn] cannot be set at the same time"))
    return errs + disruption_budget_errors(spec, path)


def rolling_update_errors(strategy: dict[str, Any] | None, path: str) -> list[FieldError]:
    """maxSurge and maxUnavailable: a count of at least 0, or a percentage."""
    errs = []
    for name, value in (strategy or {}).items():
        at = child(path, name)
        if isinstance(value, int) and value < 0:
            errs.append(FieldError(at, "must be greater than or equal to 0"))
        elif isinstance(value, str) and not (
            value.endswith("%") and value[:-1].isascii() and value[:-1].isdigit()
        ):
            errs.append(FieldError(at, f'Invalid value: "{value}": {_PERCENT}'))
    return errs


def disruption_budget_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """``podDisruptionBudget``: a count of at least 0 or a percentage up to 100%, and not
    both bounds (the PodDisruptionBudget they become takes one, as the API server says)."""
    budget = spec.get("podDisruptionBudget")
    if not budget:
        return []
    at = child(path, "podDisruptionBudget")
    bounds = {k: v for k, v in budget.items() if k in ("maxUnavailable", "minAvailable")}
    errs = rolling_update_errors(bounds, at)
    for name, value in bounds.items():
        if isinstance(value, str) and value.endswith("%") and value[:-1].isdigit() and int(value[:-1]) > 100:
            errs.append(
                FieldError(child(at, name), f'Invalid value: "{value}": must not be greater than 100%')
            )
    if len(bounds) == 2:
        errs.append(
            FieldError(child(at, "minAvailable"), "minAvailable and maxUnavailable cannot be both set")
        )
    return errs


def cn_label_errors(labels: list[dict[str, Any]] | None, path: str) -> list[FieldError]:
    """Every CN label has a key and at least one value, none empty (upstream's messages)."""
    errs = []
    for i, label in enumerate(labels or []):
        at = index(path, i)
        if not label.get("key"):
            errs.append(FieldError(child(at, "key"), "label key cannot be empty"))
        values = label.get("values") or []
        if not values:
            errs.append(FieldError(child(at, "values"), "label values cannot be empty"))
        for j, value in enumerate(values):
            if value == "":
                errs.append(FieldError(index(child(at, "values"), j), "label value cannot be empty string"))
    return errs


def _annotation_key_errors(annotations: dict[str, str] | None, path: str) -> list[FieldError]:
    """Annotation keys are qualified names (the API server refuses the object otherwise)."""
    return [
        FieldError(path, f'Invalid value: "{k}": {m}')
        for k in annotations or {}
        for m in qualified_name(k.lower())
    ]


def cnset_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """Cache volume and caches, Service settings, CN labels, rolling update,
    draining, and an RPC config the operator can talk to."""
    errs = volume_errors(spec.get("cacheVolume"), child(path, "cacheVolume"))
    errs += cache_errors(spec, path)
    errs += compressed_rpc_errors(spec, path, "cn")
    if spec.get("nodePort") is not None and spec.get("serviceType", "ClusterIP") == "ClusterIP":
        errs.append(FieldError(child(path, "nodePort"), "cannot set node port when serviceType is ClusterIP"))
    errs += cn_label_errors(spec.get("cnLabels"), child(path, "cnLabels"))
    sidecar_image = (spec.get("pythonUdfSidecar") or {}).get("image")
    if sidecar_image:
        at = child(child(path, "pythonUdfSidecar"), "image")
        errs += [
            FieldError(at, f'Invalid value: "{sidecar_image}": {m}') for m in image_errors(sidecar_image)
        ]
    errs += _annotation_key_errors(spec.get("serviceAnnotations"), child(path, "serviceAnnotations"))
    errs += rolling_update_errors(spec.get("updateStrategy"), child(path, "updateStrategy"))
    errs += _duration_errors(
        spec.get("scalingConfig") or {}, "storeDrainTimeout", child(path, "scalingConfig")
    )
    return errs + disruption_budget_errors(spec, path)


def webui_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """The rolling update becomes the console Deployment's, which may not have both
    bounds at zero (our defaults fill in a bound left out: surge 1, unavailable 0)."""
    at = child(path, "updateStrategy")
    strategy = spec.get("updateStrategy") or {}
    errs = rolling_update_errors(strategy, at)
    surge, unavailable = strategy.get("maxSurge", 1), strategy.get("maxUnavailable", 0)
    if not errs and surge in (0, "0%") and unavailable in (0, "0%"):
        errs.append(FieldError(child(at, "maxUnavailable"), "may not be 0 when maxSurge is 0"))
    return errs


def proxyset_spec_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """Service settings."""
    errs = _annotation_key_errors(spec.get("serviceAnnotations"), child(path, "serviceAnnotations"))
    if spec.get("nodePort") is not None and spec.get("serviceType", "ClusterIP") == "ClusterIP":
        errs.append(FieldError(child(path, "nodePort"), "cannot set node port when serviceType is ClusterIP"))
    return errs + disruption_budget_errors(spec, path)
