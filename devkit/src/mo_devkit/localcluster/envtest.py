"""A real Kubernetes control plane started from binaries on disk, as envtest does.

``KUBEBUILDER_ASSETS`` names a folder holding ``etcd``, ``kube-apiserver`` and,
optionally, ``kube-controller-manager`` and ``kube-scheduler``. The tests and
the benchmarks start one ``RealControlPlane`` from it, run against it through
the kubeconfig it writes, and stop it: every process is in a process group of
its own and is killed with the parent (``PR_SET_PDEATHSIG``), and the data
directory is removed, so an interrupted run leaves nothing behind.

The real server is the judge of what the embedded one does; this module only
starts it, with nothing MatrixOne-specific.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

log = logging.getLogger(__name__)

ASSETS_ENV = "KUBEBUILDER_ASSETS"
"""The envtest variable naming the folder of control-plane binaries."""

SERVICE_CIDR = "10.96.0.0/12"
"""Large enough for thousands of Services (a /24 runs out with a few dozen clusters)."""

_PR_SET_PDEATHSIG = 1


def assets_dir() -> Path | None:
    """The binaries folder ``KUBEBUILDER_ASSETS`` names, if it holds an API server."""
    value = os.environ.get(ASSETS_ENV)
    if not value:
        return None
    path = Path(value)
    if not (path / "kube-apiserver").exists() or not (path / "etcd").exists():
        raise RuntimeError(f"{ASSETS_ENV}={value} holds no etcd and kube-apiserver binaries")
    return path


def start_from_environment(target_env: str) -> RealControlPlane | None:
    """envtest's convention: when ``KUBEBUILDER_ASSETS`` names binaries and
    ``target_env`` names no cluster yet, start one and name its kubeconfig in
    ``target_env``, which child processes inherit (so they start none). The
    caller stops it."""
    assets = assets_dir()
    if assets is None or os.environ.get(target_env):
        return None
    plane = RealControlPlane(assets)
    os.environ[target_env] = str(plane.start())
    return plane


def free_port() -> int:
    """A port free on the loopback now (bound, then released), for a process to bind
    a moment later."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """Run in the child before exec: the kernel kills it when the test process dies."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


@dataclass
class _Process:
    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path


