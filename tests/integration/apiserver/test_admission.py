"""Dynamic admission: mutating then validating webhooks over TLS with
AdmissionReview v1 (https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/)."""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from mo_operator.kube.certs.certs import make_ca, make_serving_cert

from .conftest import Raw, cm

NS = "/api/v1/namespaces/default"
ADMISSION = "/apis/admissionregistration.k8s.io/v1"


class WebhookServer:
    def __init__(self) -> None:
        self.ca = make_ca("test-webhook-ca")
        self.calls: list[dict[str, Any]] = []
        self.delay = 0.0
        self.port = 0
        self._runner: web.AppRunner | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/mutate", self._mutate)
        app.router.add_post("/validate", self._validate)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        pair = make_serving_cert(self.ca, ["127.0.0.1"])
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "c").write_bytes(pair.cert_pem)
            (Path(d) / "k").write_bytes(pair.key_pem)
            ctx.load_cert_chain(str(Path(d) / "c"), str(Path(d) / "k"))
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=ctx)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        assert self._runner is not None
        await self._runner.cleanup()

    async def _mutate(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.calls.append(review["request"])
        await asyncio.sleep(self.delay)
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]
        return web.json_response(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": review["request"]["uid"],
                    "allowed": True,
                    "patchType": "JSONPatch",
                    "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
                },
            }
        )

    async def _validate(self, request: web.Request) -> web.Response:
        review = await request.json()
        self.calls.append(review["request"])
        obj = review["request"]["object"]
        allowed = (obj.get("data") or {}).get("ok") != "no"
        response: dict[str, Any] = {"uid": review["request"]["uid"], "allowed": allowed}
        if not allowed:
            response["status"] = {
                "code": 422,
                "reason": "Invalid",
                "message": 'data.ok: Invalid value: "no": must not be no',
            }
        return web.json_response(
            {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}
        )

    def config(self, kind: str, path: str, *, ca: bytes | None = None, **extra: Any) -> dict[str, Any]:
        webhook = {
            "name": f"{path.strip('/')}.test.io",
            "clientConfig": {
                "url": f"https://127.0.0.1:{self.port}{path}",
                "caBundle": base64.b64encode(ca or self.ca.cert_pem).decode(),
            },
            "rules": [
                {
                    "operations": ["CREATE", "UPDATE"],
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "resources": ["configmaps"],
                }
            ],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
            **extra,
        }
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": f"{path.strip('/')}-config"},
            "webhooks": [webhook],
        }


@pytest.fixture
async def webhook() -> AsyncIterator[WebhookServer]:
    server = WebhookServer()
    await server.start()
    yield server
    await server.stop()


async def test_mutating_webhook_patch_is_applied(raw: Raw, webhook: WebhookServer) -> None:
    code, _ = await raw.post(
        f"{ADMISSION}/mutatingwebhookconfigurations",
        webhook.config("MutatingWebhookConfiguration", "/mutate"),
    )
    assert code == 201
    code, obj = await raw.post(f"{NS}/configmaps", cm("m"))
    assert code == 201
    assert obj["metadata"]["labels"] == {"mutated": "yes"}
    req = webhook.calls[-1]
    assert req["operation"] == "CREATE" and req["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert req["object"]["metadata"]["name"] == "m"


async def test_validating_webhook_denial_reaches_the_client(raw: Raw, webhook: WebhookServer) -> None:
    await raw.post(
        f"{ADMISSION}/validatingwebhookconfigurations",
        webhook.config("ValidatingWebhookConfiguration", "/validate"),
    )
    code, err = await raw.post(f"{NS}/configmaps", cm("v", {"ok": "no"}))
    assert code == 422
    assert (
        err["message"]
        == 'admission webhook "validate.test.io" denied the request: data.ok: Invalid value: "no": must not be no'
    )
    code, _ = await raw.post(f"{NS}/configmaps", cm("v", {"ok": "yes"}))
    assert code == 201


async def test_wrong_ca_bundle_fails_closed_or_open_by_policy(raw: Raw, webhook: WebhookServer) -> None:
    other = make_ca("someone-else")
    await raw.post(
        f"{ADMISSION}/validatingwebhookconfigurations",
        webhook.config("ValidatingWebhookConfiguration", "/validate", ca=other.cert_pem),
    )
    code, err = await raw.post(f"{NS}/configmaps", cm("x"))
    assert code == 500 and 'failed calling webhook "validate.test.io"' in err["message"]
    _, cfg = await raw.get(f"{ADMISSION}/validatingwebhookconfigurations/validate-config")
    cfg["webhooks"][0]["failurePolicy"] = "Ignore"
    await raw.put(f"{ADMISSION}/validatingwebhookconfigurations/validate-config", cfg)
    code, _ = await raw.post(f"{NS}/configmaps", cm("x"))
    assert code == 201


async def test_webhook_timeout(raw: Raw, webhook: WebhookServer) -> None:
    webhook.delay = 3
    await raw.post(
        f"{ADMISSION}/mutatingwebhookconfigurations",
        webhook.config("MutatingWebhookConfiguration", "/mutate", timeoutSeconds=1),
    )
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    code, _ = await raw.post(f"{NS}/configmaps", cm("slow"))
    assert code == 500
    assert loop.time() - t0 < 2.5


async def test_object_and_namespace_selectors_limit_calls(raw: Raw, webhook: WebhookServer) -> None:
    await raw.post(
        f"{ADMISSION}/validatingwebhookconfigurations",
        webhook.config(
            "ValidatingWebhookConfiguration",
            "/validate",
            objectSelector={"matchLabels": {"check": "me"}},
            namespaceSelector={
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["default"]}
                ]
            },
        ),
    )
    await raw.post(f"{NS}/configmaps", cm("skipped", {"ok": "no"}))
    assert webhook.calls == []
    code, _ = await raw.post(f"{NS}/configmaps", cm("checked", {"ok": "no"}, labels={"check": "me"}))
    assert code == 422 and len(webhook.calls) == 1
    await raw.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}
    )
    code, _ = await raw.post(
        "/api/v1/namespaces/other/configmaps", cm("c", {"ok": "no"}, labels={"check": "me"})
    )
    assert code == 201 and len(webhook.calls) == 1


