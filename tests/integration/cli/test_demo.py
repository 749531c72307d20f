"""The README's first command: ``mo-operator demo`` brings the example cluster
to Ready on the embedded control plane and says how to reach it, and stops
on SIGTERM as on Ctrl-C."""

from __future__ import annotations

import asyncio
import re
import signal
import sys
from pathlib import Path

import pytest
import yaml

from .process import Command


async def test_the_demo_brings_the_example_cluster_to_ready_showing_the_operators_logs_when_verbose(
    tmp_path: Path,
) -> None:
    kubeconfig = tmp_path / "demo.kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mo_operator.cli",
        "demo",
        "--verbose",
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
    assert re.search(r"^\S+Z INFO mo_operator\.", err.decode(), re.M), "the operator's own log lines"
    config = yaml.safe_load(kubeconfig.read_text())
    assert config["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")


def children(pid: int) -> set[int]:
    """Processes ``pid`` started (all its threads'), as the kernel lists them."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(c) for c in (task / "children").read_text().split())
    return found


@pytest.mark.parametrize("stage", ["Control plane ready", "Press Ctrl-C to stop"], ids=["starting", "ready"])
async def test_sigterm_stops_the_demo_and_everything_it_started(tmp_path: Path, stage: str) -> None:
    """Ctrl-C always stopped it; SIGTERM (what `kill`, a terminal closing, or a
    container runtime sends) killed it without cleanup, or, as PID 1 of a
    container, did nothing at all."""
    demo = await Command.start("demo", "--kubeconfig", str(tmp_path / "demo.kubeconfig"), cwd=tmp_path)
    try:
        await demo.wait_for(stage, timeout=90)  # within the test's timeout, to show what it said
        spawned = children(demo.proc.pid)
        assert await demo.signal_and_wait(signal.SIGTERM) == 0, demo.output
        assert demo.said("Traceback") == [], demo.output
        assert demo.said(r" INFO mo_operator\.") == [], "without --verbose the progress table says it"
        assert [pid for pid in spawned if Path(f"/proc/{pid}").exists()] == []
    finally:
        await demo.kill()
