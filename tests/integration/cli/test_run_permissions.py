"""``mo-operator run --webhook-url`` under an identity that may do everything
the operator needs but write webhook configurations: it says in one line
which permission is missing (verb, resource, API group, user) and exits 1,
without a traceback.

Run twice: against the real kube-apiserver ``MO_TEST_KUBECONFIG`` names (a
ServiceAccount with a ClusterRole that grants everything else, and a token
from the TokenRequest API), and against the embedded API server, which does
not authorize requests, behind a proxy that refuses those writes with the
answer kube-apiserver's RBAC authorizer gives."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web
from lightkube import KubeConfig, codecs
from lightkube.core.exceptions import ApiError
from lightkube.models.authentication_v1 import TokenRequestSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import Namespace, ServiceAccountToken
from lightkube.resources.rbac_authorization_v1 import ClusterRole, ClusterRoleBinding

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing import free_port
from mo_operator.kube.client import keepalive
from mo_operator.kube.client.keepalive import lightkube_client

from .process import Command, run_with_webhook_url

WEBHOOKS_GROUP = "admissionregistration.k8s.io"
ALLOWED_GROUPS = [
    "",
    "apps",
    "batch",
    "policy",
    "coordination.k8s.io",
    "core.matrixorigin.io",
    "events.k8s.io",
]
EMBEDDED_USER = "system:serviceaccount:mo-operator-system:mo-operator"
VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def forbidden(user: str, verb: str, resource: str, name: str) -> dict[str, Any]:
    """kube-apiserver's answer when RBAC refuses a request on a cluster-scoped object."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'{resource}.{WEBHOOKS_GROUP} "{name}" is forbidden: User "{user}" cannot {verb}'
        f' resource "{resource}" in API group "{WEBHOOKS_GROUP}" at the cluster scope',
        "reason": "Forbidden",
        "details": {"name": name, "group": WEBHOOKS_GROUP, "kind": resource},
        "code": 403,
    }


async def rbac_proxy(cp: ControlPlane, port: int) -> web.AppRunner:
    """Plain HTTP on ``port``: writes of webhook configurations are refused for
    ``EMBEDDED_USER``, everything else goes on to the embedded server as admin."""
    session = keepalive.keepalive_session()

    async def handle(request: web.Request) -> web.StreamResponse:
        parts = request.path.strip("/").split("/")
        if parts[:2] == ["apis", WEBHOOKS_GROUP] and request.method in VERBS:
            body = forbidden(EMBEDDED_USER, VERBS[request.method], parts[3], parts[-1])
            return web.json_response(body, status=403)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "authorization")}
        headers["Authorization"] = f"Bearer {cp.server.token}"
        async with keepalive.request(
            session,
            request.method,
            cp.server.url + request.path_qs,
            headers=headers,
            data=await request.read(),
            ssl=False,
        ) as upstream:
            return web.Response(
                status=upstream.status,
                body=await upstream.read(),
                headers={"Content-Type": upstream.headers.get("Content-Type", "application/json")},
            )

    app = web.Application()
    app.router.add_route("*", "/{path:.*}", handle)
    app.on_cleanup.append(lambda _: session.close())
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner


@pytest.fixture
async def embedded_identity(control_plane: ControlPlane, tmp_path: Path) -> AsyncIterator[tuple[Path, str]]:
    port = free_port()
    proxy = await rbac_proxy(control_plane, port)
    config = control_plane.server.kubeconfig()
    config["clusters"][0]["cluster"] = {"server": f"http://127.0.0.1:{port}"}
    config["users"][0]["user"] = {"token": "the-operator's"}
    path = tmp_path / "operator.kubeconfig"
    path.write_text(yaml.safe_dump(config))
    try:
        yield path, EMBEDDED_USER
    finally:
        await proxy.cleanup()


@pytest.fixture
async def real_identity(tmp_path: Path) -> AsyncIterator[tuple[Path, str]]:
    """A ServiceAccount in a namespace of its own, bound to a ClusterRole with
    everything but writes of webhook configurations; all removed afterwards."""
    admin_path = os.environ.get("MO_TEST_KUBECONFIG")
    if not admin_path:
        pytest.skip("needs a real API server: MO_TEST_KUBECONFIG (or KUBEBUILDER_ASSETS)")
    name = f"mo-perm-{secrets.token_hex(3)}"
    admin = lightkube_client(KubeConfig.from_file(admin_path))
    role = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [
            {"apiGroups": ALLOWED_GROUPS, "resources": ["*"], "verbs": ["*"]},
            {"apiGroups": [WEBHOOKS_GROUP], "resources": ["*"], "verbs": ["get", "list", "watch"]},
        ],
    }
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": name}],
    }
    service_account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "operator", "namespace": name},
    }
    try:
        await admin.create(Namespace(metadata=ObjectMeta(name=name)))
        for obj in (service_account, role, binding):
            resource: Any = codecs.from_dict(obj)
            await admin.create(resource)
        token = await admin.create(
            ServiceAccountToken(
                metadata=ObjectMeta(), spec=TokenRequestSpec(audiences=[], expirationSeconds=3600)
            ),
            "operator",
            namespace=name,
        )
        assert token.status is not None
        config = yaml.safe_load(Path(admin_path).read_text())
        current = next(c for c in config["contexts"] if c["name"] == config["current-context"])
        current["context"]["namespace"] = name
        next(u for u in config["users"] if u["name"] == current["context"]["user"])["user"] = {
            "token": token.status.token
        }
        path = tmp_path / "operator.kubeconfig"
        path.write_text(yaml.safe_dump(config))
        yield path, f"system:serviceaccount:{name}:operator"
    finally:
        for kind in (ClusterRoleBinding, ClusterRole, Namespace):
            with contextlib.suppress(ApiError):  # not created: the setup failed before it
                await admin.delete(kind, name)
        await admin.close()


@pytest.fixture(params=["embedded", "real"])
def identity(request: pytest.FixtureRequest) -> tuple[Path, str]:
    """(kubeconfig, user name) of an operator that may not write webhook configurations."""
    found: tuple[Path, str] = request.getfixturevalue(f"{request.param}_identity")
    return found


async def test_a_missing_permission_is_one_line_and_exit_1(identity: tuple[Path, str]) -> None:
    kubeconfig, user = identity
    port = free_port()
    run = await Command.start(*run_with_webhook_url(kubeconfig, port))
    try:
        assert await run.exit_code(timeout=60) == 1, run.output
    finally:
        await run.kill()
    assert run.said("Traceback") == [], run.output
    errors = run.said(" ERROR ")
    assert len(errors) == 1, run.output
    line = errors[0]
    assert "permission missing while registering the webhooks (--webhook-url)" in line
    assert f'User "{user}"' in line
    assert 'cannot patch resource "mutatingwebhookconfigurations"' in line or "cannot create" in line
    assert f'in API group "{WEBHOOKS_GROUP}"' in line
