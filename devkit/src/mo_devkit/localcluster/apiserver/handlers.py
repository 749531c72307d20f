"""HTTP handlers of resource requests: verbs, query parameters, content
negotiation (JSON or server-side printed Tables), lists with pagination, and
the special subresources (status, scale, binding, eviction, finalize)."""

from __future__ import annotations

import base64
import datetime
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict

from mo_operator.kube.meta.times import now_time

from . import patch_ops, scale
from .encoding.jsonutil import dumps, loads
from .errors import StatusError, bad_request, field_cause, gone, invalid, method_not_allowed, not_found
from .eviction import Evictions
from .objects import ObjectAPI, WriteOptions
from .protobuf import codec as protobuf
from .resources import ResourceType
from .routing import Target
from .selectors import parse_field_selector, parse_label_selector
from .storage.store import Expired
from .storage.watch import WatchSettings, serve_watch

Obj = dict[str, Any]
_TRUE = ("true", "1", "True")


def warning_header(text: str) -> str:
    """One ``Warning`` header value as kube-apiserver writes it
    (``net.NewWarningHeader(299, "-", text)``): the text is a quoted-string, so
    ``"`` and ``\\`` are escaped with a backslash; clients (kubectl, client-go)
    silently drop a value whose quoting is broken. Line breaks become spaces, as
    Go's ``http.Header`` writes them, since a header value cannot hold them."""
    text = text.replace("\r", " ").replace("\n", " ")
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def json_response(body: Any, status: int = 200, warnings: list[str] | None = None) -> web.Response:
    """A JSON answer; each distinct warning is a ``Warning`` header of its own, as
    kube-apiserver's warning recorder adds them (duplicates dropped)."""
    headers: CIMultiDict[str] = CIMultiDict()
    for text in dict.fromkeys(warnings or ()):
        if text:
            headers.add("Warning", warning_header(text))
    return web.Response(body=dumps(body), status=status, content_type="application/json", headers=headers)


def wants_table(request: web.Request) -> bool:
    accept = request.headers.get("Accept", "")
    first = accept.split(",")[0]
    return "as=Table" in first


_RETURNS_DELETED = frozenset(
    {
        ("", "pods"),
        ("", "services"),
        ("", "serviceaccounts"),
        ("", "persistentvolumeclaims"),
        ("", "persistentvolumes"),
        ("storage.k8s.io", "storageclasses"),
    }
)
"""Resources whose delete answers with the deleted object, not a Status
(``ReturnDeletedObject`` in their registries)."""

_OPTIONS_KINDS = {
    "POST": "CreateOptions",
    "PUT": "UpdateOptions",
    "PATCH": "PatchOptions",
    "DELETE": "DeleteOptions",
}


def write_options(request: web.Request) -> WriteOptions:
    """The write's options; invalid ones are a 422 on the options kind, as
    kube-apiserver validates CreateOptions, UpdateOptions... (apimachinery
    pkg/apis/meta/v1/validation)."""
    q = request.query
    dry = q.getall("dryRun", [])
    options_kind = _OPTIONS_KINDS.get(request.method, "CreateOptions")
    if any(d != "All" for d in dry):
        listed = ", ".join(f'"{d}"' for d in dry)
        cause = field_cause(
            "dryRun",
            f'Unsupported value: []string{{{listed}}}: supported values: "All"',
            "FieldValueNotSupported",
        )
        raise invalid(options_kind, "meta.k8s.io", "", [cause])
    validation = q.get("fieldValidation", "Warn")
    if validation not in ("Strict", "Warn", "Ignore", ""):
        cause = field_cause(
            "fieldValidation",
            f'Unsupported value: "{validation}": supported values: "", "Ignore", "Strict", "Warn"',
            "FieldValueNotSupported",
        )
        raise invalid(options_kind, "meta.k8s.io", "", [cause])
    validation = validation or "Warn"
    return WriteOptions(
        field_manager=q.get("fieldManager", ""),
        dry_run=bool(dry),
        field_validation=validation,
        user_agent=request.headers.get("User-Agent", ""),
        force=q.get("force", "") in _TRUE,
    )


