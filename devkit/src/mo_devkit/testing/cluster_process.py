"""A simulated cluster run by a process of its own, for benchmarks: the operator
under test then shares neither an event loop nor a CPU's worth of Python with
the API server, the workload simulator and the simulated MatrixOne it talks
to, so what is timed is the operator.

On the embedded control plane that process is ``mo-operator control-plane``
(``--fast``: quick kubelets and room for thousands of pods, or
``--no-simulator``: an API server alone). On a real API server it is the
kubelet-mode simulator with the simulated MatrixOne (``python -m
mo_devkit.testing.attach``); with no simulator, the real server alone.
Either writes its simulated MatrixOne's address book beside the kubeconfig
(``address_book_beside``): an operator in the benchmark's process reaches
MatrixOne over morpc, as on a real cluster, with the dialer that reads it. Where
no MatrixOne runs, no name resolves, as a HAKeeper that does not exist.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from mo_devkit.simulated.cluster import address_book_beside
from mo_devkit.simulated.rpc.addressbook import BookDialer, file_dialer


class ClusterProcess:
    """A cluster whose simulation runs outside this process (see the module doc)."""

    def __init__(
        self, kubeconfig: Path, pid: int | None, proc: asyncio.subprocess.Process | None = None
    ) -> None:
        self.kubeconfig = kubeconfig
        self.pid = pid
        """The embedded control plane's process (its CPU time is a figure); None on a real server."""
        self._proc = proc
        self.address_book: Path | None = address_book_beside(kubeconfig)
        """Where the simulated MatrixOne keeps its address book (absent: none runs)."""
        self.dialer: BookDialer = file_dialer(self.address_book)
        """The dialer of an operator in this process."""

    @classmethod
    def joined(cls, kubeconfig: Path) -> ClusterProcess:
        """The cluster another process started, for a child it spawned (a fresh
        operator process measured there); stopping it stops nothing."""
        return cls(kubeconfig, None)

    async def stop(self) -> None:
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
        args = ["-m", "mo_devkit.testing.attach", real_kubeconfig, str(kubeconfig)]
    else:
        args = ["-m", "mo_operator.cli", "--log-level", "ERROR", "control-plane"]
        args += ["--kubeconfig", str(kubeconfig), "--fast" if simulator else "--no-simulator"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    try:
        await _wait_for(kubeconfig, proc, address_book=simulator)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        raise
    return ClusterProcess(kubeconfig, None if real_kubeconfig else proc.pid, proc)


async def _wait_for(kubeconfig: Path, proc: asyncio.subprocess.Process, *, address_book: bool) -> None:
    """Until the process has written its kubeconfig (and, when it runs MatrixOne, its
    address book): it writes them once its servers answer."""
    wanted = [kubeconfig, *([address_book_beside(kubeconfig)] if address_book else [])]
    for _ in range(600):
        if proc.returncode is not None:
            raise RuntimeError(f"the cluster process exited with {proc.returncode}")
        if all(path.exists() and path.stat().st_size > 0 for path in wanted):
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the cluster process did not start")
