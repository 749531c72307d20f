"""The ``paths`` of an OpenAPI v3 group-version document: one path item per
collection, object and subresource URL of each resource type, with the
operations its verbs allow.

kubectl reads two things from these operations (kubectl 1.27+):

* ``kubectl explain`` finds a resource's kind through the
  ``x-kubernetes-group-version-kind`` of an operation on its collection or
  object path (``pkg/explain/v2/templates/plaintext.tmpl``);
* ``kubectl apply/create/replace`` decide between server-side and client-side
  field validation by looking for a ``fieldValidation`` query parameter on the
  PATCH operation of the kind (cli-runtime ``query_param_verifier_v3.go``), and
  ``kubectl apply`` computes a strategic merge patch from the document only when
  that PATCH operation accepts ``application/strategic-merge-patch+json``
  (kubectl ``pkg/cmd/apply/patcher.go``).

That last media type is deliberately not advertised: the patch-merge keys
strategic merge patch depends on (``x-kubernetes-patch-merge-key``) are not in
lightkube's models, so the documents here cannot carry them. kubectl then
falls back to the strategic merge patch of its own compiled-in types, which
have them, and the server still accepts strategic merge patches for built-in
kinds.
"""

from __future__ import annotations

from typing import Any

from ..resources import ResourceType

Schema = dict[str, Any]

REF_PREFIX = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
STATUS = f"{_META}.Status"
DELETE_OPTIONS = f"{_META}.DeleteOptions"
PATCH = f"{_META}.Patch"
SCALE = "io.k8s.api.autoscaling.v1.Scale"

_JSON_YAML = ("application/json", "application/yaml")
_PATCH_TYPES = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json")


def _query(name: str, type_: str, description: str) -> Schema:
    return {
        "name": name,
        "in": "query",
        "description": description,
        "schema": {"type": type_, "uniqueItems": True},
    }


