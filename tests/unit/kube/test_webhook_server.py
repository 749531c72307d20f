"""The webhook server answers AdmissionReview v1 as kube-apiserver expects
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#response)."""

from __future__ import annotations

import base64
import datetime
import json
import ssl
from typing import Any

import aiohttp

from mo_operator.kube.webhook.jsonpatch_diff import diff
from mo_operator.kube.webhook.server import AdmissionRequest, Denial, WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts


def review(obj: dict[str, Any], operation: str = "CREATE") -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "operation": operation,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "namespace": "default",
            "name": obj["metadata"]["name"],
            "object": obj,
        },
    }


async def _post(
    server: WebhookServer, certs: GeneratedCerts, path: str, body: dict[str, Any]
) -> dict[str, Any]:
    ctx = ssl.create_default_context(cadata=certs.ca_bundle.decode())
    async with (
        aiohttp.ClientSession() as s,
        s.post(f"https://127.0.0.1:{server.port}{path}", json=body, ssl=ctx) as r,
    ):
        assert r.status == 200
        return dict(await r.json())


async def test_mutating_and_validating_answers() -> None:
    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0)

    async def mutate(req: AdmissionRequest) -> dict[str, Any]:
        assert req.object is not None
        return {**req.object, "data": {**(req.object.get("data") or {}), "defaulted": "yes"}}

    async def validate(req: AdmissionRequest) -> Denial | None:
        assert req.object is not None
        if (req.object.get("data") or {}).get("bad"):
            return Denial(
                'data.bad: Invalid value: "1": must not be set',
                causes=[{"field": "data.bad", "message": "must not be set"}],
            )
        return None

    async def broken(req: AdmissionRequest) -> Denial | None:
        raise RuntimeError("boom")

    server.add_mutating("/mutate", mutate)
    server.add_validating("/validate", validate)
    server.add_validating("/broken", broken)
    await server.start()
    try:
        obj = {"metadata": {"name": "x"}, "data": {"a": "b"}}
        answer = await _post(server, certs, "/mutate", review(obj))
        resp = answer["response"]
        assert answer["kind"] == "AdmissionReview" and resp["uid"] == "u-1" and resp["allowed"]
        assert resp["patchType"] == "JSONPatch"
        assert json.loads(base64.b64decode(resp["patch"])) == [
            {"op": "add", "path": "/data/defaulted", "value": "yes"}
        ]
        answer = await _post(
            server, certs, "/validate", review({"metadata": {"name": "x"}, "data": {"bad": "1"}})
        )
        resp = answer["response"]
        assert resp["allowed"] is False
        assert resp["status"]["code"] == 422 and resp["status"]["message"].startswith("data.bad")
        answer = await _post(server, certs, "/validate", review(obj))
        assert answer["response"]["allowed"] is True and "patch" not in answer["response"]
        answer = await _post(server, certs, "/broken", review(obj))
        assert answer["response"]["allowed"] is False and "boom" in answer["response"]["status"]["message"]
    finally:
        await server.stop()


def test_generated_certificate_rotates_before_expiry_keeping_the_ca() -> None:
    certs = GeneratedCerts(["127.0.0.1"], days=10, renew_before=datetime.timedelta(days=30))
    first, ca = certs.serving, certs.ca_bundle
    assert certs.refresh() is True, "10 days left is inside the 30-day renewal window"
    assert certs.serving != first and certs.ca_bundle == ca
    fresh = GeneratedCerts(["127.0.0.1"], days=365)
    assert fresh.refresh() is False


def test_json_patch_diff_round_trip() -> None:
    old = {"a": 1, "b": {"c": [1, 2], "d": "x/y"}, "gone": True}
    new = {"a": 2, "b": {"c": [1, 3], "d": "x/y", "e~": None}}
    ops = diff(old, new)
    assert {"op": "remove", "path": "/gone"} in ops
    assert {"op": "add", "path": "/b/e~0", "value": None} in ops
    assert diff(new, new) == []


async def test_admission_requests_are_counted_and_timed_by_path_and_code() -> None:
    from mo_operator.kube.metrics.metrics import REGISTRY

    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0)

    async def validate(req: AdmissionRequest) -> Denial | None:
        return Denial("no") if (req.object or {}).get("data") else None

    server.add_validating("/validate-counted", validate)
    await server.start()

    def requests(code: str) -> float:
        found = REGISTRY.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": "/validate-counted", "code": code}
        )
        return found or 0.0

    try:
        await _post(server, certs, "/validate-counted", review({"metadata": {"name": "x"}}))
        await _post(
            server, certs, "/validate-counted", review({"metadata": {"name": "x"}, "data": {"a": "b"}})
        )
        ctx = ssl.create_default_context(cadata=certs.ca_bundle.decode())
        async with (
            aiohttp.ClientSession() as s,
            s.post(f"https://127.0.0.1:{server.port}/validate-counted", data=b"[1]", ssl=ctx) as r,
        ):
            assert r.status == 400
            await r.read()
        async with (
            aiohttp.ClientSession() as s,
            s.get(f"https://127.0.0.1:{server.port}/stray", ssl=ctx) as r,
        ):
            assert r.status == 404
    finally:
        await server.stop()
    assert requests("200") == 2, "a denial is an answered request"
    assert requests("400") == 1
    timed = {"webhook": "/validate-counted"}
    assert REGISTRY.get_sample_value("controller_runtime_webhook_latency_seconds_count", timed) == 3
    assert REGISTRY.get_sample_value("controller_runtime_webhook_requests_in_flight", timed) == 0
    assert (
        REGISTRY.get_sample_value(
            "controller_runtime_webhook_requests_total", {"webhook": "/stray", "code": "404"}
        )
        is None
    )
