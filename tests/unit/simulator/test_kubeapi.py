"""The simulator's raw-dict client speaks the Kubernetes REST API as a real
client does (API concepts: https://kubernetes.io/docs/reference/using-api/api-concepts/):
paths, verbs, content types, field managers, watch parameters, the
``pods/binding`` subresource and DeleteOptions preconditions."""

from __future__ import annotations

import json
from typing import Any

import httpx2
from lightkube import AsyncClient, KubeConfig

from mo_devkit.localcluster.simulator.core.kinds import NODE, POD, STATEFULSET
from mo_devkit.localcluster.simulator.core.kubeapi import KubeApi, KubeError


class Recorder:
    def __init__(self, responses: list[tuple[int, Any]]) -> None:
        self.requests: list[httpx2.Request] = []
        self.responses = responses

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        code, body = self.responses.pop(0)
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return httpx2.Response(code, content=content, headers={"Content-Type": "application/json"})


def api_with(responses: list[tuple[int, Any]]) -> tuple[KubeApi, Recorder]:
    rec = Recorder(responses)
    config = KubeConfig.from_dict(
        {
            "clusters": [
                {
                    "name": "c",
                    "cluster": {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True},
                }
            ],
            "users": [{"name": "u", "user": {"token": "t"}}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    )
    client = AsyncClient(config, transport=httpx2.MockTransport(rec), trust_env=False)
    return KubeApi(client, "kubelet"), rec


POD_OBJ = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7"},
}


async def test_list_all_namespaces_and_watch_from_version() -> None:
    events = b'{"type":"ADDED","object":{"metadata":{"name":"p","namespace":"ns","resourceVersion":"8"}}}\n'
    api, rec = api_with(
        [
            (200, {"metadata": {"resourceVersion": "7"}, "items": [POD_OBJ]}),
            (200, events),
        ]
    )
    items, rv = await api.list_all(POD)
    assert rv == "7" and items[0]["metadata"]["name"] == "p"
    assert rec.requests[0].url.path == "/api/v1/pods"
    got = []
    async for etype, obj in api.watch(POD, "7", 30):
        got.append((etype, obj["metadata"]["resourceVersion"]))
        break
    assert got == [("ADDED", "8")]
    q = rec.requests[1].url.params
    assert rec.requests[1].url.path == "/api/v1/pods" and q["watch"] == "true" and q["resourceVersion"] == "7"
    assert q["timeoutSeconds"] == "30"


async def test_scoped_list_uses_namespace_and_field_selector() -> None:
    api, rec = api_with([(200, {"metadata": {"resourceVersion": "1"}, "items": []})])
    from mo_devkit.localcluster.simulator.core.kinds import CONFIGMAP

    await api.list_all(CONFIGMAP, "localcluster-system", {"metadata.name": "simulator-rules"})
    r = rec.requests[0]
    assert r.url.path == "/api/v1/namespaces/localcluster-system/configmaps"
    assert r.url.params["fieldSelector"] == "metadata.name=simulator-rules"


async def test_create_patch_status_and_cluster_scoped_paths() -> None:
    api, rec = api_with([(201, POD_OBJ), (200, POD_OBJ), (200, {"metadata": {"name": "n"}})])
    await api.create(POD, {"metadata": {"name": "p", "namespace": "ns"}, "spec": {}})
    body = json.loads(rec.requests[0].content)
    assert rec.requests[0].method == "POST" and rec.requests[0].url.path == "/api/v1/namespaces/ns/pods"
    assert body["apiVersion"] == "v1" and body["kind"] == "Pod"
    assert rec.requests[0].url.params["fieldManager"] == "kubelet"
    await api.patch(POD, "ns", "p", {"status": {"phase": "Running"}}, subresource="status")
    r = rec.requests[1]
    assert r.method == "PATCH" and r.url.path == "/api/v1/namespaces/ns/pods/p/status"
    assert r.headers["Content-Type"] == "application/merge-patch+json"
    await api.patch(NODE, "", "n", [{"op": "remove", "path": "/spec/taints/0"}], patch_type="json")
    assert (
        rec.requests[2].url.path == "/api/v1/nodes/n"
        and rec.requests[2].headers["Content-Type"] == "application/json-patch+json"
    )


async def test_bind_posts_a_binding_to_the_subresource() -> None:
    api, rec = api_with([(201, {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}})])
    await api.bind("ns", "p", "uid-1", "node-a")
    r = rec.requests[0]
    assert r.method == "POST" and r.url.path == "/api/v1/namespaces/ns/pods/p/binding"
    body = json.loads(r.content)
    assert body["kind"] == "Binding" and body["target"] == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "node-a",
    }
    assert body["metadata"]["uid"] == "uid-1"


async def test_delete_sends_preconditions_and_reports_what_is_left() -> None:
    terminating = dict(
        POD_OBJ, metadata=dict(POD_OBJ["metadata"], deletionTimestamp="x", deletionGracePeriodSeconds=30)
    )
    api, rec = api_with(
        [
            (200, terminating),
            (200, {"kind": "Status", "status": "Success"}),
            (
                200,
                dict(
                    POD_OBJ,
                    metadata=dict(POD_OBJ["metadata"], deletionTimestamp="x", deletionGracePeriodSeconds=0),
                ),
            ),
        ]
    )
    left = await api.delete(POD, "ns", "p", uid="u1")
    assert left is not None and left["metadata"]["deletionGracePeriodSeconds"] == 30
    r = rec.requests[0]
    assert r.method == "DELETE" and r.url.path == "/api/v1/namespaces/ns/pods/p"
    assert json.loads(r.content)["preconditions"] == {"uid": "u1"}
    assert await api.delete(STATEFULSET, "ns", "s", propagation="Foreground") is None
    assert rec.requests[1].url.path == "/apis/apps/v1/namespaces/ns/statefulsets/s"
    assert json.loads(rec.requests[1].content)["propagationPolicy"] == "Foreground"
    assert await api.delete(POD, "ns", "p", grace_period=0) is None, (
        "a pod deleted at once answers with its last state"
    )


async def test_errors_carry_code_and_reason() -> None:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": "AlreadyExists",
        "code": 409,
        "message": "exists",
    }
    api, _ = api_with([(409, status), (404, dict(status, reason="NotFound", code=404))])
    try:
        await api.create(POD, {"metadata": {"name": "p", "namespace": "ns"}})
    except KubeError as e:
        assert e.already_exists and e.conflict
    else:
        raise AssertionError("no error")
    assert await api.get(POD, "ns", "missing") is None
