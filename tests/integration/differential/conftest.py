"""The pair of targets every differential case runs on: a fresh embedded API
server and the real kube-apiserver ``MO_TEST_KUBECONFIG`` names (which the
top-level conftest starts from ``KUBEBUILDER_ASSETS``), each with a namespace
``diff-<random>`` of the same name. Without a real server the whole module is
skipped, with one reason."""

from __future__ import annotations

import base64
import os
import secrets
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from lightkube import KubeConfig

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client import keepalive
from mo_operator.kube.client.client import ApiClient

from .harness import USER_AGENT, Target

SKIP_REASON = (
    "differential tests compare with a real kube-apiserver: set KUBEBUILDER_ASSETS to a folder "
    "of control-plane binaries (etcd, kube-apiserver, kube-controller-manager)"
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A module's ``case_*`` functions are its cases, one test each."""
    if "case" in metafunc.fixturenames:
        cases = [f for name, f in vars(metafunc.module).items() if name.startswith("case_")]
        metafunc.parametrize("case", cases, ids=[f.__name__.removeprefix("case_") for f in cases])


@pytest.fixture(scope="session", autouse=True)
def real_kubeconfig() -> Path:
    """The real server's kubeconfig; without one every case is skipped."""
    value = os.environ.get("MO_TEST_KUBECONFIG")
    if not value:
        pytest.skip(SKIP_REASON)
    return Path(value)


def _real_access(kubeconfig: Path) -> tuple[str, ssl.SSLContext, str]:
    """Server URL, TLS context and bearer token of the kubeconfig's current context."""
    config: dict[str, Any] = yaml.safe_load(kubeconfig.read_text())
    context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    if "certificate-authority-data" in cluster:
        tls = ssl.create_default_context(
            cadata=base64.b64decode(cluster["certificate-authority-data"]).decode()
        )
    else:
        tls = ssl.create_default_context(cafile=cluster["certificate-authority"])
    return cluster["server"], tls, user["token"]


async def _namespace(t: Target) -> None:
    reply = await t.post("/api/v1/namespaces", {"metadata": {"name": t.ns}})
    assert reply.code == 201, reply


@pytest.fixture
async def pair(real_kubeconfig: Path) -> AsyncIterator[tuple[Target, Target]]:
    """(embedded, real). The real side's namespace is deleted at the end, with
    the cluster-scoped objects a case listed in ``cleanup``; the embedded
    server is thrown away whole."""
    tag = secrets.token_hex(3)
    ns = f"diff-{tag}"
    cp = ControlPlane(simulate_workloads=False)
    await cp.start()
    server = cp.server
    url, real_tls, real_token = _real_access(real_kubeconfig)
    async with keepalive.keepalive_session() as session:
        embedded = Target(
            "embedded",
            server.url,
            session,
            ssl.create_default_context(cadata=server.ca.cert_pem.decode()),
            server.token,
            ns,
            tag,
            ApiClient(
                KubeConfig.from_dict(server.kubeconfig()), field_manager="differential", user_agent=USER_AGENT
            ),
        )
        real = Target(
            "kube-apiserver",
            url,
            session,
            real_tls,
            real_token,
            ns,
            tag,
            ApiClient.from_kubeconfig(
                str(real_kubeconfig), field_manager="differential", user_agent=USER_AGENT
            ),
        )
        try:
            await _namespace(embedded)
            await _namespace(real)
            # kube-controller-manager gives every namespace its "default"
            # ServiceAccount, without which the real server refuses pods.
            await real.wait_for(
                lambda: _exists(real, f"/api/v1/namespaces/{ns}/serviceaccounts/default"),
                "the namespace's default ServiceAccount exists",
            )
            yield embedded, real
        finally:
            for path in real.cleanup:
                await real.delete(path)
            await real.delete(f"/api/v1/namespaces/{ns}")
            await embedded.client.close()
            await real.client.close()
            await cp.stop()


async def _exists(t: Target, path: str) -> bool:
    return (await t.get(path)).code == 200
