"""What an installer gets wrong ends ``mo-operator`` with one line and a non-zero
exit code, in the log format asked for: a missing or invalid kubeconfig, an
unknown log level, a port another process holds."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane

from .process import Command, run_with_webhook_url


async def _ends_with_one_line(*args: str) -> tuple[int, str]:
    command = await Command.start(*args)
    try:
        code = await command.exit_code(30)
    finally:
        await command.kill()
    assert len(command.lines) == 1, command.output
    return code, command.lines[0]


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        yield held.getsockname()[1]


async def test_a_missing_kubeconfig_is_one_line(tmp_path: Path) -> None:
    code, line = await _ends_with_one_line("run", "--kubeconfig", str(tmp_path / "nowhere"))
    assert code == 1
    assert "kubeconfig" in line and "nowhere" in line and "Traceback" not in line


async def test_an_invalid_kubeconfig_is_one_json_record(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: [\n")
    code, line = await _ends_with_one_line("--log-json", "run", "--kubeconfig", str(path))
    record = json.loads(line)
    assert code == 1 and record["level"] == "error"
    assert "is not YAML" in record["msg"] and str(path) in record["msg"]
    assert record["ts"].endswith("Z") and len(record["ts"]) == len("2026-01-01T00:00:00.000Z")


async def test_an_unknown_log_level_is_one_line_naming_the_levels() -> None:
    code, line = await _ends_with_one_line("--log-level", "verbose", "crds")
    assert code == 1
    assert "'verbose'" in line and "DEBUG, INFO, WARNING, ERROR, CRITICAL" in line


async def test_a_port_in_use_is_one_line_naming_the_flag(
    control_plane: ControlPlane, taken_port: int
) -> None:
    assert control_plane.kubeconfig_path is not None
    args = run_with_webhook_url(control_plane.kubeconfig_path, taken_port)
    code, line = await _ends_with_one_line(*args)
    assert code == 1
    assert "already in use" in line and "--webhook-port" in line and str(taken_port) in line
