"""Dynamic admission: calls the mutating then the validating webhooks that
match a request, over TLS verified with their caBundle, with AdmissionReview
v1, honouring rules, namespace and object selectors, timeouts and the
failure policy, and applying JSON patch responses (as kube-apiserver's
admission plugins MutatingAdmissionWebhook and ValidatingAdmissionWebhook).

The review says what kube-apiserver's says: the write's options
(``CreateOptions``/``UpdateOptions``/``DeleteOptions`` with the ``fieldManager`` and
``dryRun`` the client sent; a patch is an UPDATE with ``UpdateOptions``), and for
the ``scale`` subresource the ``autoscaling/v1`` Scale objects (kind ``Scale``, the
resource that of the scaled kind, subResource ``scale``), whose ``spec.replicas`` a
mutating webhook's patch may change."""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import ssl
import uuid
from typing import Any

import aiohttp

from mo_operator.kube.client import keepalive
from mo_operator.kube.client.keepalive import keepalive_session

from .encoding.jsonutil import clone, dumps, loads
from .errors import StatusError, internal
from .objects import AdmissionRequest, ObjectAPI
from .scale import to_scale, with_scale_replicas
from .selectors import match_label_selector_object

Obj = dict[str, Any]

_MUTATING = "mutatingwebhookconfigurations.admissionregistration.k8s.io"
_VALIDATING = "validatingwebhookconfigurations.admissionregistration.k8s.io"
_OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}