@dataclass
class RealControlPlane:
    """etcd, kube-apiserver and (when present) kube-controller-manager and
    kube-scheduler on free loopback ports, with an admin token.

    ``start()`` returns once ``/readyz`` answers ok and the default
    ServiceAccount machinery runs; ``stop()`` kills everything it started and
    removes its data, and may be called more than once.
    """

    assets: Path
    controllers: bool = True
    workdir: Path | None = None
    extra_apiserver_args: list[str] = field(default_factory=list)
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    _procs: list[_Process] = field(default_factory=list)
    _own_workdir: bool = False
    url: str = ""
    kubeconfig_path: Path | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self, timeout: float = 90.0) -> Path:
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="envtest-"))
            self._own_workdir = True
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            self._start(timeout)
        except BaseException:
            self.stop()
            raise
        assert self.kubeconfig_path is not None
        return self.kubeconfig_path

    def _start(self, timeout: float) -> None:
        assert self.workdir is not None
        deadline = time.monotonic() + timeout
        etcd_port, peer_port = free_port(), free_port()
        etcd_url = f"http://127.0.0.1:{etcd_port}"
        self._spawn(
            "etcd",
            [
                str(self.assets / "etcd"),
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={etcd_url}",
                f"--advertise-client-urls={etcd_url}",
                f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
                f"--initial-cluster=default=http://127.0.0.1:{peer_port}",
                "--unsafe-no-fsync",
                "--quota-backend-bytes=8589934592",
            ],
        )
        self._wait(lambda: self._http_ok(f"{etcd_url}/health"), deadline, "etcd answers /health")

        certs = self.workdir / "certs"
        certs.mkdir(exist_ok=True)
        sa_key = certs / "sa.key"
        sa_pub = certs / "sa.pub"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        sa_key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.TraditionalOpenSSL,
                serialization.NoEncryption(),
            )
        )
        sa_pub.write_bytes(
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        tokens = certs / "tokens.csv"
        tokens.write_text(f'{self.token},admin,admin-uid,"system:masters"\n')
        port = free_port()
        self.url = f"https://127.0.0.1:{port}"
        self._spawn(
            "kube-apiserver",
            [
                str(self.assets / "kube-apiserver"),
                f"--etcd-servers={etcd_url}",
                f"--secure-port={port}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--cert-dir={certs}",
                f"--token-auth-file={tokens}",
                "--authorization-mode=RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                f"--service-account-key-file={sa_pub}",
                f"--service-account-signing-key-file={sa_key}",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allow-privileged=true",
                *self.extra_apiserver_args,
            ],
        )
        ca = certs / "apiserver.crt"
        self._wait(ca.exists, deadline, "kube-apiserver writes its serving certificate")
        self._wait(lambda: self._https_ok("/readyz", ca), deadline, "kube-apiserver answers /readyz")
        self.kubeconfig_path = self._write_kubeconfig(ca)
        if self.controllers:
            self._start_controllers(ca, sa_key)

    def _start_controllers(self, ca: Path, sa_key: Path) -> None:
        assert self.kubeconfig_path is not None
        if (self.assets / "kube-controller-manager").exists():
            self._spawn(
                "kube-controller-manager",
                [
                    str(self.assets / "kube-controller-manager"),
                    f"--kubeconfig={self.kubeconfig_path}",
                    "--leader-elect=false",
                    f"--service-account-private-key-file={sa_key}",
                    f"--root-ca-file={ca}",
                    "--use-service-account-credentials=false",
                    f"--service-cluster-ip-range={SERVICE_CIDR}",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={free_port()}",
                    "--concurrent-statefulset-syncs=10",
                    "--concurrent-gc-syncs=20",
                    "--kube-api-qps=200",
                    "--kube-api-burst=400",
                ],
            )
        if (self.assets / "kube-scheduler").exists():
            self._spawn(
                "kube-scheduler",
                [
                    str(self.assets / "kube-scheduler"),
                    f"--kubeconfig={self.kubeconfig_path}",
                    "--leader-elect=false",
                    "--bind-address=127.0.0.1",
                    f"--secure-port={free_port()}",
                    "--kube-api-qps=200",
                    "--kube-api-burst=400",
                ],
            )

    def stop(self) -> None:
        for proc in reversed(self._procs):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGTERM)
        for proc in reversed(self._procs):
            try:
                proc.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.popen.pid, signal.SIGKILL)
                proc.popen.wait(timeout=10)
        self._procs.clear()
        if self._own_workdir and self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = None

    def __enter__(self) -> RealControlPlane:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def logs(self, name: str, tail: int = 40) -> str:
        """The last lines a component printed, for a failure message."""
        for proc in self._procs:
            if proc.name == name:
                lines = proc.log_path.read_text(errors="replace").splitlines()
                return "\n".join(lines[-tail:])
        return ""

    # ------------------------------------------------------------ helpers
    def _spawn(self, name: str, argv: list[str]) -> None:
        assert self.workdir is not None
        log_path = self.workdir / f"{name}.log"
        out = log_path.open("ab")
        popen = subprocess.Popen(
            argv,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
        out.close()
        self._procs.append(_Process(name, popen, log_path))
        log.info("started %s (pid %d), logging to %s", name, popen.pid, log_path)

    def _wait(self, check: Any, deadline: float, what: str) -> None:
        while time.monotonic() < deadline:
            for proc in self._procs:
                if proc.popen.poll() is not None:
                    raise RuntimeError(
                        f"{proc.name} exited ({proc.popen.returncode}) before {what}:\n{self.logs(proc.name)}"
                    )
            if check():
                return
            time.sleep(0.1)
        raise TimeoutError(f"timed out waiting until {what}")

    @staticmethod
    def _http_ok(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=1) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def _https_ok(self, path: str, ca: Path) -> bool:
        try:
            context = ssl.create_default_context(cafile=str(ca))
        except ssl.SSLError:
            return False  # the API server is still writing its certificate
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(request, timeout=2, context=context) as resp:
                return bool(resp.status == 200 and resp.read().strip() == b"ok")
        except (urllib.error.URLError, OSError, ssl.SSLError):
            return False

    def kubeconfig(self, ca: Path) -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "envtest", "cluster": {"server": self.url, "certificate-authority": str(ca)}}
            ],
            "users": [{"name": "envtest-admin", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": "envtest",
                    "context": {"cluster": "envtest", "user": "envtest-admin", "namespace": "default"},
                }
            ],
            "current-context": "envtest",
        }

    def _write_kubeconfig(self, ca: Path) -> Path:
        assert self.workdir is not None
        path = self.workdir / "kubeconfig"
        path.write_text(yaml.safe_dump(self.kubeconfig(ca), sort_keys=False))
        path.chmod(0o600)
        return path


def main() -> None:
    """``python -m mo_devkit.localcluster.envtest``: start one and wait, for a person."""
    assets = assets_dir()
    if assets is None:
        sys.exit(f"set {ASSETS_ENV} to a folder with etcd and kube-apiserver")
    plane = RealControlPlane(assets)
    path = plane.start()
    print(f"kubeconfig written to {path}", flush=True)
    stop = False

    def on_signal(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        while not stop:
            time.sleep(0.2)
    finally:
        plane.stop()


if __name__ == "__main__":
    main()
