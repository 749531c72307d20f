"""Helpers over plain JSON objects: metadata, owner references and conditions,
written once so every decision reads objects the same way. The name, namespace
and uid accessors, ``is_deleting`` and the timestamps are the runtime's own
(``kube.meta.objects``, ``kube.meta.times``), so both sides of the API read objects alike."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from typing import Any

from mo_operator.kube.meta.objects import is_deleting as is_deleting
from mo_operator.kube.meta.objects import name_of as name_of
from mo_operator.kube.meta.objects import namespace_of as namespace_of
from mo_operator.kube.meta.objects import uid_of as uid_of

from .kinds import Kind

Obj = dict[str, Any]


def meta(obj: Mapping[str, Any]) -> dict[str, Any]:
    m = obj.get("metadata")
    return m if isinstance(m, dict) else {}


def key_of(obj: Mapping[str, Any]) -> tuple[str, str]:
    """``(namespace, name)``; the namespace is empty for cluster-scoped objects."""
    return namespace_of(obj), name_of(obj)


def labels_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(meta(obj).get("labels") or {})


def annotations_of(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict(meta(obj).get("annotations") or {})


def generation_of(obj: Mapping[str, Any]) -> int:
    return int(meta(obj).get("generation") or 0)


def resource_version_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("resourceVersion", "") or "")


def spec_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    s = obj.get("spec")
    return s if isinstance(s, dict) else {}


def status_of(obj: Mapping[str, Any]) -> dict[str, Any]:
    s = obj.get("status")
    return s if isinstance(s, dict) else {}


# ------------------------------------------------------------ owner references
def controller_ref(obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """The owner reference with ``controller: true``, as ``metav1.GetControllerOf``."""
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return dict(ref)
    return None


def new_controller_ref(owner: Mapping[str, Any], kind: Kind) -> dict[str, Any]:
    """``metav1.NewControllerRef``: controller and blockOwnerDeletion both true."""
    return {
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "name": name_of(owner),
        "uid": uid_of(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    ref = controller_ref(obj)
    return ref is not None and ref.get("uid") == uid_of(owner)


def has_owner_ref(obj: Mapping[str, Any], owner_uid: str) -> bool:
    return any(r.get("uid") == owner_uid for r in meta(obj).get("ownerReferences") or [])


# ------------------------------------------------------------------ conditions
def find_condition(conditions: Iterable[Mapping[str, Any]] | None, ctype: str) -> dict[str, Any] | None:
    for c in conditions or []:
        if c.get("type") == ctype:
            return dict(c)
    return None


def condition_is_true(obj: Mapping[str, Any], ctype: str) -> bool:
    c = find_condition(status_of(obj).get("conditions"), ctype)
    return c is not None and c.get("status") == "True"


def merge_condition(
    conditions: list[dict[str, Any]], new: Mapping[str, Any], now: str, *, time_fields: tuple[str, ...] = ()
) -> list[dict[str, Any]]:
    """Put ``new`` in the list, keeping ``lastTransitionTime`` when the status
    did not change (what every controller's ``UpdateXCondition`` does).

    ``time_fields`` are set to ``now`` on every change (e.g. ``lastUpdateTime``
    of Deployment conditions); fields of the old condition that ``new`` leaves
    out are dropped, so a condition reads exactly as the component wrote it.
    """
    out: list[dict[str, Any]] = []
    found = False
    for c in conditions:
        if c.get("type") != new.get("type"):
            out.append(c)
            continue
        found = True
        merged = {k: v for k, v in new.items() if v is not None and v != ""}
        same_status = c.get("status") == new.get("status")
        merged["lastTransitionTime"] = c.get("lastTransitionTime") if same_status else now
        unchanged = same_status and all(c.get(k) == merged.get(k) for k in ("reason", "message"))
        for f in time_fields:
            merged[f] = c.get(f) if unchanged and c.get(f) else now
        if "lastProbeTime" in c or "lastProbeTime" in new:
            merged["lastProbeTime"] = new.get("lastProbeTime", c.get("lastProbeTime"))
        out.append(merged)
    if not found:
        merged = {k: v for k, v in new.items() if v is not None and v != ""}
        merged["lastTransitionTime"] = now
        for f in time_fields:
            merged[f] = now
        if "lastProbeTime" in new:
            merged["lastProbeTime"] = new["lastProbeTime"]
        out.append(merged)
    return out


# ---------------------------------------------------------------------- globs
def glob_matches(pattern: str | None, value: str) -> bool:
    """Shell-style match; no pattern matches everything."""
    return pattern is None or fnmatch.fnmatchcase(value, pattern)


def merge_diff(old: Any, new: Any) -> Any:
    """The JSON merge patch (RFC 7386) that turns ``old`` into ``new``: keys
    that went away become null, nested objects are diffed, anything else is
    replaced. Writing a whole status as a plain merge patch would leave
    removed keys behind."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: dict[str, Any] = {k: None for k in old if k not in new}
    for k, v in new.items():
        if k not in old:
            patch[k] = v
        elif old[k] != v:
            patch[k] = merge_diff(old[k], v)
    return patch
