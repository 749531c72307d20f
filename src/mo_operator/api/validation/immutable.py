"""Update rules: what may not change once an object exists, and what may only grow.

Both objects are defaulted before they are compared, so a field the defaulter
filled in on one side only does not count as a change.
"""

from __future__ import annotations

from typing import Any

from ..semver import parse_tolerant
from .errors import FieldError, child
from .resources import amount
from .sets import logset_spec_errors, shard_errors

__all__ = ["logset_update_errors", "operator_version_errors", "update_errors", "volume_update_errors"]

_LEGACY_OPERATOR_VERSION = "1.2.0"


def volume_update_errors(
    old: dict[str, Any] | None, new: dict[str, Any] | None, path: str
) -> list[FieldError]:
    """A volume keeps its StorageClass and never shrinks."""
    if old is None or new is None:
        return []
    errs = []
    if old.get("storageClassName") != new.get("storageClassName"):
        errs.append(FieldError(child(path, "storageClassName"), "storageClassName is immutable"))
    if amount(new["size"]) < amount(old["size"]):
        errs.append(FieldError(child(path, "size"), "volume size cannot be decreased"))
    return errs


def _without_retention(s3: dict[str, Any] | None) -> dict[str, Any] | None:
    """An S3 provider without its retention policy, which is a policy, not a location."""
    return None if s3 is None else {k: v for k, v in s3.items() if k != "s3RetentionPolicy"}


def _fixing(old: dict[str, Any], path: str) -> bool:
    """The stored ``initialConfig`` is one the rules refuse: the object was made while the
    webhook was off, and the reconcilers have built nothing from it (they refuse it
    too), so it may still be corrected."""
    at = child(path, "initialConfig")
    errs = logset_spec_errors(old, path) + shard_errors(old, path, None)
    return any(e.path == at or e.path.startswith(at + ".") for e in errs)


def logset_update_errors(old: dict[str, Any], new: dict[str, Any], path: str) -> list[FieldError]:
    """The bootstrap settings and the data's location are fixed; the volume only grows.

    As upstream (``ValidateSpecUpdate``), ``initialConfig`` never changes once the
    object exists: HAKeeper bootstraps from it once, and MatrixOne cannot apply a
    change. Only an ``initialConfig`` that was itself invalid may be corrected.
    """
    errs = []
    if old.get("initialConfig") != new.get("initialConfig") and not _fixing(old, path):
        errs.append(FieldError(child(path, "initialConfig"), "initialConfig is immutable"))
    old_storage, new_storage = old["sharedStorage"], new["sharedStorage"]
    if _without_retention(old_storage.get("s3")) != _without_retention(new_storage.get("s3")):
        errs.append(FieldError(child(child(path, "sharedStorage"), "s3"), "sharedStorage.s3 is immutable"))
    if old_storage.get("fileSystem") != new_storage.get("fileSystem"):
        errs.append(
            FieldError(
                child(child(path, "sharedStorage"), "fileSystem"), "sharedStorage.fileSystem is immutable"
            )
        )
    errs += volume_update_errors(old["volume"], new["volume"], child(path, "volume"))
    return errs


def operator_version_errors(old: dict[str, Any], new: dict[str, Any], path: str) -> list[FieldError]:
    """``operatorVersion`` never goes back (unset and unreadable mean the legacy 1.2.0)."""

    def version(spec: dict[str, Any]) -> Any:
        return parse_tolerant(spec.get("operatorVersion") or _LEGACY_OPERATOR_VERSION) or parse_tolerant(
            _LEGACY_OPERATOR_VERSION
        )

    if version(new) < version(old):
        return [
            FieldError(
                child(path, "operatorVersion"),
                "new operatorVersion must be greater than or equal to the oldVersion",
            )
        ]
    return []


def _cache_volume(old: dict[str, Any] | None, new: dict[str, Any] | None, path: str) -> list[FieldError]:
    if old is None or new is None:
        return []
    return volume_update_errors(old.get("cacheVolume"), new.get("cacheVolume"), child(path, "cacheVolume"))


def _cluster(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    o, n = old["spec"], new["spec"]
    errs = logset_update_errors(o["logService"], n["logService"], "spec.logService")
    errs += operator_version_errors(o, n, "spec")
    if n.get("restoreFrom") is not None and n.get("restoreFrom") != o.get("restoreFrom"):
        errs.append(FieldError("spec.restoreFrom", "restoreFrom is immutable"))
    for name in ("dn", "tn", "tp", "ap"):
        errs += _cache_volume(o.get(name), n.get(name), f"spec.{name}")
    old_groups = {g["name"]: g for g in o.get("cnGroups") or []}
    for i, group in enumerate(n.get("cnGroups") or []):
        errs += _cache_volume(old_groups.get(group["name"]), group, f"spec.cnGroups[{i}]")
    return errs


def _set(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    return operator_version_errors(old["spec"], new["spec"], "spec") + _cache_volume(
        old["spec"], new["spec"], "spec"
    )


def _logset(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    return operator_version_errors(old["spec"], new["spec"], "spec") + logset_update_errors(
        old["spec"], new["spec"], "spec"
    )


def _cnclaim(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    """A bound claim's ``podName`` changes only as a migration (upstream's
    ``cnclaim/migrate.go``): ``spec.sourcePod.podName`` names the pod it leaves (the old
    ``podName``, or the old source when a migration is redirected)."""
    o, n = old.get("spec") or {}, new.get("spec") or {}
    old_pod, new_pod = o.get("podName"), n.get("podName")
    if not old_pod or new_pod == old_pod:
        return []
    source = (n.get("sourcePod") or {}).get("podName")
    leaving = {old_pod, (o.get("sourcePod") or {}).get("podName")} - {None}
    if not new_pod:
        return [FieldError("spec.podName", "podName of a bound claim cannot be cleared; migrate it instead")]
    if source not in leaving:
        return [
            FieldError(
                "spec.podName",
                f"podName is immutable, except to migrate the claim: set spec.sourcePod.podName to {old_pod}",
            )
        ]
    if source == new_pod:
        return [FieldError("spec.sourcePod.podName", "the pod migrated from must differ from spec.podName")]
    return []


_UPDATE_RULES = {
    "MatrixOneCluster": _cluster,
    "LogSet": _logset,
    "DNSet": _set,
    "TNSet": _set,
    "CNSet": _set,
    "ProxySet": _set,
    "WebUI": lambda old, new: operator_version_errors(old.get("spec") or {}, new.get("spec") or {}, "spec"),
    "CNClaim": _cnclaim,
}


def update_errors(kind: str, old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    """The update rules of a kind, for two schema-valid, defaulted objects."""
    rule = _UPDATE_RULES.get(kind)
    return rule(old, new) if rule is not None else []