async def test_rules_match_operations(raw: Raw, webhook: WebhookServer) -> None:
    config = webhook.config("ValidatingWebhookConfiguration", "/validate")
    config["webhooks"][0]["rules"][0]["operations"] = ["UPDATE"]
    await raw.post(f"{ADMISSION}/validatingwebhookconfigurations", config)
    code, obj = await raw.post(f"{NS}/configmaps", cm("op", {"ok": "no"}))
    assert code == 201 and webhook.calls == []
    code, _ = await raw.put(f"{NS}/configmaps/op", dict(obj, data={"ok": "no", "b": "c"}))
    assert code == 422 and webhook.calls[-1]["operation"] == "UPDATE"
    assert webhook.calls[-1]["oldObject"]["data"] == {"ok": "no"}


async def test_a_review_carries_the_write_options_as_kube_apiserver_sends_them(
    raw: Raw, webhook: WebhookServer
) -> None:
    await raw.post(
        f"{ADMISSION}/validatingwebhookconfigurations",
        webhook.config("ValidatingWebhookConfiguration", "/validate"),
    )
    code, _ = await raw.post(f"{NS}/configmaps", cm("opts"), params={"fieldManager": "me"})
    assert code == 201
    assert webhook.calls[-1]["options"] == {
        "kind": "CreateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "fieldManager": "me",
    }
    code, _ = await raw.patch(
        f"{NS}/configmaps/opts",
        {"data": {"a": "b"}},
        "application/merge-patch+json",
        params={"dryRun": "All"},
    )
    assert code == 200
    assert webhook.calls[-1]["options"] == {
        "kind": "UpdateOptions",
        "apiVersion": "meta.k8s.io/v1",
        "dryRun": ["All"],
    }
    assert webhook.calls[-1]["operation"] == "UPDATE"


async def test_a_scale_is_reviewed_as_a_scale_of_the_scaled_resource(
    raw: Raw, webhook: WebhookServer
) -> None:
    config = webhook.config("ValidatingWebhookConfiguration", "/validate")
    config["webhooks"][0]["rules"][0].update(apiGroups=["apps"], resources=["statefulsets/scale"])
    await raw.post(f"{ADMISSION}/validatingwebhookconfigurations", config)
    base = "/apis/apps/v1/namespaces/default/statefulsets"
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "sc"},
        "spec": {
            "replicas": 1,
            "serviceName": "sc",
            "selector": {"matchLabels": {"app": "sc"}},
            "template": {
                "metadata": {"labels": {"app": "sc"}},
                "spec": {"containers": [{"name": "main", "image": "busybox:1"}]},
            },
        },
    }
    code, _ = await raw.post(base, sts)
    assert code == 201 and webhook.calls == [], "the main resource is not under the rule"
    code, _ = await raw.patch(f"{base}/sc/scale", {"spec": {"replicas": 3}}, "application/merge-patch+json")
    assert code == 200
    (req,) = webhook.calls
    assert req["kind"] == {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    assert req["resource"] == {"group": "apps", "version": "v1", "resource": "statefulsets"}
    assert req["subResource"] == "scale" and req["operation"] == "UPDATE" and req["name"] == "sc"
    assert req["object"]["kind"] == "Scale" and req["object"]["spec"] == {"replicas": 3}
    assert req["oldObject"]["spec"] == {"replicas": 1}
    assert req["options"]["kind"] == "UpdateOptions"
