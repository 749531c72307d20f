"""The OpenAPI v3 documents kube-apiserver serves under ``/openapi/v3``: an
index of group-versions, and per group-version a document with the paths of
its resources and the schemas of their kinds.

kubectl 1.27+ reads these for ``kubectl explain`` and to decide whether the
server validates fields itself (``kubectl apply/create`` then sends
``fieldValidation`` instead of validating client-side). Built-in kinds are
described from lightkube's models (``models``), custom resources from
their CRD's ``openAPIV3Schema`` as the apiextensions-apiserver builder does
(``pkg/controller/openapi/builder/builder.go``): ``apiVersion``, ``kind`` and a
``metadata`` ref to ObjectMeta added, the schema named by the reversed group
(``io.matrixorigin.core.v1alpha1.MatrixOneCluster``), and a ``<Kind>List``.

``/openapi/v2`` is answered with an empty document (``openapi_v2``). kubectl
still reads v2 where v3 cannot answer: client-side validation of a ``kind:
List`` file (``kubectl create -f list.yaml``), which fails on a 404 but skips
kinds an empty document does not describe; and strategic merge patch in
``kubectl apply``, which then falls back to kubectl's compiled-in types.

Documents are built once per set of types and kept: the index names each
document with the hash of its content, as kube-apiserver does, so clients can
cache a document for as long as its URL stays the same.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from lightkube.models import autoscaling_v1, meta_v1

from ..resources import ResourceType
from .models import REF_PREFIX, ModelSchemas, model_class
from .paths import resource_paths

Schema = dict[str, Any]

_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_LIST_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"
_CONVENTIONS = "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
_API_VERSION: Schema = {
    "description": "APIVersion defines the versioned schema of this representation of an object. Servers "
    "should convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    f"More info: {_CONVENTIONS}#resources",
    "type": "string",
}
_KIND: Schema = {
    "description": "Kind is a string value representing the REST resource this object represents. Servers "
    "may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. "
    f"More info: {_CONVENTIONS}#types-kinds",
    "type": "string",
}
_METADATA: Schema = {
    "$ref": REF_PREFIX + _OBJECT_META,
    "description": f"Standard object's metadata. More info: {_CONVENTIONS}#metadata",
}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
_CACHE_SIZE = 64


# Asked for as ``...spec.v2@v1.0+protobuf``; answered with a media type Go can parse.
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


def openapi_v2(accept: str) -> tuple[bytes, str]:
    """The ``/openapi/v2`` body and content type: an empty Swagger document.

    kubectl asks for protobuf, where an empty message is a valid, empty
    ``openapi_v2.Document``; other clients get the same as JSON."""
    if "protobuf" in accept:
        return b"", OPENAPI_V2_PROTOBUF
    empty = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "unversioned"}, "paths": {}}
    return json.dumps(empty).encode(), "application/json"


def group_version_path(group: str, version: str) -> str:
    """The index key of a group-version: ``api/v1`` or ``apis/<group>/<version>``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def openapi_index(types: Iterable[ResourceType]) -> dict[str, Any]:
    """The ``/openapi/v3`` document: every served group-version and the URL of
    its document, which carries the document's hash."""
    by_gv = _by_group_version(types)
    paths = {}
    for (group, version), gv_types in by_gv.items():
        _, digest = _cached_document(group, version, gv_types)
        key = group_version_path(group, version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


def openapi_document(group: str, version: str, types: Iterable[ResourceType]) -> dict[str, Any] | None:
    """The ``/openapi/v3/api/v1`` (or ``/apis/<group>/<version>``) document, or
    None when no type is served in that group-version (kube-apiserver answers
    404 then)."""
    gv_types = _by_group_version(types).get((group, version))
    if not gv_types:
        return None
    return _cached_document(group, version, gv_types)[0]


def _by_group_version(types: Iterable[ResourceType]) -> dict[tuple[str, str], list[ResourceType]]:
    out: dict[tuple[str, str], list[ResourceType]] = {}
    for rt in types:
        out.setdefault((rt.group, rt.version), []).append(rt)
    return out


_cache: OrderedDict[str, tuple[dict[str, Any], str]] = OrderedDict()


def _cached_document(group: str, version: str, types: list[ResourceType]) -> tuple[dict[str, Any], str]:
    """The document of a group-version and its hash, built once per distinct
    set of types (a ResourceType's own hash leaves out its schema, so the key
    is a fingerprint of every field)."""
    key = hashlib.sha256("\0".join([group, version, *map(_fingerprint, types)]).encode()).hexdigest()
    hit = _cache.get(key)
    if hit is not None:
        _cache.move_to_end(key)
        return hit
    doc = build_document(group, version, types)
    digest = (
        hashlib.sha512(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()).hexdigest().upper()
    )
    _cache[key] = (doc, digest)
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return doc, digest


_fingerprints: dict[int, tuple[ResourceType, str]] = {}


def _fingerprint(rt: ResourceType) -> str:
    """A digest of every field of ``rt``, remembered per object: types are
    immutable and live as long as the registry serves them, while their schemas
    can be large."""
    hit = _fingerprints.get(id(rt))
    if hit is not None and hit[0] is rt:
        return hit[1]
    fields = dataclasses.astuple(dataclasses.replace(rt, schema=None))
    text = json.dumps([fields, rt.schema], sort_keys=True, default=str)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if len(_fingerprints) > 4 * _CACHE_SIZE:
        _fingerprints.clear()
    _fingerprints[id(rt)] = (rt, digest)
    return digest


def build_document(group: str, version: str, types: Iterable[ResourceType]) -> dict[str, Any]:
    """A fresh (uncached) OpenAPI v3 document for the given types."""
    models = ModelSchemas()
    paths: dict[str, Schema] = {}
    for rt in types:
        kind_name, list_name = _add_kind(models, rt)
        paths.update(resource_paths(rt, kind_name, list_name))
        if rt.scale is not None:
            models.add(autoscaling_v1.Scale)
    for cls in (meta_v1.Status, meta_v1.DeleteOptions, meta_v1.ObjectMeta, meta_v1.ListMeta):
        models.add(cls)
    models.named(meta_v1.ObjectMeta, "Patch")  # the type of every PATCH body
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "unversioned"},
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": dict(sorted(models.schemas.items()))},
    }


