"""Our webhooks served by the runtime's WebhookServer on 127.0.0.1, and a way to
send them an AdmissionReview and read the answer, as kube-apiserver does
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request)."""

from __future__ import annotations

import base64
import json
import ssl
import uuid
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mo_devkit.localcluster.apiserver.patching.json_patch import apply_json_patch
from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.kube.client import keepalive
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.webhooks import register, route

Obj = dict[str, Any]

DEFAULT_ARGS = {
    "logService": ["-debug-http=:6060"],
    "dn": ["-debug-http=:6060"],
    "cn": ["-c"],
    "proxy": ["-p"],
}


def wire(obj: Any) -> Any:
    """``obj`` as the other end of a JSON connection reads it (e.g. two lone UTF-16
    surrogates in a row arrive as one character)."""
    return json.loads(json.dumps(obj))


def review(kind: str, operation: str, obj: Obj | None, old: Obj | None = None) -> Obj:
    """An AdmissionReview v1 request as kube-apiserver sends it for one of our kinds: its
    name and namespace come from the request's URL, so they are strings whatever the
    object holds."""
    info = KINDS[kind]
    meta = (obj or old or {}).get("metadata")
    meta = {k: v for k, v in meta.items() if isinstance(v, str)} if isinstance(meta, dict) else {}
    gvk = {"group": GROUP, "version": VERSION, "kind": kind}
    gvr = {"group": GROUP, "version": VERSION, "resource": info.plural}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": meta.get("name", ""),
            "namespace": meta.get("namespace") if info.namespaced else None,
            "operation": operation,
            "userInfo": {"username": "test"},
            "object": obj,
            "oldObject": old,
            "dryRun": False,
        },
    }


class Served:
    """The webhooks behind HTTPS; ``mutate`` and ``validate`` post one review each."""

    def __init__(self, server: WebhookServer, certs: GeneratedCerts, session: aiohttp.ClientSession) -> None:
        self.server = server
        self.session = session
        self.ssl = ssl.create_default_context(cadata=certs.ca_bundle.decode())

    async def send(self, path: str, body: bytes) -> tuple[int, str]:
        """Any body at all, as anyone who reaches the port may send it: the status and text."""
        url = f"https://127.0.0.1:{self.server.port}{path}"
        async with keepalive.request(self.session, "POST", url, data=body, ssl=self.ssl) as resp:
            return resp.status, await resp.text()

    async def post(self, path: str, body: Obj) -> Obj:
        url = f"https://127.0.0.1:{self.server.port}{path}"
        async with keepalive.request(self.session, "POST", url, json=body, ssl=self.ssl) as resp:
            assert resp.status == 200, await resp.text()
            answer: Obj = await resp.json()
        assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
        assert answer["response"]["uid"] == body["request"]["uid"]
        response: Obj = answer["response"]
        return response

    async def mutate(self, kind: str, operation: str, obj: Obj, old: Obj | None = None) -> tuple[Obj, Obj]:
        """The response and the object after its JSON patch."""
        response = await self.post(route(kind).mutate_path, review(kind, operation, obj, old))
        patched = wire(obj)
        if "patch" in response:
            assert response["patchType"] == "JSONPatch"
            patched = apply_json_patch(patched, json.loads(base64.b64decode(response["patch"])))
        return response, patched

    async def validate(self, kind: str, operation: str, obj: Obj | None, old: Obj | None = None) -> Obj:
        return await self.post(route(kind).validate_path, review(kind, operation, obj, old))


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0)
    register(server, default_args=DEFAULT_ARGS)
    await server.start()
    try:
        async with keepalive.keepalive_session() as session:
            yield Served(server, certs, session)
    finally:
        await server.stop()
