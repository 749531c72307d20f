"""The cluster the operator benchmarks run against, and its namespaces.

By default ``mo-operator control-plane --fast`` in its own process (API
server, workload simulator with fast timings, simulated MatrixOne, whose
admin URL the kubeconfig advertises), so the operator under test shares
neither an event loop nor a CPU's worth of Python with it. With
``MO_TEST_KUBECONFIG`` (or ``KUBEBUILDER_ASSETS``, which starts a real
control plane for the run) the API server is that cluster's, and this module
runs the simulator in kubelet mode plus the simulated MatrixOne in a child
process (``python bench/support_target.py attach ...``) that advertises the
admin URL in a private copy of the kubeconfig.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from bench_support import note_server, start_real_control_plane
from mo_operator.api.install import install_crds
from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.env import OUR_KINDS
from mo_operator.kube.client import ApiClient
from mo_operator.kube.errors import ApiError
from mo_operator.kube.resource import Resource
from mo_operator.matrixone.simulated.cluster import FAST_SIMULATOR
from mo_operator.matrixone.simulated.remote import discover

start_real_control_plane()
REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""A real API server to run against instead of the embedded control plane
(started here from ``KUBEBUILDER_ASSETS``, or an existing cluster)."""

NAMESPACES = Resource("", "v1", "Namespace", "namespaces", False)
ATTACHED_SIMULATOR = FAST_SIMULATOR
"""The kubelet-mode simulator's timing on a real API server (as ``control-plane --fast``)."""


def log(message: str) -> None:
    """Progress on stderr (stdout carries the figures)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> float:
    """The 1-minute load average, recorded with each figure: the machine may be shared."""
    return round(os.getloadavg()[0], 2)


@dataclass(frozen=True)
class Target:
    kubeconfig: Path
    """Kubeconfig for every client (advertises the simulated MatrixOne when there is one)."""
    pid: int | None
    """The embedded control plane's process (None on a real API server)."""
    real: bool


async def _wait_for_kubeconfig(path: Path, proc: asyncio.subprocess.Process, need_admin: bool) -> None:
    for _ in range(600):
        if proc.returncode is not None:
            raise RuntimeError(f"the control plane exited with {proc.returncode}")
        if path.exists() and path.stat().st_size > 0:
            try:
                if not need_admin or discover(path) is not None:
                    return
            except Exception:  # being written: read again
                pass
        await asyncio.sleep(0.05)
    raise RuntimeError("the control plane did not start")


@contextlib.asynccontextmanager
async def target(*, simulator: bool = True) -> AsyncIterator[Target]:
    """The cluster the operator runs against (see the module doc);
    ``simulator=False``: an API server alone (nothing runs pods)."""
    note_server(os.environ.get("MO_BENCH_SERVER") or REAL_KUBECONFIG or "the embedded control plane")
    if REAL_KUBECONFIG and not simulator:
        yield Target(Path(REAL_KUBECONFIG), None, True)
        return
    with tempfile.TemporaryDirectory() as d:
        kubeconfig = Path(d) / "kubeconfig"
        if REAL_KUBECONFIG:
            args = [str(Path(__file__).resolve()), "attach", REAL_KUBECONFIG, str(kubeconfig)]
        else:
            args = ["-m", "mo_operator.cli.main", "--log-level", "ERROR", "control-plane"]
            args += ["--kubeconfig", str(kubeconfig), "--fast" if simulator else "--no-simulator"]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            await _wait_for_kubeconfig(kubeconfig, proc, need_admin=simulator)
            yield Target(kubeconfig, None if REAL_KUBECONFIG else proc.pid, REAL_KUBECONFIG is not None)
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


def client_of(t: Target, field_manager: str = "bench", **kw: Any) -> ApiClient:
    """A client without client-side rate limit."""
    return ApiClient(KubeConfig.from_file(str(t.kubeconfig)), field_manager=field_manager, qps=None, **kw)


async def prepare(client: ApiClient, t: Target, count: int) -> list[str]:
    """CRDs installed and ``count`` new namespaces (uniquely named on a real API server)."""
    await install_crds(client)
    suffix = f"-{uuid.uuid4().hex[:6]}" if t.real else ""
    names = [f"bench{i:04d}{suffix}" for i in range(count)]
    await bounded(16, [lambda ns=ns: client.create(NAMESPACES, {"metadata": {"name": ns}}) for ns in names])
    return names


async def cleanup(client: ApiClient, t: Target, namespaces: Iterable[str], timeout: float = 120.0) -> None:
    """On a real API server, remove what we made and wait until it is gone (an
    embedded one just exits). No operator is left to remove its finalizers, from
    our objects or from CN pods (their drain), so they go first; a pod still
    Terminating (its kubelet may be gone with the simulator) is deleted at once,
    as ``kubectl delete --force`` would."""
    if not t.real:
        return
    namespaces = list(namespaces)
    for ns in namespaces:
        for res in OUR_KINDS:
            if not res.namespaced:
                continue
            for obj in (await client.list(res, ns)).items:
                if obj["metadata"].get("finalizers"):
                    with contextlib.suppress(ApiError):
                        await client.patch(
                            res, obj["metadata"]["name"], {"metadata": {"finalizers": None}}, ns
                        )
        await client.delete(NAMESPACES, ns, missing_ok=True)
    async with asyncio.timeout(timeout):
        while left := [ns for ns in namespaces if await client.get_or_none(NAMESPACES, ns) is not None]:
            for ns in left:
                for pod in (await client.list(r.PODS, ns)).items:
                    await _force_out(client, pod, ns)
            await asyncio.sleep(0.5)


async def _force_out(client: ApiClient, pod: Mapping[str, Any], ns: str) -> None:
    meta = pod["metadata"]
    with contextlib.suppress(ApiError):  # gone meanwhile
        ours = [f for f in meta.get("finalizers") or () if f.startswith("matrixorigin.io/")]
        if ours:
            kept = [f for f in meta["finalizers"] if f not in ours]
            await client.patch(r.PODS, meta["name"], {"metadata": {"finalizers": kept or None}}, ns)
        if meta.get("deletionTimestamp"):
            await client.delete(r.PODS, meta["name"], ns, grace_period_seconds=0)


async def bounded(concurrency: int, jobs: Iterable[Callable[[], Awaitable[Any]]]) -> None:
    """Run ``jobs`` (coroutine functions) with at most ``concurrency`` at once."""
    sem = asyncio.Semaphore(concurrency)

    async def one(job: Callable[[], Awaitable[Any]]) -> None:
        async with sem:
            await job()

    await asyncio.gather(*(one(j) for j in jobs))


async def _attach(real_kubeconfig: str, out: str) -> None:
    """Run the kubelet-mode simulator and the simulated MatrixOne against a
    real API server; write ``out``: a copy of its kubeconfig advertising the
    admin URL. Runs until SIGTERM."""
    import shutil
    import signal

    from mo_operator.matrixone.simulated.cluster import SimulatedCluster
    from mo_operator.matrixone.simulated.remote import publish

    cluster = SimulatedCluster(attach_to=real_kubeconfig, simulator_options=ATTACHED_SIMULATOR)
    await cluster.start()
    assert cluster.admin_server is not None
    tmp = out + ".tmp"
    shutil.copy(real_kubeconfig, tmp)
    publish(tmp, cluster.admin_server.url, cluster.admin_server.token)
    os.replace(tmp, out)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await cluster.stop()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "attach":
        asyncio.run(_attach(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("usage: support_target.py attach REAL_KUBECONFIG OUT_KUBECONFIG")