def _gvk(rt: ResourceType, kind: str) -> list[dict[str, str]]:
    return [{"group": rt.group, "kind": kind, "version": rt.version}]


def _add_kind(models: ModelSchemas, rt: ResourceType) -> tuple[str, str]:
    """Adds the schemas of ``rt``'s kind and list kind; returns their names."""
    cls = None if rt.is_custom else model_class(rt.group, rt.version, rt.kind)
    list_cls = None if cls is None else model_class(rt.group, rt.version, rt.list_kind)
    if cls is not None and list_cls is not None:
        kind_name, list_name = models.add(cls), models.add(list_cls)
    else:
        kind_name = custom_schema_name(rt.group, rt.version, rt.kind)
        list_name = custom_schema_name(rt.group, rt.version, rt.list_kind)
        models.schemas[kind_name] = custom_kind_schema(rt)
        models.schemas[list_name] = _list_schema(rt, kind_name)
        models.add(meta_v1.ObjectMeta)
        models.add(meta_v1.ListMeta)
    models.schemas[kind_name]["x-kubernetes-group-version-kind"] = _gvk(rt, rt.kind)
    models.schemas[list_name]["x-kubernetes-group-version-kind"] = _gvk(rt, rt.list_kind)
    return kind_name, list_name


def custom_schema_name(group: str, version: str, kind: str) -> str:
    """The schema name of a custom kind: the group reversed, then version and kind."""
    return ".".join([*reversed(group.split(".")), version, kind])


def custom_kind_schema(rt: ResourceType) -> Schema:
    """The CRD's ``openAPIV3Schema`` as published: int-or-string unfolded, the
    type meta and object meta properties added at the root and on embedded
    resources. A CRD without a schema is published as a bare object."""
    if not rt.schema:
        return {"type": "object"}
    schema = _unfold(copy.deepcopy(rt.schema))
    props = schema.setdefault("properties", {})
    props["apiVersion"] = dict(_API_VERSION)
    props["kind"] = dict(_KIND)
    props["metadata"] = dict(_METADATA)
    return schema


def _unfold(s: Schema) -> Schema:
    """What the structural schema's ``Unfold`` adds before publishing
    (apiextensions-apiserver ``pkg/apiserver/schema/unfold.go``)."""
    for sub in (s.get("properties") or {}).values():
        _unfold(sub)
    for key in ("items", "additionalProperties", "not"):
        if isinstance(s.get(key), dict):
            _unfold(s[key])
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in s.get(key) or []:
            _unfold(sub)
    if s.get("x-kubernetes-int-or-string") and not _is_int_or_string_anyof(s):
        if not s.get("anyOf"):
            s["anyOf"] = copy.deepcopy(_INT_OR_STRING)
        else:
            s["allOf"] = [{"anyOf": copy.deepcopy(_INT_OR_STRING)}, *(s.get("allOf") or [])]
    if s.get("x-kubernetes-embedded-resource"):
        props = s.setdefault("properties", {})
        props["apiVersion"] = dict(_API_VERSION)
        props["kind"] = dict(_KIND)
        props["metadata"] = dict(_METADATA)
        required = s.setdefault("required", [])
        required.extend(k for k in ("kind", "apiVersion") if k not in required)
    return s


def _is_int_or_string_anyof(s: Schema) -> bool:
    def pattern(any_of: Any) -> bool:
        return isinstance(any_of, list) and [a.get("type") for a in any_of] == ["integer", "string"]

    first_all_of = (s.get("allOf") or [{}])[0]
    return pattern(s.get("anyOf")) or pattern(first_all_of.get("anyOf"))


def _list_schema(rt: ResourceType, kind_name: str) -> Schema:
    return {
        "description": f"{rt.list_kind} is a list of {rt.kind}",
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": dict(_API_VERSION),
            "items": {
                "description": f"List of {rt.plural}. More info: {_CONVENTIONS}",
                "type": "array",
                "items": {"$ref": REF_PREFIX + kind_name},
            },
            "kind": dict(_KIND),
            "metadata": {
                "$ref": REF_PREFIX + _LIST_META,
                "description": f"Standard list metadata. More info: {_CONVENTIONS}#metadata",
            },
        },
    }
