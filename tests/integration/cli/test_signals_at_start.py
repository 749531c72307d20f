"""SIGTERM at any moment after ``mo-operator run`` starts ends it within a few
seconds with exit code 0 (docs/install.md), also while it is still loading:
Python's default handler would kill it with 143 until the command installed its
own, about a second and a half after the start."""

from __future__ import annotations

import asyncio
import signal

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing import free_port

from .process import STOP_SECONDS, Command


@pytest.mark.parametrize("after", [0.1, 0.5, 1.0], ids=lambda s: f"{s}s")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
async def test_a_signal_soon_after_the_start_is_a_clean_exit(
    control_plane: ControlPlane, after: float, sig: signal.Signals
) -> None:
    assert control_plane.kubeconfig_path is not None
    run = await Command.start(
        "run",
        "--kubeconfig",
        str(control_plane.kubeconfig_path),
        "--no-leader-elect",
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(free_port()),
        "--health-probe-bind-address",
        "0",
        "--metrics-bind-address",
        "0",
    )
    try:
        await asyncio.sleep(after)
        assert run.proc.returncode is None, run.output
        assert await run.signal_and_wait(sig, timeout=STOP_SECONDS) == 0, run.output
        assert run.said("Traceback") == [], run.output
    finally:
        await run.kill()