class Admission:
    def __init__(self, api: ObjectAPI) -> None:
        self.api = api
        self._session: aiohttp.ClientSession | None = None
        self.calls = 0

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __call__(self, req: AdmissionRequest) -> Obj:
        resource = _MUTATING if req.mutating else _VALIDATING
        configs = self.api.store.list(resource)
        obj = req.object
        if not configs:
            return obj if obj is not None else {}
        for config in configs:
            for wh in config.get("webhooks") or []:
                if not self._matches(wh, req):
                    continue
                obj = await self._call(wh, req, obj)
                if req.mutating:
                    req = AdmissionRequest(
                        req.rt,
                        req.operation,
                        req.namespace,
                        req.name,
                        obj,
                        req.old_object,
                        req.subresource,
                        req.options,
                        req.mutating,
                    )
        return obj if obj is not None else {}

    # ------------------------------------------------------------- matching
    def _matches(self, wh: Obj, req: AdmissionRequest) -> bool:
        rt = req.rt
        resource = rt.plural + (f"/{req.subresource}" if req.subresource else "")
        ok = False
        for rule in wh.get("rules") or []:
            ops = rule.get("operations") or []
            if "*" not in ops and req.operation not in ops:
                continue
            if not _any_match(rule.get("apiGroups") or [], rt.group):
                continue
            if not _any_match(rule.get("apiVersions") or [], rt.version):
                continue
            if not any(_resource_match(p, resource) for p in rule.get("resources") or []):
                continue
            scope = rule.get("scope", "*")
            if (scope == "Namespaced" and not rt.namespaced) or (scope == "Cluster" and rt.namespaced):
                continue
            ok = True
            break
        if not ok:
            return False
        ns_sel = wh.get("namespaceSelector")
        if rt.namespaced and ns_sel:
            ns = self.api.store.get("namespaces", "", req.namespace)
            labels = (ns or {}).get("metadata", {}).get("labels") or {}
            if not match_label_selector_object(ns_sel, labels):
                return False
        obj_sel = wh.get("objectSelector")
        if obj_sel:
            candidates = [o for o in (req.object, req.old_object) if o is not None]
            if not any(
                match_label_selector_object(obj_sel, o["metadata"].get("labels") or {}) for o in candidates
            ):
                return False
        return True

    # -------------------------------------------------------------- calling
    async def _call(self, wh: Obj, req: AdmissionRequest, obj: Obj | None) -> Obj | None:
        name = wh.get("name", "")
        rt = req.rt
        scaled = req.subresource == "scale" and rt.scale is not None
        sent, old = obj, req.old_object
        kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
        if scaled:
            sent = to_scale(rt, obj) if obj is not None else None
            old = to_scale(rt, old) if old is not None else None
            kind = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
        resource = {"group": rt.group, "version": rt.version, "resource": rt.plural}
        review = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": str(uuid.uuid4()),
                "kind": kind,
                "resource": resource,
                "subResource": req.subresource or None,
                "requestKind": kind,
                "requestResource": resource,
                "requestSubResource": req.subresource or None,
                "name": req.name,
                "namespace": req.namespace or None,
                "operation": req.operation,
                "userInfo": {
                    "username": "localcluster-admin",
                    "groups": ["system:masters", "system:authenticated"],
                },
                "object": sent,
                "oldObject": old,
                "dryRun": req.options.dry_run,
                "options": _options(req),
            },
        }
        self.calls += 1
        try:
            response = await self._post(wh, review)
        except Exception as e:
            if wh.get("failurePolicy", "Fail") == "Ignore":
                return obj
            raise internal(f'failed calling webhook "{name}": {e}') from e
        result = response.get("response") or {}
        if not result.get("allowed"):
            status = result.get("status") or {}
            code = int(status.get("code") or 400)
            message = status.get("message") or ""
            reason = status.get("reason") or (
                "BadRequest" if code == 400 else "Forbidden" if code == 403 else "Invalid"
            )
            text = f'admission webhook "{name}" denied the request' + (
                f": {message}" if message else " without explanation"
            )
            raise StatusError(code, reason, text, details=status.get("details"))
        warnings = result.get("warnings") or []
        req.options.warnings.extend(warnings)
        patch = result.get("patch")
        if patch and req.mutating and obj is not None:
            from .patching.json_patch import apply_json_patch

            if result.get("patchType", "JSONPatch") != "JSONPatch":
                raise internal(f'webhook "{name}" returned an unsupported patchType')
            ops = loads(base64.b64decode(patch))
            try:
                patched = apply_json_patch(clone(sent), ops)
            except Exception as e:
                raise internal(f'failed to apply the patch of webhook "{name}": {e}') from e
            obj = with_scale_replicas(rt, obj, patched) if scaled else patched
        return obj

    async def _post(self, wh: Obj, review: Obj) -> Obj:
        cfg = wh.get("clientConfig") or {}
        url = cfg.get("url")
        if not url:
            svc = cfg.get("service") or {}
            path = svc.get("path") or "/"
            url = f"https://{svc.get('name')}.{svc.get('namespace')}.svc:{svc.get('port', 443)}{path}"
        ctx = ssl.create_default_context()
        ca = cfg.get("caBundle")
        if ca:
            ctx.load_verify_locations(cadata=base64.b64decode(ca).decode())
        if self._session is None:
            self._session = keepalive_session()
        timeout = float(wh.get("timeoutSeconds") or 10)
        async with asyncio.timeout(timeout):
            async with keepalive.request(
                self._session,
                "POST",
                url,
                data=dumps(review),
                ssl=ctx,
                headers={"Content-Type": "application/json"},
            ) as resp:
                if resp.status != 200:
                    raise RuntimeError(f"webhook answered HTTP {resp.status}")
                body = loads(await resp.read())
        if not isinstance(body, dict) or body.get("response", {}).get("uid") != review["request"]["uid"]:
            raise RuntimeError("expected response.uid to match the request.uid")
        return body


def _options(req: AdmissionRequest) -> Obj:
    """The write's options as kube-apiserver hands them to admission: what the client
    sent (the default manager it derives from the user agent is not in them)."""
    out: Obj = {"kind": _OPTIONS_KINDS.get(req.operation, "UpdateOptions"), "apiVersion": "meta.k8s.io/v1"}
    if req.options.dry_run:
        out["dryRun"] = ["All"]
    if req.options.field_manager and req.operation != "DELETE":
        out["fieldManager"] = req.options.field_manager
    return out


def _any_match(patterns: list[str], value: str) -> bool:
    return "*" in patterns or value in patterns


def _resource_match(pattern: str, resource: str) -> bool:
    """Rules name resources as ``pods``, ``pods/status``, ``*``, ``*/status``, ``pods/*``."""
    if pattern == "*":
        return "/" not in resource
    if pattern == "*/*":
        return True
    return fnmatch.fnmatchcase(resource, pattern)
