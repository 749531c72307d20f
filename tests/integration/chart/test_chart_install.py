"""The Helm chart installed, upgraded and uninstalled on kube-apiserver by Helm
itself (``helm-python-sdk``: Helm v4's SDK, no binary), with the CRDs from the
chart's ``crds/``; and the operator run as the chart's Deployment runs it: its
arguments, its mounted ConfigMap, and the chart's ServiceAccount (a token from
the TokenRequest API), so that the chart's RBAC is what the API server judges.

An example cluster reaches Ready with no request refused (the operator's
``rest_client_requests_total{code="403"}`` stays absent and its log names no
403). The upgrade changes the ConfigMap (``defaultArgs``), which restarts the
operator in a cluster; the restarted operator rolls no MatrixOne pod.

The chart is installed with ``webhook.enabled=false``: kube-apiserver here has
no pod network to reach a webhook Service (the webhooks are the e2e suite's).
Real API server only (``KUBEBUILDER_ASSETS``, CI's real-server step): the
embedded one authorizes every request, so it could not tell a missing grant."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import helm_python as helm
import pytest
import yaml
from lightkube import KubeConfig
from lightkube.models.authentication_v1 import TokenRequestSpec
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.apiextensions_v1 import CustomResourceDefinition
from lightkube.resources.apps_v1 import Deployment
from lightkube.resources.core_v1 import ConfigMap, Namespace, ServiceAccount, ServiceAccountToken
from lightkube.resources.rbac_authorization_v1 import ClusterRole
from prometheus_client.parser import text_string_to_metric_families

from install_manifests import CHART_DIR
from mo_devkit.testing import free_port
from mo_devkit.testing.timings import OPERATOR_SETTINGS
from mo_devkit.testing.waiting import eventually
from mo_devkit.testing.world import World, open_world, remove_crds_and_simulated_nodes
from mo_operator.cli.operator_config import DEFAULT_ARGS
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.keepalive import lightkube_client

from ..cli.process import Command

pytestmark = pytest.mark.skipif(
    not os.environ.get("KUBEBUILDER_ASSETS"), reason="needs kube-apiserver: set KUBEBUILDER_ASSETS"
)

RELEASE = "mo-operator"
VALUES: dict[str, Any] = {"webhook": {"enabled": False}}
UPGRADED: dict[str, Any] = {**VALUES, "defaultArgs": {"cn": ["-debug-http=:6061"]}}
Obj = dict[str, Any]


def _crd_names() -> set[str]:
    return {yaml.safe_load(p.read_text())["metadata"]["name"] for p in (CHART_DIR / "crds").glob("*.yaml")}


async def _token_kubeconfig(admin: Any, admin_path: str, namespace: str, account: str, out: Path) -> Path:
    """A kubeconfig of ``admin_path``'s cluster authenticated as ``account``."""
    token = await admin.create(
        ServiceAccountToken(
            metadata=ObjectMeta(), spec=TokenRequestSpec(audiences=[], expirationSeconds=3600)
        ),
        account,
        namespace=namespace,
    )
    config = yaml.safe_load(Path(admin_path).read_text())
    current = next(c for c in config["contexts"] if c["name"] == config["current-context"])
    current["context"]["namespace"] = namespace
    next(u for u in config["users"] if u["name"] == current["context"]["user"])["user"] = {
        "token": token.status.token
    }
    out.write_text(yaml.safe_dump(config))
    return out


class ChartOperator:
    """``mo-operator run`` with the installed Deployment's arguments and environment,
    its ConfigMap written where the pod mounts it, reaching the simulated MatrixOne."""

    def __init__(self, world: World, admin: Any, namespace: str, kubeconfig: Path, workdir: Path) -> None:
        self.world, self.admin, self.namespace = world, admin, namespace
        self.kubeconfig, self.workdir = kubeconfig, workdir
        self.metrics_port = 0

    async def start(self, config_dir: Path) -> Command:
        deployment = await self.admin.get(Deployment, RELEASE, namespace=self.namespace)
        (container,) = deployment.spec.template.spec.containers
        config = await self.admin.get(ConfigMap, f"{RELEASE}-cm", namespace=self.namespace)
        config_dir.mkdir()
        for key, value in (config.data or {}).items():
            (config_dir / key).write_text(value)
        health, self.metrics_port = free_port(), free_port()
        args = [container.args[0]] + [
            {
                "--health-probe-bind-address": f"--health-probe-bind-address=127.0.0.1:{health}",
                "--metrics-bind-address": f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
                "--operator-config-dir": f"--operator-config-dir={config_dir}",
            }.get(arg.split("=")[0], arg)
            for arg in container.args[1:]
        ]
        assert args[0] == "run" and f"--operator-config-dir={config_dir}" in args, args
        book = self.world.cluster.address_book
        assert book is not None
        settings = OPERATOR_SETTINGS
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mo_devkit.testing.operator_process",
            "--mo-address-book",
            str(book),
            *args[1:],
            "--kubeconfig",
            str(self.kubeconfig),
            "--poll-seconds",
            str(settings.poll_seconds),
            "--busy-poll-seconds",
            str(settings.busy_poll_seconds),
            "--rollout-stall-seconds",
            str(settings.rollout_stall_seconds),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            env={
                **os.environ,
                "PYTHONUNBUFFERED": "1",
                "POD_NAME": f"{RELEASE}-{secrets.token_hex(3)}",
                "POD_NAMESPACE": self.namespace,
            },
        )
        return Command(proc)

    async def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        async with aiohttp.ClientSession() as session, session.get(url) as response:
            text = await response.text()
        return {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text)
            for s in family.samples
        }

    async def refused(self) -> list[str]:
        """The operator's requests the API server answered with 403, by method."""
        counted = [
            (dict(labels), value)
            for (name, labels), value in (await self.metrics()).items()
            if name == "rest_client_requests_total"
        ]
        assert any(labels["code"].startswith("2") for labels, _ in counted), "the requests are counted"
        return [labels["method"] for labels, value in counted if labels["code"] == "403" and value]

    async def cluster_reconciles(self) -> float:
        return sum(
            value
            for (name, labels), value in (await self.metrics()).items()
            if name == "controller_runtime_reconcile_total"
            and "matrixonecluster" in dict(labels).get("controller", "").lower()
            and dict(labels).get("result") == "success"
        )


