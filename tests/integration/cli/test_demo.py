"""The README's first command: ``mo-operator demo`` brings the example cluster
to Ready on the embedded control plane and says how to reach it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import yaml


async def test_the_demo_brings_the_example_cluster_to_ready(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "demo.kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mo_operator.cli.main",
        "demo",
        "--exit-when-ready",
        "--timeout",
        "90",
        "--kubeconfig",
        str(kubeconfig),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=tmp_path,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode() + err.decode()
    assert proc.returncode == 0, text
    assert "MatrixOneCluster mo is Ready" in text
    assert f"export KUBECONFIG={kubeconfig}" in text
    config = yaml.safe_load(kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")
