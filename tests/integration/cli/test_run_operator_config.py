"""``mo-operator run --operator-config-dir`` reads the Go operator's ConfigMap
layout: its ``defaultArgs`` reach the defaulting webhook (a CNSet created without
``serviceArgs`` gets the CN's), its feature gates are logged with what they change
here, and a broken value stops the start with one line naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from lightkube import KubeConfig

from conftest import Kubectl
from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing import free_port
from mo_operator.api.install import install_crds
from mo_operator.kube.client.client import ApiClient

from .process import Command, eventually, run_with_webhook_url

CNSET = Path(__file__).resolve().parents[2] / "unit" / "api" / "manifests" / "cnset.yaml"


async def _start(kubeconfig: Path, config_dir: Path) -> tuple[Command, int]:
    port = free_port()
    run = await Command.start(
        *run_with_webhook_url(kubeconfig, port), "--operator-config-dir", str(config_dir)
    )
    return run, port


async def test_default_args_reach_a_cnset_created_without_service_args(
    control_plane: ControlPlane, kubectl: Kubectl, tmp_path: Path
) -> None:
    assert control_plane.kubeconfig_path is not None
    api = ApiClient(KubeConfig.from_dict(control_plane.server.kubeconfig()), field_manager="test", qps=None)
    try:
        await install_crds(api)
    finally:
        await api.close()
    config_dir = tmp_path / "mo-operator-cfg"
    config_dir.mkdir()
    (config_dir / "defaultArgs").write_text("cn:\n- -debug-http=:6060\n")
    (config_dir / "featureGates").write_text("cnPool: true\n")
    run, _ = await _start(control_plane.kubeconfig_path, config_dir)
    try:
        await run.wait_for(r"feature gate cnPool=true: .* so it changes nothing")
        cnset = yaml.safe_load(CNSET.read_text())
        cnset["spec"].pop("serviceArgs", None)
        manifest = json.dumps(cnset)

        async def defaulted() -> bool:
            out = await kubectl.run(
                "create", "--dry-run=server", "-o", "json", "-f", "-", input=manifest, check=False
            )
            return out.returncode == 0 and "serviceArgs" in json.loads(out.stdout)["spec"]

        await eventually(defaulted, 60, "the defaulting webhook serves")
        out = await kubectl.run("create", "-o", "json", "-f", "-", input=manifest)
        assert json.loads(out.stdout)["spec"]["serviceArgs"] == ["-debug-http=:6060"]
        assert await run.signal_and_wait() == 0, run.output
    finally:
        await run.kill()


async def test_a_broken_value_stops_the_start_naming_the_key(
    control_plane: ControlPlane, tmp_path: Path
) -> None:
    assert control_plane.kubeconfig_path is not None
    (tmp_path / "defaultArgs").write_text("tn: [-x]\n")
    run, _ = await _start(control_plane.kubeconfig_path, tmp_path)
    try:
        assert await run.exit_code(timeout=60) == 1, run.output
    finally:
        await run.kill()
    assert run.said("Traceback") == [], run.output
    errors = run.said(" ERROR ")
    assert len(errors) == 1, run.output
    assert "--operator-config-dir: defaultArgs.tn: unknown component" in errors[0]
