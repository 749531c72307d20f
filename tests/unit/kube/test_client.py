"""The API client against an ``httpx.MockTransport``: URLs, write options,
retries, rate limiting, metrics and typed errors.

Retry rules follow client-go ``rest/request.go`` and ``rest/with_retry.go``:
429 and any 5xx carrying ``Retry-After`` are retried for every verb after the
advertised delay (``checkWait``); connection resets only for idempotent
requests (client-go: GETs). Write semantics: fieldManager and dryRun are
query parameters, server-side apply is a PATCH with
``application/apply-patch+yaml`` and ``force`` (Kubernetes docs, "Server-Side
Apply"). Pagination: ``limit``/``continue`` (docs, "API Concepts: Retrieving
large results sets in chunks").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx2
import pytest
from lightkube import KubeConfig
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Namespace

from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource, register
from mo_operator.kube.flowcontrol.backoff import Backoff
from mo_operator.kube.flowcontrol.ratelimit import TokenBucket
from mo_operator.kube.meta import errors
from mo_operator.kube.meta.errors import ApiConnectionError
from mo_operator.kube.metrics.metrics import REGISTRY

KUBECONFIG = {
    "apiVersion": "v1",
    "kind": "Config",
    "clusters": [{"name": "c", "cluster": {"server": "http://k8s.test"}}],
    "users": [{"name": "u", "user": {"token": "secret-token"}}],
    "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u", "namespace": "team"}}],
    "current-context": "ctx",
}
CNSET = register(Resource("core.matrixorigin.io", "v1alpha1", "CNSet", "cnsets", True))

Handler = Callable[[httpx2.Request], httpx2.Response]


def status(code: int, reason: str, message: str = "", **details: Any) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": code,
        "reason": reason,
        "message": message,
        "details": details,
    }


class Harness:
    def __init__(self, *responses: httpx2.Response | Exception, **kw: Any) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []
        self.sleeps: list[float] = []

        def handler(request: httpx2.Request) -> httpx2.Response:
            self.requests.append(request)
            item = self.responses.pop(0) if self.responses else httpx2.Response(200, json={"kind": "X"})
            if isinstance(item, Exception):
                raise item
            return item

        async def sleep(delay: float) -> None:
            self.sleeps.append(delay)

        kw.setdefault("qps", None)
        kw.setdefault("retry_backoff", lambda: Backoff(0.1, 1.0, 2.0))
        self.client = ApiClient(
            KubeConfig.from_dict(KUBECONFIG),
            transport=httpx2.MockTransport(handler),
            sleep=sleep,
            field_manager="mo-test",
            **kw,
        )

    def body(self, i: int = -1) -> Any:
        return json.loads(self.requests[i].content)


def count(verb: str, resource: str, code: str) -> float:
    return (
        REGISTRY.get_sample_value(
            "api_client_requests_total", {"verb": verb, "resource": resource, "code": code}
        )
        or 0.0
    )


async def test_get_builds_urls_and_authenticates_through_lightkube_config() -> None:
    h = Harness(httpx2.Response(200, json={"kind": "Deployment", "metadata": {"name": "web"}}))
    before = count("get", "deployments.apps", "200")
    obj = await h.client.get(Deployment, "web")
    assert obj == {"kind": "Deployment", "metadata": {"name": "web"}}
    req = h.requests[0]
    assert req.method == "GET" and req.url.path == "/apis/apps/v1/namespaces/team/deployments/web"
    assert req.headers["authorization"] == "Bearer secret-token"
    assert req.headers["user-agent"].startswith("mo-operator")
    assert count("get", "deployments.apps", "200") == before + 1
    assert REGISTRY.get_sample_value(
        "rest_client_requests_total", {"code": "200", "method": "GET", "host": "k8s.test"}
    ), "client-go's labels"
    await h.client.get(Namespace, "default")
    assert h.requests[1].url.path == "/api/v1/namespaces/default"


async def test_errors_are_typed() -> None:
    h = Harness(
        httpx2.Response(
            404, json=status(404, "NotFound", 'configmaps "x" not found', name="x", kind="configmaps")
        ),
        httpx2.Response(404, json=status(404, "NotFound")),
        httpx2.Response(
            422,
            json=status(
                422, "Invalid", "bad", causes=[{"field": "spec.replicas", "message": "must be >= 0"}]
            ),
        ),
        httpx2.Response(403, text="forbidden by policy"),
    )
    with pytest.raises(errors.ApiError) as info:
        await h.client.get(ConfigMap, "x")
    e = info.value
    assert (e.status, e.reason, e.details["name"]) == (404, "NotFound", "x")
    assert errors.is_not_found(e) and not errors.is_conflict(e)
    assert await h.client.get_or_none(ConfigMap, "x") is None
    with pytest.raises(errors.ApiError) as info:
        await h.client.patch(ConfigMap, "x", {"data": {}})
    assert errors.is_invalid(info.value) and info.value.causes[0]["field"] == "spec.replicas"
    with pytest.raises(errors.ApiError) as info:
        await h.client.get(ConfigMap, "y")
    assert errors.is_forbidden(info.value) and "forbidden by policy" in info.value.message


def test_error_predicates_tell_409s_and_410s_apart() -> None:
    conflict = errors.ApiError(409, "Conflict", "the object has been modified")
    exists = errors.ApiError(409, "AlreadyExists", "already exists")
    assert errors.is_conflict(conflict) and not errors.is_already_exists(conflict)
    assert errors.is_already_exists(exists) and not errors.is_conflict(exists)
    assert errors.is_gone(errors.ApiError(410, "Expired", "")) and errors.is_gone(
        errors.ApiError(410, "Gone", "")
    )
    assert errors.is_too_many_requests(errors.ApiError(429, "TooManyRequests", ""))
    assert errors.is_server_error(errors.ApiError(503, "ServiceUnavailable", ""))
    assert not errors.is_not_found(ValueError("x")) and not errors.is_not_found(None)


def test_each_answer_raises_its_own_type() -> None:
    """``except AlreadyExists:`` catches what ``is_already_exists`` says, and only that."""
    cases = {
        (404, "NotFound"): errors.NotFound,
        (409, "AlreadyExists"): errors.AlreadyExists,
        (409, "Conflict"): errors.Conflict,
        (410, "Expired"): errors.Gone,
        (410, "Gone"): errors.Gone,
        (403, "Forbidden"): errors.Forbidden,
        (422, "Invalid"): errors.Invalid,
        (429, "TooManyRequests"): errors.TooManyRequests,
        (503, "ServiceUnavailable"): errors.ServerError,
        (418, "Teapot"): errors.ApiError,
    }
    for (code, reason), kind in cases.items():
        e = errors.ApiError.from_status(status(code, reason, "m"))
        assert type(e) is kind and isinstance(e, errors.ApiError), (code, reason)
        assert (e.status, e.reason, e.message) == (code, reason, "m")
    assert not isinstance(errors.ApiError(409, "AlreadyExists"), errors.Conflict)


async def test_a_write_hook_sees_every_write_once_and_may_refuse_it() -> None:
    h = Harness()
    seen: list[tuple[str, str, str | None, str | None]] = []

    async def observe(call: Any, send: Any) -> Any:
        seen.append((call.verb, call.resource.kind, call.namespace, call.name))
        return await send()

    h.client.write_hooks.append(observe)
    await h.client.create(ConfigMap, {"metadata": {"name": "a"}})
    await h.client.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}})
    await h.client.delete(ConfigMap, "c")
    await h.client.get(ConfigMap, "a")

    async def refuse(call: Any, send: Any) -> Any:
        raise PermissionError(call.verb)

    derived = h.client.with_write_hook(refuse)
    with pytest.raises(PermissionError):
        await derived.patch(ConfigMap, "a", {"data": {}})
    assert seen == [
        ("create", "ConfigMap", "team", "a"),
        ("apply", "ConfigMap", "team", "b"),
        ("delete", "ConfigMap", "team", "c"),
        ("patch", "ConfigMap", "team", "a"),
    ], "the base client's observer sees the derived client's writes, reads are not writes"
    assert len(h.requests) == 4 and sum(h.client.writes.values()) == 3, "a refused write is not sent"


async def test_429_is_retried_for_any_verb_after_retry_after() -> None:
    h = Harness(
        httpx2.Response(429, headers={"Retry-After": "3"}, json=status(429, "TooManyRequests")),
        httpx2.Response(201, json={"kind": "ConfigMap", "metadata": {"name": "a"}}),
    )
    created = await h.client.create(ConfigMap, {"metadata": {"name": "a"}})
    assert created["metadata"]["name"] == "a"
    assert len(h.requests) == 2 and h.sleeps == [3.0]
    assert h.client.writes["create"] == 1  # one logical write


async def test_5xx_is_retried_only_when_idempotent_or_invited() -> None:
    h = Harness(
        httpx2.Response(500, json=status(500, "InternalError")), httpx2.Response(200, json={"kind": "X"})
    )
    await h.client.get(ConfigMap, "a")
    assert len(h.requests) == 2 and h.sleeps == [0.1]

    h = Harness(httpx2.Response(500, json=status(500, "InternalError")))
    with pytest.raises(errors.ApiError) as info:
        await h.client.create(ConfigMap, {"metadata": {"name": "a"}})
    assert info.value.status == 500 and len(h.requests) == 1  # a POST may have been applied

    h = Harness(
        httpx2.Response(503, headers={"Retry-After": "1"}, json=status(503, "ServiceUnavailable")),
        httpx2.Response(201, json={"kind": "X"}),
    )
    await h.client.create(ConfigMap, {"metadata": {"name": "a"}})
    assert len(h.requests) == 2 and h.sleeps == [1.0]

    h = Harness(httpx2.Response(502, text="bad gateway"), httpx2.Response(200, json={"kind": "X"}))
    await h.client.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    assert len(h.requests) == 2  # apply is idempotent


async def test_dropped_connections_are_retried_only_when_safe() -> None:
    h = Harness(httpx2.ReadError("connection reset"), httpx2.Response(200, json={"kind": "X"}))
    await h.client.get(ConfigMap, "a")
    assert len(h.requests) == 2

    h = Harness(httpx2.ReadError("connection reset"))
    with pytest.raises(ApiConnectionError):
        await h.client.patch(
            ConfigMap, "a", [{"op": "add", "path": "/data/x", "value": "1"}], patch_type="json"
        )
    assert len(h.requests) == 1

    h = Harness(httpx2.ConnectError("refused"), httpx2.Response(201, json={"kind": "X"}))
    await h.client.create(ConfigMap, {"metadata": {"name": "a"}})  # never sent: safe to repeat
    assert len(h.requests) == 2


async def test_retries_stop_after_max_retries_with_growing_backoff() -> None:
    h = Harness(*[httpx2.Response(500, json=status(500, "InternalError"))] * 10, max_retries=3)
    before = count("get", "configmaps", "500")
    with pytest.raises(errors.ApiError):
        await h.client.get(ConfigMap, "a")
    assert len(h.requests) == 4 and h.sleeps == [0.1, 0.2, 0.4]
    assert count("get", "configmaps", "500") == before + 4


async def test_client_side_rate_limit_spaces_requests_after_the_burst() -> None:
    now = [100.0]
    bucket = TokenBucket(qps=10, burst=2, clock=lambda: now[0])
    h = Harness(rate_limiter=bucket)
    for _ in range(4):
        await h.client.get(ConfigMap, "a")
    assert h.sleeps == pytest.approx([0.1, 0.2])
    waited = {"verb": "GET", "host": "k8s.test"}
    assert REGISTRY.get_sample_value("rest_client_rate_limiter_duration_seconds_count", waited)


async def test_writes_carry_field_manager_dry_run_and_content_types() -> None:
    h = Harness(dry_run=True)
    c = h.client
    await c.create(
        CNSET,
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "CNSet",
            "metadata": {"name": "cn", "namespace": "mo"},
        },
    )
    await c.apply(
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "CNSet",
            "metadata": {"name": "cn", "namespace": "mo"},
            "spec": {"replicas": 2},
        },
        force=True,
    )
    await c.apply_status(
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "CNSet",
            "metadata": {"name": "cn", "namespace": "mo"},
            "status": {"ready": True},
        },
        field_manager="status-writer",
    )
    await c.patch(Deployment, "web", {"spec": {"replicas": 1}}, "mo", patch_type="strategic")
    await c.patch_status(CNSET, "cn", {"status": {"x": 1}}, "mo")
    await c.update(ConfigMap, {"metadata": {"name": "a", "namespace": "mo", "resourceVersion": "7"}})
    await c.delete(CNSET, "cn", "mo", propagation_policy="Foreground", uid="u1", dry_run=False)

    r = h.requests
    assert [(q.method, q.url.path) for q in r] == [
        ("POST", "/apis/core.matrixorigin.io/v1alpha1/namespaces/mo/cnsets"),
        ("PATCH", "/apis/core.matrixorigin.io/v1alpha1/namespaces/mo/cnsets/cn"),
        ("PATCH", "/apis/core.matrixorigin.io/v1alpha1/namespaces/mo/cnsets/cn/status"),
        ("PATCH", "/apis/apps/v1/namespaces/mo/deployments/web"),
        ("PATCH", "/apis/core.matrixorigin.io/v1alpha1/namespaces/mo/cnsets/cn/status"),
        ("PUT", "/api/v1/namespaces/mo/configmaps/a"),
        ("DELETE", "/apis/core.matrixorigin.io/v1alpha1/namespaces/mo/cnsets/cn"),
    ]
    assert [q.headers.get("content-type") for q in r] == [
        "application/json",
        "application/apply-patch+yaml",
        "application/apply-patch+yaml",
        "application/strategic-merge-patch+json",
        "application/merge-patch+json",
        "application/json",
        "application/json",
    ]
    assert [q.url.params.get("fieldManager") for q in r] == [
        "mo-test",
        "mo-test",
        "status-writer",
        "mo-test",
        "mo-test",
        "mo-test",
        None,
    ]
    assert [q.url.params.get("dryRun") for q in r] == ["All"] * 6 + [None]
    assert r[1].url.params.get("force") == "true" and "force" not in r[2].url.params
    assert h.body(1)["spec"] == {"replicas": 2}
    assert h.body(6) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "preconditions": {"uid": "u1"},
    }
    assert dict(c.writes) == {"create": 1, "apply": 2, "patch": 2, "update": 1, "delete": 1}


async def test_delete_missing_ok_and_apply_needs_a_known_kind() -> None:
    h = Harness(httpx2.Response(404, json=status(404, "NotFound")))
    assert await h.client.delete(ConfigMap, "gone", missing_ok=True) is None
    with pytest.raises(LookupError):
        await h.client.apply({"apiVersion": "example.com/v1", "kind": "Unknown", "metadata": {"name": "x"}})


async def test_list_follows_continue_tokens_and_fills_in_item_kinds() -> None:
    pages = [
        {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "42", "continue": "t1"},
            "items": [{"metadata": {"name": "a"}}],
        },
        {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "42", "continue": "t2"},
            "items": [{"metadata": {"name": "b"}}],
        },
        {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "42"},
            "items": [{"metadata": {"name": "c"}}],
        },
    ]
    h = Harness(*[httpx2.Response(200, json=p) for p in pages])
    result = await h.client.list(ConfigMap, None, label_selector="app=web", limit=1)
    assert [i["metadata"]["name"] for i in result.items] == ["a", "b", "c"]
    assert result.resource_version == "42"
    assert all(i["kind"] == "ConfigMap" and i["apiVersion"] == "v1" for i in result.items)
    assert [q.url.params.get("continue") for q in h.requests] == [None, "t1", "t2"]
    assert all(q.url.path == "/api/v1/configmaps" for q in h.requests)  # all namespaces
    assert all(
        q.url.params["labelSelector"] == "app=web" and q.url.params["limit"] == "1" for q in h.requests
    )


def test_resource_urls_and_lookup() -> None:
    dep = Resource.of(Deployment)
    assert (dep.group, dep.version, dep.kind, dep.plural, dep.namespaced) == (
        "apps",
        "v1",
        "Deployment",
        "deployments",
        True,
    )
    assert dep.path("ns", "web", "scale") == "/apis/apps/v1/namespaces/ns/deployments/web/scale"
    assert dep.path() == "/apis/apps/v1/deployments"
    assert Resource.of(Namespace).path(None, "kube-system") == "/api/v1/namespaces/kube-system"
    with pytest.raises(ValueError):
        dep.path(None, "web")
    with pytest.raises(ValueError):
        Resource.of(Namespace).path("ns", "x")
    with pytest.raises(ValueError):
        Resource.of(Deployment.Status)
    from mo_operator.kube.client.resource import resource_for

    assert resource_for("core.matrixorigin.io/v1alpha1", "CNSet") is CNSET
    assert resource_for("apps/v1", "StatefulSet").plural == "statefulsets"
    assert (
        CNSET.group_resource == "cnsets.core.matrixorigin.io"
        and CNSET.api_version == "core.matrixorigin.io/v1alpha1"
    )
