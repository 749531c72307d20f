"""PATCH requests: JSON patch, merge patch, strategic merge patch (built-in
kinds only, as the real server) and server-side apply, each turned into an
ordinary update (or, for apply, a create) of the generic registry."""

from __future__ import annotations

import json
from typing import Any

import yaml

from mo_operator.kube.meta.times import now_time

from .encoding import quantities
from .encoding.jsonutil import clone, dumps, loads
from .errors import StatusError, bad_request, conflict, field_cause, invalid, not_found, stale_conflict
from .objects import ObjectAPI, WriteOptions
from .resources import ResourceType

Obj = dict[str, Any]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
_ACCEPTED = "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"


def _unsupported(content_type: str, rt: ResourceType) -> StatusError:
    accepted = (
        _ACCEPTED
        if rt.is_custom
        else _ACCEPTED.replace(
            ", application/apply", ", application/strategic-merge-patch+json, application/apply"
        )
    )
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: {accepted}",
    )


def parse_patch_body(content_type: str, raw: bytes, rt: ResourceType) -> Any:
    if content_type == APPLY_PATCH and raw.lstrip()[:1] == b"{":
        # An apply body is YAML, and nearly every client sends it as JSON (YAML's
        # subset): the JSON parser reads it many times faster than PyYAML, and reads
        # JSON as JSON (``1e3`` is a number; PyYAML, a YAML 1.1 parser, takes it for
        # a string). A body that is not JSON goes to the YAML parser as before, which
        # gives the errors for bodies that are neither.
        try:
            return loads(raw)
        except (ValueError, RecursionError):  # not JSON, or nested too deep for its decoder
            pass
    try:
        if content_type == APPLY_PATCH:
            return yaml.safe_load(raw.decode()) if raw.strip() else {}
        return loads(raw)
    except Exception as e:  # malformed bodies are the client's fault
        raise bad_request(f"error decoding patch: {e}") from e


async def patch(
    api: ObjectAPI,
    rt: ResourceType,
    namespace: str,
    name: str,
    content_type: str,
    body: Any,
    opts: WriteOptions,
    subresource: str = "",
) -> Obj:
    if content_type == STRATEGIC_PATCH and rt.is_custom:
        raise _unsupported(content_type, rt)
    if content_type not in (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH):
        # Not a patch type at all: refused before the resource's handler, by
        # the route's content negotiation, in its own words.
        raise StatusError(415, "UnsupportedMediaType", "415: Unsupported Media Type", details={})

    from .patching.json_patch import PatchError, apply_json_patch
    from .patching.merge_patch import apply_merge_patch
    from .patching.strategic_merge import apply_strategic_merge_patch
    from .patching.typeinfo import type_info_for

    if content_type == APPLY_PATCH:
        return await _apply(api, rt, namespace, name, body, opts, subresource)
    old = api.find(rt, namespace, name)
    if old is None:
        raise not_found(rt.group_resource, name)
    base = clone(old)
    if content_type == JSON_PATCH and not isinstance(body, list):
        raise bad_request(
            f"error decoding patch: json: cannot unmarshal {_json_type(body)} into Go value of type []handlers.jsonPatchOp"
        )
    try:
        if content_type == JSON_PATCH:
            new = apply_json_patch(base, body)
        elif content_type == MERGE_PATCH:
            new = apply_merge_patch(base, body)
        else:
            new = apply_strategic_merge_patch(base, body, type_info_for(rt))
    except PatchError as e:
        if content_type == JSON_PATCH:
            # kube-apiserver wraps every failed operation (a test that fails,
            # a missing path) in a 422 that keeps none of its words.
            message = "the server rejected our request due to an error in our request"
            raise StatusError(422, "Invalid", message, details={}) from e
        raise StatusError(422, "Invalid", str(e)) from e
    if not isinstance(new, dict) or not isinstance(new.get("metadata"), dict):
        raise bad_request("the patch produced an object without metadata")
    if content_type != JSON_PATCH:
        # decoded into the resource's type, whatever kind the patch named
        new["apiVersion"], new["kind"] = rt.api_version, rt.kind
    new = _decode_quantities(rt, new)
    rv = new["metadata"].get("resourceVersion")
    if rv and rv != old["metadata"]["resourceVersion"]:
        raise stale_conflict(rt.group_resource, name)
    if new["metadata"].get("uid") not in (None, old["metadata"]["uid"]):
        raise conflict(
            rt.group_resource,
            name,
            f"Precondition failed: UID in precondition: {new['metadata']['uid']}, UID in object meta: {old['metadata']['uid']}",
        )
    return await api.replace_with(rt, old, new, opts, subresource)