@contextlib.asynccontextmanager
async def released(config: helm.Config, namespace: str) -> AsyncIterator[Obj]:
    """The chart installed (with its CRDs, absent before) and uninstalled at the end."""
    release = await asyncio.to_thread(
        config.install, str(CHART_DIR), RELEASE, VALUES, namespace=namespace, create_namespace=True
    )
    try:
        yield release
    finally:
        await asyncio.to_thread(config.uninstall, RELEASE, ignore_not_found=True)


@pytest.mark.timeout(300)  # a failure says why within the waits below
async def test_the_chart_installs_runs_the_operator_as_its_account_upgrades_and_uninstalls(
    tmp_path: Path,
) -> None:
    admin_path = os.environ["MO_TEST_KUBECONFIG"]  # the session's kube-apiserver (tests/conftest.py)
    namespace = f"mo-chart-{secrets.token_hex(3)}"
    await remove_crds_and_simulated_nodes(admin_path)  # so that the chart's crds/ install them
    admin = lightkube_client(KubeConfig.from_file(admin_path))
    config = helm.Config(kubeconfig_path=admin_path, namespace=namespace)
    try:
        async with released(config, namespace) as release:
            assert (release["revision"], release["status"]) == (1, "deployed"), release
            crds = {c.metadata.name async for c in admin.list(CustomResourceDefinition)}
            assert _crd_names() <= crds, "the chart's crds/ are installed"

            async with open_world(tmp_path, admin_path) as world:
                kubeconfig = await _token_kubeconfig(
                    admin, admin_path, namespace, RELEASE, tmp_path / "operator.kubeconfig"
                )
                operator = ChartOperator(world, admin, namespace, kubeconfig, tmp_path)
                run = await operator.start(tmp_path / "cfg-1")
                try:
                    await world.apply(world.cluster_manifest("mo"))
                    try:
                        await world.wait_ready(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
                    except AssertionError as e:
                        raise AssertionError(f"{e}; refused: {await operator.refused()}") from None
                    assert await operator.refused() == [], run.output
                    pods = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await world.pods()}
                    assert pods
                    assert await run.signal_and_wait() == 0, run.output
                finally:
                    await run.kill()
                assert run.said(r"\b403\b|[Ff]orbidden") == [], run.output

                # The upgrade: a changed value, the ConfigMap the operator reads at start-up.
                upgrade = await asyncio.to_thread(
                    config.upgrade, str(CHART_DIR), RELEASE, UPGRADED, namespace=namespace
                )
                assert (upgrade["revision"], upgrade["status"]) == (2, "deployed"), upgrade
                cm = await admin.get(ConfigMap, f"{RELEASE}-cm", namespace=namespace)
                changed = {**{c: list(a) for c, a in DEFAULT_ARGS.items()}, **UPGRADED["defaultArgs"]}
                assert yaml.safe_load(cm.data["defaultArgs"]) == changed, (
                    "Helm merges the map into the defaults"
                )

                run = await operator.start(tmp_path / "cfg-2")
                try:

                    async def reconciled() -> bool:
                        with contextlib.suppress(aiohttp.ClientError):
                            return await operator.cluster_reconciles() > 0
                        return False

                    await eventually(reconciled, timeout=60, message="the restarted operator reconciles mo")
                    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
                    after = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await world.pods()}
                    assert after == pods, "an upgrade of the chart alone rolls no MatrixOne pod"
                    assert await operator.refused() == [], run.output
                    await world.remove_our_objects(wait=60.0)  # finalized by the chart's operator
                    assert await run.signal_and_wait() == 0, run.output
                finally:
                    await run.kill()
                assert run.said(r"\b403\b|[Ff]orbidden") == [], run.output

            await asyncio.to_thread(config.uninstall, RELEASE)
            assert await asyncio.to_thread(config.list) == [], "the release is gone"
            for res, name, ns in (
                (ServiceAccount, RELEASE, namespace),
                (ConfigMap, f"{RELEASE}-cm", namespace),
                (Deployment, RELEASE, namespace),
                (ClusterRole, f"{RELEASE}-manager", None),
            ):
                with pytest.raises(Exception, match="not found"):
                    await admin.get(res, name, namespace=ns)
            crds = {c.metadata.name async for c in admin.list(CustomResourceDefinition)}
            assert _crd_names() <= crds, "Helm keeps the CRDs of crds/ on uninstall"
    finally:
        with contextlib.suppress(Exception):
            await admin.delete(Namespace, namespace)
        config.close()
        await admin.close()