async def read_body(request: web.Request, rt: ResourceType, *, delete_options: bool = False) -> Any:
    """The request body as JSON: JSON, YAML, or (built-in kinds, and
    DeleteOptions for any resource) Kubernetes protobuf. kube-apiserver decodes
    DeleteOptions with its own codecs, which speak protobuf even for custom
    resources (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/delete.go)."""
    raw = await request.read()
    if not raw:
        return {}
    ctype = request.content_type
    if ctype == protobuf.CONTENT_TYPE and (delete_options or not rt.is_custom):
        try:
            body = protobuf.decode(raw)
        except protobuf.DecodeError as e:
            raise bad_request(e.describe("DeleteOptions" if delete_options else rt.kind)) from e
        if delete_options and body["kind"] != "DeleteOptions":
            raise bad_request("decoded object cannot be converted to DeleteOptions")
        return body
    if "protobuf" in ctype or "cbor" in ctype:
        # Custom resources have no protobuf form; CBOR is not spoken here.
        accepted = "application/json, application/yaml"
        if not rt.is_custom:
            accepted += ", application/vnd.kubernetes.protobuf"
        raise StatusError(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types include: {accepted} (got {ctype})",
        )
    try:
        if ctype in ("application/yaml", "application/apply-patch+yaml"):
            import yaml

            return yaml.safe_load(raw.decode())
        return loads(raw)
    except Exception as e:
        if delete_options:
            raise bad_request(f"error decoding request body: {e}") from e
        raise bad_request(
            f"the object provided is unrecognized (must be of type {rt.kind}): "
            f"couldn't get version/kind; json parse error: {e}"
        ) from e


