"""Validation of our kinds as pure functions, for the validating webhook and for the
reconcilers (which meet objects created while the webhook was off).

Both entry points take any JSON value and never raise. They validate the object as
it will be stored: null fields dropped as the API server drops them, then the schema
(types, enums, bounds, unknown fields, keyed lists), then, on a schema-valid object
with its defaults filled in, the semantic rules of the kind. Every error names a field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..defaulting import default
from ..kinds import API_VERSION, kind_info
from ..normalize import kind_schema, prune_nulls, too_deep_at
from .capacity import capacity_warnings
from .cluster import cluster_errors
from .deps import logset_ref_errors
from .derived import derived_name_errors
from .errors import ROOT, FieldError
from .ignored import ignored_warnings
from .immutable import update_errors
from .jobs import backup_errors, backupjob_errors, backupschedule_errors, restorejob_errors
from .listmaps import list_map_errors
from .podset import podset_errors
from .pool import cnclaim_errors, cnclaimset_errors, cnpool_errors
from .schema import schema_errors
from .sets import (
    cnset_spec_errors,
    dnset_spec_errors,
    logset_spec_errors,
    proxyset_spec_errors,
    shard_errors,
    webui_spec_errors,
)
from .versions import log_service_version, version_warnings

__all__ = ["FieldError", "admission_warnings", "validate_create", "validate_update"]

Obj = dict[str, Any]


def _logset(obj: Obj) -> list[FieldError]:
    spec = obj["spec"]
    errs = logset_spec_errors(spec, "spec") + podset_errors(spec, "spec")
    return errs + shard_errors(spec, "spec", log_service_version("LogSet", obj))


def _dnset(obj: Obj) -> list[FieldError]:
    errs = logset_ref_errors(obj.get("deps"), "deps")
    return errs + dnset_spec_errors(obj["spec"], "spec") + podset_errors(obj["spec"], "spec")


def _cnset(obj: Obj) -> list[FieldError]:
    errs = logset_ref_errors(obj.get("deps"), "deps")
    return errs + cnset_spec_errors(obj["spec"], "spec") + podset_errors(obj["spec"], "spec")


def _proxyset(obj: Obj) -> list[FieldError]:
    errs = logset_ref_errors(obj.get("deps"), "deps")
    return errs + proxyset_spec_errors(obj["spec"], "spec") + podset_errors(obj["spec"], "spec")


def _webui(obj: Obj) -> list[FieldError]:
    if "spec" not in obj:
        return []
    return webui_spec_errors(obj["spec"], "spec") + podset_errors(obj["spec"], "spec")


_SEMANTIC: Mapping[str, Callable[[Obj], list[FieldError]]] = {
    "MatrixOneCluster": cluster_errors,
    "LogSet": _logset,
    "DNSet": _dnset,
    "TNSet": _dnset,
    "CNSet": _cnset,
    "ProxySet": _proxyset,
    "WebUI": _webui,
    "BackupJob": backupjob_errors,
    "RestoreJob": restorejob_errors,
    "Backup": backup_errors,
    "BackupSchedule": backupschedule_errors,
    "CNClaim": cnclaim_errors,
    "CNClaimSet": cnclaimset_errors,
    "CNPool": cnpool_errors,
}


def _semantic(kind: str, obj: Obj) -> list[FieldError]:
    """The kind's rules, and those of the names derived from the object's name."""
    check = _SEMANTIC.get(kind)
    errs = derived_name_errors(kind, obj.get("metadata"))
    return errs + check(obj) if check is not None else errs


def _type_meta_errors(kind: str, obj: Obj) -> list[FieldError]:
    """apiVersion and kind, when given, must be this kind's."""
    errs = []
    if obj.get("apiVersion", API_VERSION) != API_VERSION:
        errs.append(
            FieldError("apiVersion", f'Invalid value: "{obj["apiVersion"]}": must be "{API_VERSION}"')
        )
    if obj.get("kind", kind) != kind:
        errs.append(FieldError("kind", f'Invalid value: "{obj["kind"]}": must be "{kind}"'))
    return errs


def _checked(kind: str, obj: Any, *, old: Any = None) -> tuple[Obj | None, list[FieldError]]:
    """The defaulted object if it passes the schema, else None and the schema errors."""
    info = kind_info(kind)
    if info is None:
        return None, [
            FieldError("kind", f'Unsupported value: "{kind}": not a kind of core.matrixorigin.io/v1alpha1')
        ]
    if not isinstance(obj, Mapping):
        return None, [FieldError(ROOT, "must be of type object")]
    if (deep := too_deep_at(obj)) is not None:
        return None, [FieldError(deep or ROOT, "must not be nested this deeply")]
    schema = kind_schema(info.model)
    pruned = prune_nulls(obj, schema)
    errs = (
        schema_errors(info.model, pruned)
        or list_map_errors(pruned, schema)
        or _type_meta_errors(kind, pruned)
    )
    if errs:
        return None, errs
    return default(kind, pruned, old=old), []


def validate_create(kind: str, obj: Any) -> list[FieldError]:
    """Every reason to refuse creating ``obj`` as a ``kind``; empty when it is valid."""
    defaulted, errs = _checked(kind, obj)
    if defaulted is None:
        return errs
    return _semantic(kind, defaulted)


def _spec_only(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


def validate_update(kind: str, old: Any, new: Any) -> list[FieldError]:
    """Every reason to refuse replacing ``old`` by ``new``; empty when the update is valid.

    A problem that ``old`` already had is not held against the update (as CRD
    validation ratcheting does), so objects stored before a rule existed stay
    editable, and a change to metadata alone (finalizers, labels) is never refused.
    An ``old`` that is not a valid object at all only makes ``new`` be checked alone.
    """
    new_defaulted, errs = _checked(kind, new, old=old)
    if new_defaulted is None:
        return errs
    old_defaulted, _ = _checked(kind, old, old=old)
    if old_defaulted is None:
        return _semantic(kind, new_defaulted)
    if _spec_only(old_defaulted) == _spec_only(new_defaulted):
        return []
    already = set(_semantic(kind, old_defaulted))
    errs = [e for e in _semantic(kind, new_defaulted) if e not in already]
    return errs + update_errors(kind, old_defaulted, new_defaulted)


def admission_warnings(kind: str, obj: Any, *, old: Any = None) -> list[str]:
    """What to tell the user about an object that is admitted: a version that is not
    semantic (version-gated behaviour falls back, see :mod:`.versions`), replica counts
    that do not do what they suggest (:mod:`.capacity`) and fields set that the
    operator does not act on (:mod:`.ignored`). Empty for an object the
    schema refuses: its denial says what matters."""
    defaulted, errs = _checked(kind, obj, old=old)
    if defaulted is None or errs:
        return []
    return (
        version_warnings(kind, defaulted)
        + capacity_warnings(kind, defaulted)
        + ignored_warnings(kind, defaulted)
    )
