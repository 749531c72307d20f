"""The embedded control plane with our CRDs installed and our webhooks running
in this process (a ``WebhookServer`` on 127.0.0.1 with a generated CA),
registered through URL client configurations, as an operator running outside
the cluster registers itself."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube.config.kubeconfig import KubeConfig

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.api.crdgen import all_crds
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.webhooks import install_webhook_configurations, register

CRD = Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)

# The upstream-derived examples the api unit tests use (see the comment atop each).
MANIFESTS = Path(__file__).resolve().parents[2] / "unit" / "api" / "manifests"


def example_files() -> dict[str, Path]:
    return {p.stem: p for p in sorted(MANIFESTS.glob("*.yaml"))}


def load(path: Path) -> dict[str, Any]:
    obj: dict[str, Any] = yaml.safe_load(path.read_text())
    return obj


@dataclass
class Webhooks:
    server: WebhookServer
    certs: GeneratedCerts
    client: ApiClient
    configurations: list[dict[str, Any]]


async def install_crds(client: ApiClient) -> None:
    """Create every CRD of ours and wait until each is Established (served)."""
    await asyncio.gather(*(client.create(CRD, crd) for crd in all_crds()))
    pending = {c["metadata"]["name"] for c in all_crds()}
    for _ in range(200):
        for name in list(pending):
            conditions = (await client.get(CRD, name)).get("status", {}).get("conditions") or []
            if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                pending.discard(name)
        if not pending:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"CRDs not established: {sorted(pending)}")


@pytest.fixture
async def webhooks(control_plane: ControlPlane) -> AsyncIterator[Webhooks]:
    client = ApiClient(KubeConfig.from_dict(control_plane.server.kubeconfig()), field_manager="test")
    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0)
    register(server)
    await server.start()
    try:
        await install_crds(client)
        configurations = await install_webhook_configurations(
            client, url_base=f"https://127.0.0.1:{server.port}", ca_bundle=certs.ca_bundle
        )
        yield Webhooks(server, certs, client, configurations)
    finally:
        await server.stop()
        await client.close()
