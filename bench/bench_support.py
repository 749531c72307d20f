"""Shared pieces of the ``bench/`` scripts: the embedded API
server in its own process (so the runtime under test does not share an event
loop, or a CPU's worth of Python, with the server it talks to), populating
it, and printing figures (one JSON line each, then a table)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from mo_devkit.testing.cluster_process import ClusterProcess, start_cluster_process
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps", True)
REPO = Path(__file__).resolve().parents[1]
_used: list[str] = []
"""The server this run's figures came from, once a script chose one (``print_figures`` says it)."""


def start_real_control_plane() -> None:
    """envtest's convention, as in the tests: with ``KUBEBUILDER_ASSETS`` (and no
    ``MO_TEST_KUBECONFIG``) start that real control plane for this run, stopped at
    exit, named in ``MO_TEST_KUBECONFIG`` and, for the figures, ``MO_BENCH_SERVER``."""
    import atexit

    from mo_devkit.localcluster.envtest import start_from_environment

    if os.environ.get("MO_BENCH_SERVER"):
        return  # started already in this process
    plane = start_from_environment("MO_TEST_KUBECONFIG")
    if plane is not None:
        os.environ["MO_BENCH_SERVER"] = f"kube-apiserver from {plane.assets} ({plane.url})"
        atexit.register(plane.stop)


def note_server(name: str) -> None:
    """Say which server the figures come from (``print_figures`` prints the last one)."""
    _used.append(name)


def rss_bytes(pid: int | None = None) -> int:
    for line in Path(f"/proc/{pid or os.getpid()}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


@contextlib.asynccontextmanager
async def control_plane_process(*, real: bool = True) -> AsyncIterator[ClusterProcess]:
    """An API server in its own process, fresh for this run (the test kit's
    ``start_cluster_process``, no simulator): kube-apiserver when
    ``KUBEBUILDER_ASSETS`` names its binaries (and ``real``: a benchmark of the
    embedded server itself passes False), else ``mo-operator control-plane``
    (API only). An existing cluster (``MO_TEST_KUBECONFIG`` alone) is not used:
    these benchmarks fill the ``default`` namespace."""
    real_kubeconfig = None
    if real and os.environ.get("KUBEBUILDER_ASSETS"):
        start_real_control_plane()
        if os.environ.get("MO_BENCH_SERVER"):
            real_kubeconfig = os.environ["MO_TEST_KUBECONFIG"]
    note_server(os.environ["MO_BENCH_SERVER"] if real_kubeconfig else "the embedded control plane")
    with tempfile.TemporaryDirectory() as d:
        cluster = await start_cluster_process(Path(d), real_kubeconfig, simulator=False)
        try:
            yield cluster
        finally:
            await cluster.stop()


def config_map(name: str, namespace: str = "default", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A ConfigMap of a typical size for what an operator caches (~0.5 KiB of JSON)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {"bench": "1", **(labels or {})}},
        "data": {f"key{i}": f"{name}-{i}-" + "x" * 40 for i in range(5)},
    }


async def create_all(client: ApiClient, objects: Sequence[dict[str, Any]], concurrency: int = 32) -> None:
    sem = asyncio.Semaphore(concurrency)

    async def create(obj: dict[str, Any]) -> None:
        async with sem:
            await client.create(CONFIGMAPS, obj)

    await asyncio.gather(*(create(o) for o in objects))


def print_figures(figures: list[dict[str, Any]]) -> None:
    server = _used[-1] if _used else os.environ.get("MO_BENCH_SERVER") or os.environ.get("MO_TEST_KUBECONFIG")
    print(f"server: {server or 'none (no API server involved)'}", file=sys.stderr, flush=True)
    for f in figures:
        print(json.dumps(f))
    print()
    print(f"{'figure':44} {'value':>14}  unit")
    for f in figures:
        print(f"{f['figure']:44} {f['value']:>14}  {f['unit']}")
