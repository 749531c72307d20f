"""SIGTERM at any moment after ``mo-operator run`` starts ends it within a few
seconds with exit code 0 (docs/install.md), also while it is still loading:
Python's default handler would kill it with 143 until the command installed its
own, about a second and a half after the start.

"The start" is the entry point's first instruction, which installs the handlers:
the moments are counted from when the kernel shows SIGTERM caught (``SigCgt`` in
``/proc/PID/status``), not from the spawn, which on a loaded machine comes before
the interpreter has run a line of ours. That this is the first instruction is
checked in CPU time, which load does not stretch: the handlers are in place before
the process has spent what importing the operator costs."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing import free_port

from .process import STOP_SECONDS, Command

HANDLERS_BEFORE_CPU_SECONDS = 0.5
"""CPU the process may have used when its handlers are in place: Python's start and
the entry module, not the operator's imports (over a second of CPU)."""


def _catches(pid: int, sig: signal.Signals) -> bool:
    """Whether the process has a handler of its own for ``sig``."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) >> (sig - 1) & 1)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


async def _first_instruction(run: Command) -> None:
    """Wait until the handlers are installed; fail if that came only after the imports."""
    async with asyncio.timeout(STOP_SECONDS * 3):
        while not _catches(run.proc.pid, signal.SIGTERM):
            assert run.proc.returncode is None, run.output
            await asyncio.sleep(0.005)
    spent = _cpu_seconds(run.proc.pid)
    assert spent < HANDLERS_BEFORE_CPU_SECONDS, f"SIGTERM caught only after {spent:.2f}s of CPU: {run.output}"


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
        await _first_instruction(run)
        await asyncio.sleep(after)
        assert run.proc.returncode is None, run.output
        assert await run.signal_and_wait(sig, timeout=STOP_SECONDS) == 0, run.output
        assert run.said("Traceback") == [], run.output
    finally:
        await run.kill()
