"""The scale subresource (autoscaling/v1 Scale) of StatefulSets, Deployments,
ReplicaSets and custom resources that declare one: how `kubectl scale` and
autoscalers change replicas without touching the rest of the object."""

from __future__ import annotations

from typing import Any

from .encoding.jsonutil import clone
from .errors import bad_request, stale_conflict
from .objects import ObjectAPI, WriteOptions
from .resources import ResourceType
from .selectors import label_selector_string

Obj = dict[str, Any]


def _get_path(obj: Obj, path: str) -> Any:
    cur: Any = obj
    for part in path.lstrip(".").split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.lstrip(".").split(".")
    cur = obj
    for part in parts[:-1]:
        cur = cur.setdefault(part, {})
    cur[parts[-1]] = value


def _selector_string(sel: Any) -> str:
    """A CRD's ``labelSelectorPath`` holds the string form already; a built-in's ``spec.selector``
    is a LabelSelector, written as ``labels.Selector.String()``."""
    return sel if isinstance(sel, str) else label_selector_string(sel)


def to_scale(rt: ResourceType, obj: Obj) -> Obj:
    assert rt.scale is not None
    meta = obj["metadata"]
    replicas = _get_path(obj, rt.scale.spec_replicas_path)
    status_replicas = _get_path(obj, rt.scale.status_replicas_path)
    status: Obj = {"replicas": int(status_replicas or 0)}
    if rt.scale.label_selector_path:
        sel = _get_path(obj, rt.scale.label_selector_path)
        if sel:
            status["selector"] = _selector_string(sel)
    if not rt.is_custom and isinstance((obj.get("spec") or {}).get("selector"), dict):
        status["selector"] = _selector_string(obj["spec"]["selector"])
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": int(replicas or 0)},
        "status": status,
    }


def with_scale_replicas(rt: ResourceType, obj: Obj, scale: Obj) -> Obj:
    """``obj`` with the replicas of ``scale`` (a Scale an admission webhook patched)."""
    assert rt.scale is not None
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise bad_request("spec.replicas must be a non-negative integer")
    out: Obj = clone(obj)
    _set_path(out, rt.scale.spec_replicas_path, replicas)
    return out


async def write_scale(
    api: ObjectAPI, rt: ResourceType, namespace: str, name: str, scale: Obj, opts: WriteOptions
) -> Obj:
    assert rt.scale is not None
    old = api.get(rt, namespace, name)
    rv = (scale.get("metadata") or {}).get("resourceVersion")
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise stale_conflict(rt.group_resource, name)
    replicas = (scale.get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise bad_request("spec.replicas must be a non-negative integer")
    new = clone(old)
    _set_path(new, rt.scale.spec_replicas_path, replicas)
    stored = await api.replace_with(rt, old, new, opts, subresource="scale")
    return to_scale(rt, stored)
