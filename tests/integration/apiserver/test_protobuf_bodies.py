"""Kubernetes protobuf request bodies: kubectl 1.37's generator commands
(``kubectl create secret generic``, ``create deployment``...) send built-in
kinds as ``application/vnd.kubernetes.protobuf``, which kube-apiserver accepts
for built-in kinds and refuses with 415 for custom resources
(apiextensions-apiserver serves JSON and YAML only). Writes other than create
(update, the scale subresource, DeleteOptions) are sent here raw, encoded by
hand from the generated.proto field numbers quoted in comments.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from conftest import Kubectl

from .conftest import Raw
from .test_crd import WIDGETS, install, widget

PROTOBUF = "application/vnd.kubernetes.protobuf"
RBAC = "rbac.authorization.k8s.io"


async def get(kubectl: Kubectl, *args: str) -> dict[str, Any]:
    out = await kubectl.run("get", *args, "-o", "json")
    obj: dict[str, Any] = json.loads(out.stdout)
    return obj


# ------------------------------------------------------------ kubectl create
async def test_kubectl_sends_protobuf_and_accepts_a_json_answer(kubectl: Kubectl) -> None:
    out = await kubectl.run("create", "namespace", "team-a", "-v=8")
    assert "namespace/team-a created" in out.stdout
    assert f"Content-Type: {PROTOBUF}" in out.stderr, (
        "kubectl no longer sends protobuf: this test proves nothing"
    )
    ns = await get(kubectl, "namespace", "team-a")
    assert ns["metadata"]["name"] == "team-a" and ns["status"]["phase"] == "Active"
    assert "generateName" not in ns["metadata"] and "deletionTimestamp" not in ns["metadata"]


async def test_create_secret_generic_from_literals(kubectl: Kubectl) -> None:
    out = await kubectl.run(
        "create",
        "secret",
        "generic",
        "s3-credentials",
        "--from-literal=AWS_ACCESS_KEY_ID=AKIAEXAMPLE",
        "--from-literal=AWS_SECRET_ACCESS_KEY=s3cr3t/+=",
        "--from-literal=EMPTY=",
    )
    assert "secret/s3-credentials created" in out.stdout
    secret = await get(kubectl, "secret", "s3-credentials")
    assert {k: base64.b64decode(v).decode() for k, v in secret["data"].items()} == {
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t/+=",
        "EMPTY": "",
    }
    assert secret["type"] == "Opaque" and secret["metadata"]["namespace"] == "default"


async def test_create_configmap_from_literals(kubectl: Kubectl) -> None:
    await kubectl.run("create", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=two words")
    cm = await get(kubectl, "configmap", "settings")
    assert cm["data"] == {"a": "1", "b": "two words"} and "binaryData" not in cm


async def test_create_deployment_with_zero_replicas(kubectl: Kubectl) -> None:
    await kubectl.run("create", "deployment", "web", "--image=nginx:1.25", "--replicas=0", "--port=8080")
    d = await get(kubectl, "deployment", "web")
    assert d["metadata"]["labels"] == {"app": "web"}
    spec = d["spec"]
    assert spec["replicas"] == 0, "a pointer set to zero on the wire is kept"
    assert spec["selector"] == {"matchLabels": {"app": "web"}}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["name"] == "nginx" and container["image"] == "nginx:1.25"
    assert container["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]
    assert d["metadata"]["generation"] == 1


async def test_create_service_clusterip(kubectl: Kubectl) -> None:
    await kubectl.run("create", "service", "clusterip", "web", "--tcp=5678:8080")
    svc = await get(kubectl, "service", "web")
    assert svc["metadata"]["labels"] == {"app": "web"}
    spec = svc["spec"]
    assert spec["ports"] == [{"name": "5678-8080", "port": 5678, "protocol": "TCP", "targetPort": 8080}]
    assert spec["selector"] == {"app": "web"} and spec["type"] == "ClusterIP"
    assert spec["clusterIP"] and spec["clusterIPs"] == [spec["clusterIP"]]


async def test_create_serviceaccount(kubectl: Kubectl) -> None:
    await kubectl.run("create", "serviceaccount", "robot")
    sa = await get(kubectl, "serviceaccount", "robot")
    assert sa["metadata"]["name"] == "robot" and sa["metadata"]["namespace"] == "default"


async def test_create_role_and_rolebinding(kubectl: Kubectl) -> None:
    await kubectl.run(
        "create",
        "role",
        "reader",
        "--verb=get,list",
        "--resource=pods,deployments.apps",
        "--resource-name=web",
    )
    role = await get(kubectl, "role", "reader")
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"], "verbs": ["get", "list"]},
        {
            "apiGroups": ["apps"],
            "resources": ["deployments"],
            "resourceNames": ["web"],
            "verbs": ["get", "list"],
        },
    ]
    await kubectl.run(
        "create",
        "rolebinding",
        "readers",
        "--role=reader",
        "--user=alice",
        "--group=devs",
        "--serviceaccount=default:robot",
    )
    rb = await get(kubectl, "rolebinding", "readers")
    assert rb["roleRef"] == {"apiGroup": RBAC, "kind": "Role", "name": "reader"}
    assert rb["subjects"] == [
        {"apiGroup": RBAC, "kind": "User", "name": "alice"},
        {"apiGroup": RBAC, "kind": "Group", "name": "devs"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": "default"},
    ]


async def test_create_clusterrole_and_clusterrolebinding(kubectl: Kubectl) -> None:
    await kubectl.run("create", "clusterrole", "health", "--verb=get", "--non-resource-url=/healthz")
    cr = await get(kubectl, "clusterrole", "health")
    assert cr["rules"] == [{"nonResourceURLs": ["/healthz"], "verbs": ["get"]}]
    await kubectl.run("create", "clusterrolebinding", "health", "--clusterrole=health", "--user=bob")
    crb = await get(kubectl, "clusterrolebinding", "health")
    assert crb["roleRef"] == {"apiGroup": RBAC, "kind": "ClusterRole", "name": "health"}
    assert crb["subjects"] == [{"apiGroup": RBAC, "kind": "User", "name": "bob"}]


async def test_create_job(kubectl: Kubectl) -> None:
    await kubectl.run("create", "job", "once", "--image=busybox:1.36", "--", "echo", "hi there")
    job = await get(kubectl, "job", "once")
    pod = job["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["name"] == "once" and container["image"] == "busybox:1.36"
    assert container["command"] == ["echo", "hi there"]
    assert pod["restartPolicy"] == "Never"


async def test_create_poddisruptionbudget_int_or_string(kubectl: Kubectl) -> None:
    await kubectl.run("create", "poddisruptionbudget", "half", "--selector=app=web", "--min-available=50%")
    await kubectl.run("create", "poddisruptionbudget", "one", "--selector=app=web", "--max-unavailable=1")
    half, one = await get(kubectl, "pdb", "half"), await get(kubectl, "pdb", "one")
    assert half["spec"] == {"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    assert one["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web"}}}


async def test_server_dry_run_stores_nothing(kubectl: Kubectl) -> None:
    out = await kubectl.run(
        "create", "configmap", "ghost", "--from-literal=a=b", "--dry-run=server", "-o", "json"
    )
    assert json.loads(out.stdout)["data"] == {"a": "b"}
    res = await kubectl.run("get", "configmap", "ghost", check=False)
    assert res.returncode != 0 and "NotFound" in res.stderr


# ------------------------------------------------------------- raw requests
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def vi(number: int, n: int) -> bytes:
    return varint(number << 3) + varint(n)


def ld(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def pb(api_version: str, kind: str, *parts: bytes) -> bytes:
    """``k8s\\0`` + runtime.Unknown{typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}."""
    return b"k8s\x00" + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, b"".join(parts))


def configmap(name: str, data: dict[str, str], resource_version: str = "") -> bytes:
    # ConfigMap: metadata = 1 {name = 1, resourceVersion = 6}, data = 2 (map entries {key = 1, value = 2}).
    meta = ld(1, name) + (ld(6, resource_version) if resource_version else b"")
    entries = b"".join(ld(2, ld(1, k) + ld(2, v)) for k, v in data.items())
    return pb("v1", "ConfigMap", ld(1, meta), entries)


CMS = "/api/v1/namespaces/default/configmaps"


async def test_update_with_a_protobuf_body(raw: Raw) -> None:
    code, created = await raw.post(CMS, configmap("cfg", {"a": "1"}), content_type=PROTOBUF)
    assert code == 201, created
    rv = created["metadata"]["resourceVersion"]
    code, updated = await raw.put(
        f"{CMS}/cfg", configmap("cfg", {"a": "2", "b": "3"}, rv), content_type=PROTOBUF
    )
    assert code == 200, updated
    assert updated["data"] == {"a": "2", "b": "3"} and updated["metadata"]["resourceVersion"] != rv
    code, err = await raw.put(f"{CMS}/cfg", configmap("cfg", {"a": "4"}, rv), content_type=PROTOBUF)
    assert code == 409 and err["reason"] == "Conflict"


async def test_scale_subresource_with_a_protobuf_body(raw: Raw, kubectl: Kubectl) -> None:
    await kubectl.run("create", "deployment", "web", "--image=nginx", "--replicas=1")
    # autoscaling/v1 Scale: metadata = 1 {name = 1}, spec = 2 {replicas = 1}.
    scale = pb("autoscaling/v1", "Scale", ld(1, ld(1, "web")), ld(2, vi(1, 4)))
    code, body = await raw.put(
        "/apis/apps/v1/namespaces/default/deployments/web/scale", scale, content_type=PROTOBUF
    )
    assert code == 200, body
    assert body["spec"]["replicas"] == 4
    _, d = await raw.get("/apis/apps/v1/namespaces/default/deployments/web")
    assert d["spec"]["replicas"] == 4


async def test_delete_options_in_protobuf(raw: Raw) -> None:
    code, cm = await raw.post(CMS, configmap("doomed", {}), content_type=PROTOBUF)
    assert code == 201
    # DeleteOptions: preconditions = 2 {uid = 1}.
    wrong_uid = pb("meta.k8s.io/v1", "DeleteOptions", ld(2, ld(1, "not-the-uid")))
    code, err = await raw.delete(f"{CMS}/doomed", wrong_uid, content_type=PROTOBUF)
    assert code == 409 and "the UID in the precondition (not-the-uid)" in err["message"]
    right_uid = pb("meta.k8s.io/v1", "DeleteOptions", ld(2, ld(1, cm["metadata"]["uid"])))
    code, status = await raw.delete(f"{CMS}/doomed", right_uid, content_type=PROTOBUF)
    assert code == 200 and status["status"] == "Success"
    code, err = await raw.delete(f"{CMS}/nothing", configmap("x", {}), content_type=PROTOBUF)
    assert code == 400 and err["message"] == "decoded object cannot be converted to DeleteOptions"


async def test_undecodable_bodies_are_bad_requests(raw: Raw) -> None:
    code, err = await raw.post(CMS, b"k8s\x00\x0a\x05v1", content_type=PROTOBUF)
    assert code == 400 and err["reason"] == "BadRequest"
    assert "the object provided is unrecognized (must be of type ConfigMap)" in err["message"]
    code, err = await raw.post(CMS, pb("v1", "ConfigMap", vi(1, 3)), content_type=PROTOBUF)
    assert code == 400
    assert err["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: wrong wireType = 0 for field metadata'
    )
    code, err = await raw.post(CMS, b'{"kind": "ConfigMap"}', content_type=PROTOBUF)
    assert code == 400 and "does not appear to be a protobuf message" in err["message"]
    code, err = await raw.post(CMS, pb("v1", "Secret", ld(1, ld(1, "s"))), content_type=PROTOBUF)
    assert code == 400 and "cannot be handled as a ConfigMap" in err["message"]
    code, _ = await raw.get(f"{CMS}/s")
    assert code == 404


async def test_custom_resources_refuse_protobuf_like_kube_apiserver(raw: Raw) -> None:
    await install(raw)
    body = pb("example.com/v1", "Widget", ld(1, ld(1, "w")))
    code, err = await raw.post(WIDGETS, body, content_type=PROTOBUF)
    assert code == 415 and err["reason"] == "UnsupportedMediaType"
    assert err["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        f"application/json, application/yaml (got {PROTOBUF})"
    )
    code, _ = await raw.post(WIDGETS, widget("w", replicas=1))
    assert code == 201
    code, err = await raw.put(f"{WIDGETS}/w", body, content_type=PROTOBUF)
    assert code == 415
    # DeleteOptions are decoded with kube-apiserver's own codecs, protobuf
    # included, whatever the resource (apiserver endpoints/handlers/delete.go).
    options = pb("meta.k8s.io/v1", "DeleteOptions", ld(4, "Background"))
    code, status = await raw.delete(f"{WIDGETS}/w", options, content_type=PROTOBUF)
    assert code == 200 and status["status"] == "Success"