class ResourceHandlers:
    """The resource endpoints, over the server's object API and its watch settings;
    the server routes to them and they know nothing else of it."""

    def __init__(self, api: ObjectAPI, watch_settings: WatchSettings, evictions: Evictions) -> None:
        self.api = api
        self.watch_settings = watch_settings
        self.evictions = evictions

    async def handle(self, request: web.Request, t: Target) -> web.StreamResponse:
        method = request.method
        sub = t.subresource
        if sub and sub not in ("status", "scale", "binding", "eviction", "finalize"):
            raise not_found(t.rt.group_resource, t.name)
        if sub == "eviction" and (t.rt.group, t.rt.kind) != ("", "Pod"):
            raise not_found(t.rt.group_resource, t.name)
        if sub == "scale" and t.rt.scale is None:
            raise not_found(t.rt.group_resource, t.name)
        if sub == "status" and not t.rt.status_subresource:
            raise not_found(t.rt.group_resource, t.name)
        if method == "GET":
            if t.name:
                return self._get(request, t)
            if request.query.get("watch") in _TRUE:
                return await self._watch(request, t)
            return self._list(request, t)
        if method == "POST":
            if sub == "binding" or (t.rt.kind == "Binding"):
                return await self._bind(request, t)
            if sub == "eviction":
                return await self._evict(request, t)
            if t.name:
                raise method_not_allowed("the server does not allow this method on the requested resource")
            return await self._create(request, t)
        if method == "PUT":
            if not t.name:
                raise method_not_allowed("the server does not allow this method on the requested resource")
            return await self._update(request, t)
        if method == "PATCH":
            if not t.name:
                raise method_not_allowed("the server does not allow this method on the requested resource")
            return await self._patch(request, t)
        if method == "DELETE":
            if t.name:
                return await self._delete(request, t)
            return await self._delete_collection(request, t)
        raise method_not_allowed(f"{method} is not supported")

    # ------------------------------------------------------------------ reads
    def _render_one(self, request: web.Request, rt: ResourceType, obj: Obj) -> web.Response:
        if wants_table(request):
            return json_response(
                self._table(
                    request, rt, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
                )
            )
        return json_response(obj)

    def _table(self, request: web.Request, rt: ResourceType, objs: list[Obj], list_meta: Obj) -> Obj:
        from .tables import to_table

        include = request.query.get("includeObject", "Metadata")
        table = to_table(rt, objs, include_object=include, now=datetime.datetime.now(datetime.UTC))
        table["metadata"] = list_meta
        return table

    def _get(self, request: web.Request, t: Target) -> web.Response:
        obj = self.api.get(t.rt, t.namespace, t.name)
        if t.subresource == "scale":
            return json_response(scale.to_scale(t.rt, obj))
        return self._render_one(request, t.rt, obj)

    def _selectors(self, request: web.Request, rt: ResourceType) -> Any:
        q = request.query
        label = parse_label_selector(q["labelSelector"]) if q.get("labelSelector") else None
        field = parse_field_selector(q["fieldSelector"], rt.kind) if q.get("fieldSelector") else None
        if label and field:
            return lambda o: label(o) and field(o)
        return label or field or (lambda o: True)

    def _list(self, request: web.Request, t: Target) -> web.Response:
        q = request.query
        store = self.api.store
        matches = self._selectors(request, t.rt)
        version, match = _list_version(q, watch=False)
        limit = int(q.get("limit", "0") or 0)
        if version == 0 and match != "Exact":
            limit = 0  # served from the watch cache, which ignores limit
        cont = q.get("continue", "")
        if cont:
            try:
                token = loads(base64.urlsafe_b64decode(cont.encode()))
                snap_key, offset = token["s"], int(token["o"])
            except Exception as e:
                raise bad_request(f"invalid continue token: continue key is not valid: {e}") from e
            snap = store.get_snapshot(snap_key)
            if snap is None:
                raise gone(
                    "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
                )
            items, rv = snap.items, snap.rv
        else:
            snap_key, offset = "", 0
            namespace = None if t.all_namespaces else t.namespace
            rv = store.rv
            if version is not None and match == "Exact":
                try:
                    listed = store.list_at(t.rt.group_resource, namespace, version)
                except Expired as e:
                    raise gone("The resourceVersion for the provided list is too old.") from e
                rv = version
            else:
                listed = store.list(t.rt.group_resource, namespace)
            items = [o for o in listed if matches(o)]
        meta: Obj = {"resourceVersion": str(rv)}
        page = items[offset:]
        if limit and len(page) > limit:
            if not snap_key:
                snap_key = store.snapshot(items)
            page = page[:limit]
            next_offset = offset + limit
            meta["continue"] = base64.urlsafe_b64encode(dumps({"s": snap_key, "o": next_offset})).decode()
            if not q.get("labelSelector") and not q.get("fieldSelector"):
                # etcd counts what is left only when nothing is filtered out
                meta["remainingItemCount"] = len(items) - next_offset
        elif snap_key:
            store.drop_snapshot(snap_key)
        if wants_table(request):
            return json_response(self._table(request, t.rt, page, meta))
        if not t.rt.is_custom:
            page = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in page]
        return json_response(
            {"kind": t.rt.list_kind, "apiVersion": t.rt.api_version, "metadata": meta, "items": page}
        )

    async def _watch(self, request: web.Request, t: Target) -> web.StreamResponse:
        q = request.query
        _list_version(q, watch=True)
        matches = self._selectors(request, t.rt)
        render = None
        if wants_table(request):
            rt = t.rt

            def render(obj: Obj) -> bytes:
                return dumps(
                    self._table(
                        request, rt, [obj], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
                    )
                )

        timeout = float(q["timeoutSeconds"]) if q.get("timeoutSeconds") else None
        bookmarks = q.get("allowWatchBookmarks") in _TRUE
        send_initial = _send_initial_events(q, bookmarks)
        return await serve_watch(
            request,
            self.api.store,
            t.rt,
            None if t.all_namespaces else t.namespace,
            q.get("resourceVersion"),
            matches,
            bookmarks=bookmarks,
            send_initial_events=send_initial,
            timeout=timeout,
            settings=self.watch_settings,
            render=render,
        )

    # ----------------------------------------------------------------- writes
    async def _create(self, request: web.Request, t: Target) -> web.Response:
        opts = write_options(request)
        body = await read_body(request, t.rt)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        obj = await self.api.create(t.rt, t.namespace, body, opts)
        return json_response(obj, 201, opts.warnings)

    async def _update(self, request: web.Request, t: Target) -> web.Response:
        opts = write_options(request)
        body = await read_body(request, t.rt)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        if t.subresource == "scale":
            scaled = await scale.write_scale(self.api, t.rt, t.namespace, t.name, body, opts)
            return json_response(scaled, 200, opts.warnings)
        if t.subresource == "finalize":
            return json_response(await self._finalize_namespace(t, body, opts))
        obj = await self.api.update(t.rt, t.namespace, t.name, body, opts, t.subresource)
        return json_response(obj, 200, opts.warnings)

    async def _patch(self, request: web.Request, t: Target) -> web.Response:
        opts = write_options(request)
        ctype = request.content_type
        raw = await request.read()
        body = patch_ops.parse_patch_body(ctype, raw, t.rt)
        if t.subresource == "scale":
            from .patching.json_patch import apply_json_patch
            from .patching.merge_patch import apply_merge_patch
            from .scale import to_scale

            current = to_scale(t.rt, self.api.get(t.rt, t.namespace, t.name))
            if ctype == patch_ops.JSON_PATCH:
                desired = apply_json_patch(current, body)
            else:
                desired = apply_merge_patch(current, body)
            scaled = await scale.write_scale(self.api, t.rt, t.namespace, t.name, desired, opts)
            return json_response(scaled, 200, opts.warnings)
        existed = self.api.find(t.rt, t.namespace, t.name) is not None
        obj = await patch_ops.patch(self.api, t.rt, t.namespace, t.name, ctype, body, opts, t.subresource)
        return json_response(obj, 200 if existed else 201, opts.warnings)

    async def _delete(self, request: web.Request, t: Target) -> web.Response:
        opts = write_options(request)
        body = await read_body(request, t.rt, delete_options=True)
        options = body if isinstance(body, dict) else {}
        q = request.query
        if "propagationPolicy" in q:
            options["propagationPolicy"] = q["propagationPolicy"]
        if "gracePeriodSeconds" in q:
            options["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
        obj = await self.api.delete(t.rt, t.namespace, t.name, options, opts)
        still_there = self.api.find(t.rt, t.namespace, t.name) is not None
        if (obj["metadata"].get("deletionTimestamp") and still_there) or (
            t.rt.group,
            t.rt.plural,
        ) in _RETURNS_DELETED:
            return json_response(obj, 200)
        details = {"name": t.name, "kind": t.rt.plural, "uid": obj["metadata"].get("uid", "")}
        if t.rt.group:
            details["group"] = t.rt.group
        return json_response(
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
        )

    async def _delete_collection(self, request: web.Request, t: Target) -> web.Response:
        opts = write_options(request)
        body = await read_body(request, t.rt, delete_options=True)
        options = body if isinstance(body, dict) else {}
        matches = self._selectors(request, t.rt)
        items = [
            o
            for o in self.api.store.list(t.rt.group_resource, None if t.all_namespaces else t.namespace)
            if matches(o)
        ]
        deleted = []
        for o in items:
            try:
                deleted.append(
                    await self.api.delete(
                        t.rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], dict(options), opts
                    )
                )
            except StatusError as e:
                if e.code != 404:
                    raise
        return json_response(
            {
                "kind": t.rt.list_kind,
                "apiVersion": t.rt.api_version,
                "metadata": {"resourceVersion": str(self.api.store.rv)},
                "items": deleted,
            }
        )

    # -------------------------------------------------------- special cases
    async def _bind(self, request: web.Request, t: Target) -> web.Response:
        """pods/binding: what the scheduler posts (pkg/registry/core/pod/storage)."""
        body = await read_body(request, t.rt)
        opts = write_options(request)
        name = t.name or (body.get("metadata") or {}).get("name", "")
        pod = self.api.get(t.rt, t.namespace, name)
        node = ((body.get("target") or {}).get("name")) or ""
        if not node:
            raise bad_request("target.name is required")
        if pod["metadata"].get("deletionTimestamp"):
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is being deleted, cannot be assigned to a host',
            )
        if (pod.get("spec") or {}).get("nodeName"):
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"',
            )
        from .encoding.jsonutil import clone

        new = clone(pod)
        new["spec"]["nodeName"] = node
        status = new.setdefault("status", {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append(
            {
                "type": "PodScheduled",
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": now_time(),
            }
        )
        status["conditions"] = conds
        merged = dict(new)
        await self.api.replace_with(t.rt, pod, merged, opts, "")
        stored = self.api.get(t.rt, t.namespace, name)
        if stored.get("status") != status:
            await self.api.replace_with(t.rt, stored, dict(stored, status=status), opts, "status")
        return json_response(
            {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}, 201
        )

    async def _evict(self, request: web.Request, t: Target) -> web.Response:
        """pods/eviction: a deletion a PodDisruptionBudget may refuse (``eviction.py``)."""
        opts = write_options(request)
        body = await read_body(request, t.rt)
        if not isinstance(body, dict):
            raise bad_request("the request body must be a JSON object")
        answer = await self.evictions.evict(t.namespace, t.name, body, opts)
        return json_response(answer, int(answer["code"]))

    async def _finalize_namespace(self, t: Target, body: Obj, opts: WriteOptions) -> Obj:
        from .encoding.jsonutil import clone

        old = self.api.get(t.rt, "", t.name)
        new = clone(old)
        new.setdefault("spec", {})["finalizers"] = list((body.get("spec") or {}).get("finalizers") or [])
        return await self.api.replace_with(t.rt, old, new, opts, "")


def _send_initial_events(q: Mapping[str, str], bookmarks: bool) -> bool | None:
    """``sendInitialEvents`` of a watch (KEP-3157, the streaming list client-go
    and kubectl 1.3x use), checked as ``ValidateListOptions`` does."""
    raw = q.get("sendInitialEvents")
    match = q.get("resourceVersionMatch", "")
    causes = []
    if raw is None:
        if match:
            causes.append(
                field_cause(
                    "resourceVersionMatch",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    "FieldValueForbidden",
                )
            )
    else:
        if match != "NotOlderThan":
            causes.append(
                field_cause(
                    "resourceVersionMatch",
                    "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    "FieldValueForbidden",
                )
            )
        if raw in _TRUE and not bookmarks:
            causes.append(
                field_cause(
                    "allowWatchBookmarks",
                    "Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true",
                    "FieldValueForbidden",
                )
            )
    if causes:
        raise invalid("ListOptions", "meta.k8s.io", "", causes)
    return None if raw is None else raw in _TRUE


def _list_version(q: Mapping[str, str], *, watch: bool) -> tuple[int | None, str]:
    """The list or watch's resourceVersion (None when not given) and
    resourceVersionMatch, refused as kube-apiserver refuses them: a list's
    match without a version is a 422 on ListOptions (a watch's match is
    checked with sendInitialEvents), a version that is not a number a 500
    (the storage layer's parse error, with no reason)."""
    raw, match = q.get("resourceVersion", ""), q.get("resourceVersionMatch", "")
    if match and not raw and not watch:
        cause = field_cause(
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            "FieldValueForbidden",
        )
        raise invalid("ListOptions", "meta.k8s.io", "", [cause])
    if not raw:
        return None, match
    if not raw.isdigit():
        raise StatusError(
            500,
            "",
            f'resourceVersion: Invalid value: "{raw}": strconv.ParseUint: parsing "{raw}": invalid syntax',
        )
    return int(raw), match
