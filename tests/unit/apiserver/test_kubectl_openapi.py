"""kubectl against the OpenAPI documents and tables: a small HTTP server
serves discovery (the registry's documents), ``/openapi/v3`` and a few
objects, and the real kubectl binary is run against it.

What kubectl does with the documents is in kubectl's source:
``pkg/explain/v2`` (explain finds the kind through an operation's
``x-kubernetes-group-version-kind``), cli-runtime
``pkg/resource/query_param_verifier_v3.go`` (server-side field validation is
used when the kind's PATCH operation takes ``fieldValidation``) and
``pkg/cmd/apply/patcher.go`` (strategic merge patch from the document only if
it advertises that media type, else from kubectl's compiled-in types).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web

from mo_devkit.cli.demo import kubectl_binary
from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES
from mo_devkit.localcluster.apiserver.openapi.document import openapi_document, openapi_index, openapi_v2
from mo_devkit.localcluster.apiserver.registry import Registry
from mo_devkit.localcluster.apiserver.tables import to_table

CRD = {
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "A Widget is a thing the tests make.",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "What the widget should be.",
                                "properties": {
                                    "size": {
                                        "type": "integer",
                                        "description": "How big the widget is, in cubits.",
                                    }
                                },
                            },
                            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
                        },
                    }
                },
            }
        ],
    },
}

_NOW = datetime.now(UTC)
_TWO_DAYS_AGO = (_NOW - timedelta(days=2, hours=3)).strftime("%Y-%m-%dT%H:%M:%SZ")

DEPLOYMENT_V1 = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "default"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]},
        },
    },
}


@dataclass
class FakeServer:
    """Discovery and OpenAPI from the real modules; objects from a dict."""

    registry: Registry
    objects: dict[str, dict[str, Any]] = field(default_factory=dict)
    requests: list[tuple[str, str, str, str]] = field(
        default_factory=list
    )  # method, path, query, content type
    patches: list[Any] = field(default_factory=list)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path.rstrip("/")
        self.requests.append((request.method, path, request.query_string, request.content_type))
        parts = [p for p in path.split("/") if p]
        if path == "/api":
            return web.json_response(self.registry.api_versions("127.0.0.1"))
        if path == "/apis":
            return web.json_response(self.registry.api_group_list())
        if parts[:1] == ["api"] and len(parts) == 2:
            return web.json_response(self.registry.resource_list("", parts[1]))
        if parts[:1] == ["apis"] and len(parts) == 3:
            return web.json_response(self.registry.resource_list(parts[1], parts[2]))
        if path == "/openapi/v3":
            return web.json_response(openapi_index(self.registry.all()))
        if path.startswith("/openapi/v3/"):
            group, version = ("", parts[3]) if parts[2] == "api" else (parts[3], parts[4])
            doc = openapi_document(group, version, self.registry.all())
            return web.json_response(doc) if doc else _not_found()
        if path == "/openapi/v2":
            body, content_type = openapi_v2(request.headers.get("Accept", ""))
            return web.Response(body=body, headers={"Content-Type": content_type})
        if request.method == "PATCH" and path in self.objects:
            self.patches.append(json.loads(await request.read()))
            return web.json_response(self.objects[path])
        if request.method == "GET" and path in self.objects:
            return web.json_response(self.objects[path])
        if request.method == "GET" and parts and parts[-1] in ("pods", "widgets"):
            return self._table(parts[-1], request)
        return _not_found()

    def _table(self, plural: str, request: web.Request) -> web.Response:
        group = "example.com" if plural == "widgets" else ""
        rt = next(rt for rt in self.registry.all() if rt.plural == plural and rt.group == group)
        items = [o for p, o in self.objects.items() if f"/{plural}/" in p]
        table = to_table(rt, items, include_object=request.query.get("includeObject", ""), now=_NOW)
        table["metadata"] = {"resourceVersion": "7"}
        return web.json_response(table)


def _not_found() -> web.Response:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404}
    return web.json_response(status, status=404)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[FakeServer, Path]]:
    registry = Registry(BUILTIN_RESOURCE_TYPES)
    registry.set_custom(CRD)
    fake = FakeServer(registry)
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", fake.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "t", "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "u", "user": {}}],
                "contexts": [{"name": "t", "context": {"cluster": "t", "user": "u", "namespace": "default"}}],
                "current-context": "t",
            }
        )
    )
    try:
        yield fake, kubeconfig
    finally:
        await runner.cleanup()


async def kubectl(kubeconfig: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    proc = await asyncio.create_subprocess_exec(
        kubectl_binary(),
        "--kubeconfig",
        str(kubeconfig),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else None,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(kubeconfig.parent), "KUBECACHEDIR": str(kubeconfig.parent / "cache")},
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 60)
    return subprocess.CompletedProcess(list(args), proc.returncode or 0, out.decode(), err.decode())


async def test_explain_prints_builtin_field_descriptions(server: tuple[FakeServer, Path]) -> None:
    _, kubeconfig = server
    result = await kubectl(kubeconfig, "explain", "pods.spec.containers")
    assert result.returncode == 0, result.stderr
    assert "KIND:       Pod" in result.stdout
    assert "FIELD: containers <[]Container>" in result.stdout
    assert "List of containers belonging to the pod." in result.stdout
    assert "name\t<string> -required-" in result.stdout
    assert "resources\t<ResourceRequirements>" in result.stdout

    result = await kubectl(kubeconfig, "explain", "statefulsets.spec")
    assert result.returncode == 0, result.stderr
    assert "GROUP:      apps" in result.stdout
    assert "FIELD: spec <StatefulSetSpec>" in result.stdout
    assert "volumeClaimTemplates\t<[]PersistentVolumeClaim>" in result.stdout

    result = await kubectl(kubeconfig, "explain", "pods.spec.containers.resources.limits")
    assert "FIELD: limits <map[string]Quantity>" in result.stdout


async def test_explain_prints_custom_resource_schema_descriptions(server: tuple[FakeServer, Path]) -> None:
    _, kubeconfig = server
    result = await kubectl(kubeconfig, "explain", "widgets.spec.size")
    assert result.returncode == 0, result.stderr
    assert "GROUP:      example.com" in result.stdout
    assert "FIELD: size <integer>" in result.stdout
    assert "How big the widget is, in cubits." in result.stdout

    result = await kubectl(kubeconfig, "explain", "widgets")
    assert "A Widget is a thing the tests make." in result.stdout
    assert "metadata\t<ObjectMeta>" in result.stdout


async def test_create_leaves_field_validation_to_the_server(server: tuple[FakeServer, Path]) -> None:
    """kubectl validates client-side (against /openapi/v2) only for kinds whose
    PATCH operation lacks ``fieldValidation``; an unknown field must therefore
    pass kubectl untouched and no v2 document be needed."""
    fake, kubeconfig = server
    manifest = yaml.safe_dump_all(
        [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "bogus": 1},
            {
                "apiVersion": "example.com/v1",
                "kind": "Widget",
                "metadata": {"name": "w"},
                "spec": {"extra": 1},
            },
            DEPLOYMENT_V1,
        ]
    )
    result = await kubectl(kubeconfig, "create", "--dry-run=client", "-o", "name", "-f", "-", stdin=manifest)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["configmap/c", "widget.example.com/w", "deployment.apps/web"]
    assert not [r for r in fake.requests if r[1] == "/openapi/v2"]


async def test_a_list_file_is_accepted_with_the_empty_v2_document(server: tuple[FakeServer, Path]) -> None:
    """A ``kind: List`` is always validated client-side with the v2 document
    (kubectl ``pkg/validation``); a 404 there would fail the command."""
    _, kubeconfig = server
    manifest = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}],
        }
    )
    result = await kubectl(kubeconfig, "create", "--dry-run=client", "-o", "name", "-f", "-", stdin=manifest)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "configmap/x"


async def test_apply_sends_strategic_merge_patch_computed_by_kubectl_types(
    server: tuple[FakeServer, Path],
) -> None:
    """Removing a container is a strategic merge patch that orders the
    remaining ones by their merge key (``$setElementOrder``): only kubectl's
    compiled-in types know that key, so this proves kubectl used them, and
    ``fieldValidation=Strict`` shows it relied on the server to validate."""
    fake, kubeconfig = server
    applied = json.loads(json.dumps(DEPLOYMENT_V1))
    live = json.loads(json.dumps(DEPLOYMENT_V1))
    live["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied)
    }
    fake.objects["/apis/apps/v1/namespaces/default/deployments/web"] = live
    applied["spec"]["template"]["spec"]["containers"] = [{"name": "a", "image": "a:2"}]

    result = await kubectl(kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump(applied))
    assert result.returncode == 0, result.stderr
    patch_requests = [r for r in fake.requests if r[0] == "PATCH"]
    assert patch_requests[0][3] == "application/strategic-merge-patch+json"
    assert "fieldValidation=Strict" in patch_requests[0][2]
    template_spec = fake.patches[0]["spec"]["template"]["spec"]
    assert template_spec["$setElementOrder/containers"] == [{"name": "a"}]


async def test_apply_to_a_custom_resource_sends_a_merge_patch(server: tuple[FakeServer, Path]) -> None:
    fake, kubeconfig = server
    applied: dict[str, Any] = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 1}}
    applied["metadata"] = {"name": "w1", "namespace": "default"}
    live = json.loads(json.dumps(applied))
    live["metadata"]["annotations"] = {
        "kubectl.kubernetes.io/last-applied-configuration": json.dumps(applied)
    }
    fake.objects["/apis/example.com/v1/namespaces/default/widgets/w1"] = live

    result = await kubectl(
        kubeconfig, "apply", "-f", "-", stdin=yaml.safe_dump({**applied, "spec": {"size": 2}})
    )
    assert result.returncode == 0, result.stderr
    assert [r[3] for r in fake.requests if r[0] == "PATCH"] == ["application/merge-patch+json"]
    assert fake.patches[0]["spec"] == {"size": 2}


async def test_get_prints_the_server_tables(server: tuple[FakeServer, Path]) -> None:
    fake, kubeconfig = server
    fake.objects["/api/v1/namespaces/default/pods/p1"] = {
        "metadata": {"name": "p1", "namespace": "default", "creationTimestamp": _TWO_DAYS_AGO},
        "spec": {"containers": [{"name": "c"}], "nodeName": "node-1"},
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.5"}],
            "containerStatuses": [{"name": "c", "ready": True, "restartCount": 0, "state": {"running": {}}}],
        },
    }
    fake.objects["/apis/example.com/v1/namespaces/default/widgets/w1"] = {
        "metadata": {"name": "w1", "namespace": "default", "creationTimestamp": _TWO_DAYS_AGO},
        "spec": {"size": 3},
        "status": {"phase": "Shiny"},
    }
    result = await kubectl(kubeconfig, "get", "pods", "-o", "wide")
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split() == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED",
        "NODE",
        "READINESS",
        "GATES",
    ]
    assert row.split() == ["p1", "1/1", "Running", "0", "2d3h", "10.0.0.5", "node-1", "<none>", "<none>"]

    result = await kubectl(kubeconfig, "get", "widgets")
    assert result.returncode == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["NAME", "SIZE", "PHASE"],
        ["w1", "3", "Shiny"],
    ]