_PRETTY = _query("pretty", "string", "If 'true', then the output is pretty printed.")
_DRY_RUN = _query(
    "dryRun",
    "string",
    "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry "
    "run stages will be processed",
)
_FIELD_MANAGER = _query(
    "fieldManager",
    "string",
    "fieldManager is a name associated with the actor or entity that is making these changes.",
)
_FIELD_VALIDATION = _query(
    "fieldValidation",
    "string",
    "fieldValidation instructs the server on how to handle objects in the request containing unknown or "
    "duplicate fields. Valid values are: - Ignore - Warn (the default) - Strict: fails the request on "
    "unknown or duplicate fields.",
)
_FORCE = _query(
    "force",
    "boolean",
    'Force is going to "force" Apply requests. It means user will re-acquire conflicting fields owned by '
    "other people. Force flag must be unset for non-apply patch requests.",
)
_LIST = [
    _query(
        "allowWatchBookmarks", "boolean", 'allowWatchBookmarks requests watch events with type "BOOKMARK".'
    ),
    _query(
        "continue",
        "string",
        "The continue option should be set when retrieving more results from the server.",
    ),
    _query("fieldSelector", "string", "A selector to restrict the list of returned objects by their fields."),
    _query("labelSelector", "string", "A selector to restrict the list of returned objects by their labels."),
    _query("limit", "integer", "limit is a maximum number of responses to return for a list call."),
    _query(
        "resourceVersion",
        "string",
        "resourceVersion sets a constraint on what resource versions a request may be served from.",
    ),
    _query(
        "resourceVersionMatch",
        "string",
        "resourceVersionMatch determines how resourceVersion is applied to list calls.",
    ),
    _query("sendInitialEvents", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`."),
    _query("timeoutSeconds", "integer", "Timeout for the list/watch call."),
    _query(
        "watch",
        "boolean",
        "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.",
    ),
]
_DELETE = [
    _DRY_RUN,
    _query("gracePeriodSeconds", "integer", "The duration in seconds before the object should be deleted."),
    _query("orphanDependents", "boolean", "Deprecated: please use the PropagationPolicy."),
    _query(
        "propagationPolicy",
        "string",
        "Whether and how garbage collection will be performed: Orphan, Background or Foreground.",
    ),
]


def _path_param(name: str, description: str) -> Schema:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "uniqueItems": True},
    }


def _content(schema_name: str, types: tuple[str, ...] = _JSON_YAML) -> Schema:
    return {t: {"schema": {"$ref": REF_PREFIX + schema_name}} for t in types}


def _operation_id_parts(rt: ResourceType) -> tuple[str, str]:
    """kube-apiserver's operation id prefix and tag: ``AppsV1`` and ``apps_v1``."""
    group = rt.group.removesuffix(".k8s.io") if rt.group else "core"
    words = [w for part in group.split(".") for w in part.split("-") if w]
    camel = "".join(w[:1].upper() + w[1:] for w in words)
    version = rt.version[:1].upper() + rt.version[1:]
    tag = camel[:1].lower() + camel[1:] + "_" + rt.version
    return camel + version, tag


def _article(kind: str) -> str:
    return " an " if kind[:1].lower() in "aeiou" else " a "


class _Builder:
    """Builds the operations of one resource type."""

    def __init__(self, rt: ResourceType, kind_schema: str, list_schema: str) -> None:
        self.rt = rt
        self.kind_schema = kind_schema
        self.list_schema = list_schema
        self.id_prefix, self.tag = _operation_id_parts(rt)
        self.gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}

    def op(
        self,
        action: str,
        verb: str,
        description: str,
        params: list[Schema],
        responses: Schema,
        *,
        subresource: str = "",
        scope: str | None = None,
        body: Schema | None = None,
        gvk: Schema | None = None,
    ) -> Schema:
        scope = ("Namespaced" if self.rt.namespaced else "") if scope is None else scope
        op: Schema = {
            "description": description,
            "operationId": f"{verb}{self.id_prefix}{scope}{self.rt.kind}{subresource.title()}",
            "tags": [self.tag],
            "responses": responses,
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk or self.gvk,
        }
        if params:
            op["parameters"] = params
        if body is not None:
            op["requestBody"] = {"content": body}
        return op

    def ok(self, schema: str, *extra: tuple[str, str], watch: bool = False) -> Schema:
        types = (*_JSON_YAML, "application/json;stream=watch") if watch else _JSON_YAML
        out: Schema = {"200": {"description": "OK", "content": _content(schema, types)}}
        for code, text in extra:
            out[code] = {"description": text, "content": _content(schema)}
        return out

    def collection(self, all_namespaces: bool) -> Schema:
        rt, verbs = self.rt, self.rt.verbs
        item: Schema = {"parameters": [_PRETTY]}
        if rt.namespaced and not all_namespaces:
            item["parameters"] = [
                _path_param("namespace", "object name and auth scope, such as for teams and projects"),
                _PRETTY,
            ]
        if "list" in verbs:
            item["get"] = self.op(
                "list",
                "list",
                f"list or watch objects of kind {rt.kind}",
                _LIST,
                self.ok(self.list_schema, watch=True),
                scope="" if all_namespaces else None,
            )
            if all_namespaces:
                item["get"]["operationId"] += "ForAllNamespaces"
        if all_namespaces:
            return item
        if "create" in verbs:
            item["post"] = self.op(
                "post",
                "create",
                f"create{_article(rt.kind)}{rt.kind}",
                [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                self.ok(self.kind_schema, ("201", "Created"), ("202", "Accepted")),
                body=_content(self.kind_schema, ("application/json",)),
            )
        if "deletecollection" in verbs:
            item["delete"] = self.op(
                "deletecollection",
                "deletecollection",
                f"delete collection of {rt.kind}",
                _DELETE + _LIST,
                self.ok(STATUS),
                body=_content(DELETE_OPTIONS, ("application/json",)),
            )
        return item

    def object(self, subresource: str = "") -> Schema:
        rt, verbs = self.rt, self.rt.verbs
        schema, gvk = self.kind_schema, None
        if subresource == "scale":
            schema, gvk = SCALE, {"group": "autoscaling", "kind": "Scale", "version": "v1"}
        what = f"{subresource} of the specified {rt.kind}" if subresource else f"the specified {rt.kind}"
        params = [_path_param("name", f"name of the {rt.kind}")]
        if rt.namespaced:
            params.append(
                _path_param("namespace", "object name and auth scope, such as for teams and projects")
            )
        item: Schema = {"parameters": [*params, _PRETTY]}
        kw: Schema = {"subresource": subresource, "gvk": gvk}
        if "get" in verbs:
            item["get"] = self.op("get", "read", f"read {what}", [], self.ok(schema), **kw)
        if "update" in verbs:
            item["put"] = self.op(
                "put",
                "replace",
                f"replace {what}",
                [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION],
                self.ok(schema, ("201", "Created")),
                body=_content(schema, ("application/json",)),
                **kw,
            )
        if "patch" in verbs:
            item["patch"] = self.op(
                "patch",
                "patch",
                f"partially update {what}",
                [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION, _FORCE],
                self.ok(schema, ("201", "Created")),
                body=_content(PATCH, _PATCH_TYPES),
                **kw,
            )
        if "delete" in verbs and not subresource:
            item["delete"] = self.op(
                "delete",
                "delete",
                f"delete{_article(rt.kind)}{rt.kind}",
                _DELETE,
                self.ok(STATUS, ("202", "Accepted")),
                body=_content(DELETE_OPTIONS, ("application/json",)),
            )
        return item


def resource_paths(rt: ResourceType, kind_schema: str, list_schema: str) -> dict[str, Schema]:
    """The path items of ``rt``, keyed by URL template as kube-apiserver keys them."""
    b = _Builder(rt, kind_schema, list_schema)
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    paths: dict[str, Schema] = {}
    if rt.namespaced:
        paths[f"{prefix}/{rt.plural}"] = b.collection(all_namespaces=True)
        root = f"{prefix}/namespaces/{{namespace}}/{rt.plural}"
    else:
        root = f"{prefix}/{rt.plural}"
    paths[root] = b.collection(all_namespaces=False)
    paths[f"{root}/{{name}}"] = b.object()
    if rt.status_subresource:
        paths[f"{root}/{{name}}/status"] = b.object("status")
    if rt.scale is not None:
        paths[f"{root}/{{name}}/scale"] = b.object("scale")
    return paths
