"""A simulated cluster run by a process of its own, for benchmarks: the operator
under test then shares neither an event loop nor a CPU's worth of Python with
the API server, the workload simulator and the simulated MatrixOne it talks
to, so what is timed is the operator.

On the embedded control plane that process is ``mo-operator control-plane``
(``--fast``: quick kubelets and room for thousands of pods, or
``--no-simulator``: an API server alone). On a real API server it is the
kubelet-mode simulator with the simulated MatrixOne (``python -m
mo_operator.testing.attach``), which advertises its admin interface in a
private copy of the kubeconfig; with no simulator, the real server alone. An
operator in the benchmark's process reaches MatrixOne through the advertised
admin interface, as ``mo-operator run`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, cast

from mo_operator.matrixone.admin import AdminError, MOAdmin, MOAdminProvider
from mo_operator.matrixone.simulated.remote import RemoteAdminProvider, discover


class Unreachable:
    """The admin interface where no MatrixOne runs (an API server alone): every
    call fails as an unreachable HAKeeper would, so an operator there still
    builds, syncs and reconciles."""

    def admin(self, discovery_address: str) -> MOAdmin:
        return cast(MOAdmin, self)

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def fail(*_a: Any, **_kw: Any) -> Any:
            raise AdminError(f"{name}: no MatrixOne on this cluster")

        return fail


class ClusterProcess:
    """A cluster whose simulation runs outside this process (see the module doc)."""

    def __init__(
        self, kubeconfig: Path, pid: int | None, proc: asyncio.subprocess.Process | None = None
    ) -> None:
        self.kubeconfig = kubeconfig
        self.pid = pid
        """The embedded control plane's process (its CPU time is a figure); None on a real server."""
        self._proc = proc
        self.admin_server: RemoteAdminProvider | None = discover(kubeconfig)
        """The simulated MatrixOne's admin interface (its URL and token), if one runs."""

    @property
    def provider(self) -> MOAdminProvider:
        """The admin interface an operator in this process uses."""
        return self.admin_server if self.admin_server is not None else Unreachable()

    @classmethod
    def joined(cls, kubeconfig: Path) -> ClusterProcess:
        """The cluster another process started, for a child it spawned (a fresh
        operator process measured there); stopping it stops nothing."""
        return cls(kubeconfig, None)

    async def stop(self) -> None:
        if self.admin_server is not None:
            await self.admin_server.close()
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()


async def start_cluster_process(
    workdir: Path, real_kubeconfig: str | None = None, *, simulator: bool = True
) -> ClusterProcess:
    """The cluster, its process started and its kubeconfig written in ``workdir``
    (see the module doc); ``simulator=False``: an API server alone, nothing runs pods."""
    if real_kubeconfig and not simulator:
        return ClusterProcess(Path(real_kubeconfig), None)
    kubeconfig = workdir / "kubeconfig"
    if real_kubeconfig:
        args = ["-m", "mo_operator.testing.attach", real_kubeconfig, str(kubeconfig)]
    else:
        args = ["-m", "mo_operator.cli", "--log-level", "ERROR", "control-plane"]
        args += ["--kubeconfig", str(kubeconfig), "--fast" if simulator else "--no-simulator"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await _wait_for_kubeconfig(kubeconfig, proc, need_admin=simulator)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise
    return ClusterProcess(kubeconfig, None if real_kubeconfig else proc.pid, proc)


async def _wait_for_kubeconfig(path: Path, proc: asyncio.subprocess.Process, need_admin: bool) -> None:
    """Until the process has written its kubeconfig (advertising the admin interface
    when it runs MatrixOne): it writes it once its servers answer."""
    for _ in range(600):
        if proc.returncode is not None:
            raise RuntimeError(f"the cluster process exited with {proc.returncode}")
        if path.exists() and path.stat().st_size > 0:
            try:
                if not need_admin or discover(path) is not None:
                    return
            except Exception:  # being written: read again
                pass
        await asyncio.sleep(0.05)
    raise RuntimeError("the cluster process did not start")
