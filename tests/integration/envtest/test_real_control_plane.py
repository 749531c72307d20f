"""The real control plane that ``KUBEBUILDER_ASSETS`` starts (envtest's
convention): it answers as a cluster, and it leaves nothing behind, neither
when stopped nor when the process that started it dies without stopping it.

Each test starts a control plane of its own (about 10 s), so only two do."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from mo_devkit.cli.demo import kubectl_binary
from mo_devkit.localcluster.envtest import RealControlPlane, assets_dir

ASSETS = os.environ.get("KUBEBUILDER_ASSETS")
pytestmark = pytest.mark.skipif(not ASSETS, reason="needs KUBEBUILDER_ASSETS (real control-plane binaries)")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purpose: it runs nothing
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" not in status.read_text()


def _wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"not true after {timeout}s: {what}")


def test_a_started_control_plane_serves_kubectl_and_stops_without_a_trace() -> None:
    assets = assets_dir()
    assert assets is not None
    plane = RealControlPlane(assets)
    kubeconfig = plane.start()
    workdir = plane.workdir
    assert workdir is not None
    pids = [p.popen.pid for p in plane._procs]
    try:
        names = [p.name for p in plane._procs]
        assert names[:2] == ["etcd", "kube-apiserver"], names
        out = subprocess.run(
            [kubectl_binary(), "--kubeconfig", str(kubeconfig), "get", "--raw", "/version"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        assert yaml.safe_load(out)["gitVersion"].startswith("v1."), out
    finally:
        plane.stop()
    assert not workdir.exists(), "its data is removed"
    assert not [pid for pid in pids if _alive(pid)], "every process it started is gone"
    plane.stop()  # a second stop is harmless


def test_its_processes_die_with_a_test_process_killed_without_cleanup(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        from pathlib import Path
        from mo_devkit.localcluster.envtest import RealControlPlane
        plane = RealControlPlane(Path({str(assets_dir())!r}), controllers=False)
        plane.start()
        print(" ".join(str(p.popen.pid) for p in plane._procs), flush=True)
        sys.stdin.read()  # until killed
        """
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        pids = [int(p) for p in child.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    _wait_until(lambda: not [p for p in pids if _alive(p)], 15, "etcd and kube-apiserver die with it")