def _decode_quantities(rt: ResourceType, patched: Obj) -> Obj:
    """The patched object decoded into the Go type: quantities canonical, and
    one that does not parse refused as kube-apiserver's patcher refuses a
    patched object it cannot decode (422 on the field ``patch``, handlers/patch.go)."""
    if rt.is_custom:
        return patched
    try:
        return quantities.canonicalize(rt.api_version, rt.kind, patched)
    except quantities.QuantityError as e:
        raise invalid(
            "",
            "",
            "",
            [field_cause("patch", f"Invalid value: {json.dumps(dumps(patched).decode())}: {e.message}")],
        ) from None


async def _apply(
    api: ObjectAPI,
    rt: ResourceType,
    namespace: str,
    name: str,
    body: Any,
    opts: WriteOptions,
    subresource: str,
) -> Obj:
    from .patching.managed_fields import ApplyConflict, server_side_apply
    from .patching.typeinfo import type_info_for

    if not opts.field_manager:
        raise invalid(
            "PatchOptions",
            "meta.k8s.io",
            "",
            [
                field_cause(
                    "fieldManager", "Required value: is required for apply patch", "FieldValueRequired"
                )
            ],
        )
    if not isinstance(body, dict):
        raise bad_request("apply patch must be an object")
    if not body.get("apiVersion") or not body.get("kind"):
        group, _, version = str(body.get("apiVersion") or "").rpartition("/")
        raise bad_request(f"invalid object type: {group}/{version}, Kind={body.get('kind') or ''}")
    applied = clone(body)
    meta = applied.setdefault("metadata", {})
    if meta.get("name") not in (None, name):
        raise bad_request(
            f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})"
        )
    meta["name"] = name
    if rt.namespaced:
        meta["namespace"] = namespace
    if applied.get("kind") not in (None, rt.kind):
        raise bad_request(
            f"the kind in the data ({applied.get('kind')}) does not match the expected kind ({rt.kind})"
        )
    applied.setdefault("apiVersion", rt.api_version)
    applied.setdefault("kind", rt.kind)
    if subresource == "" and rt.status_subresource:
        applied.pop("status", None)
    old = api.find(rt, namespace, name)
    if (
        old is not None
        and meta.get("resourceVersion")
        and meta["resourceVersion"] != old["metadata"]["resourceVersion"]
    ):
        raise stale_conflict(rt.group_resource, name)
    meta.pop("resourceVersion", None)
    try:
        new = server_side_apply(
            clone(old) if old is not None else None,
            applied,
            manager=opts.field_manager,
            force=opts.force,
            type_info=type_info_for(rt),
            now=now_time(),
            subresource=subresource,
        )
    except ApplyConflict as e:
        # kube-apiserver's conflict Status carries the causes alone.
        raise StatusError(409, "Conflict", e.message, details={"causes": e.causes}) from e
    managed = new["metadata"].get("managedFields") or []
    if old is None:
        if subresource:
            raise not_found(rt.group_resource, name)
        new["metadata"].pop("managedFields", None)
        return await api.create(rt, namespace, new, opts, managed=managed)
    return await api.replace_with(rt, old, new, opts, subresource, managed=managed)


def _json_type(value: Any) -> str:
    """The JSON type as Go's decoder names it in an unmarshalling error."""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return "null"
