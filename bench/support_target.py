"""The world the operator benchmarks run in: the test kit's (``open_world``),
with its cluster in a process of its own (``apart``), so the operator under
test shares neither an event loop nor a CPU's worth of Python with the API
server, the workload simulator and the simulated MatrixOne.

By default that is ``mo-operator control-plane --fast``. With
``MO_TEST_KUBECONFIG`` (or ``KUBEBUILDER_ASSETS``, which starts a real control
plane for the run) the API server is that cluster's, and the kit attaches the
kubelet-mode simulator and the simulated MatrixOne in a child process; the
world's namespaces there are made unique and removed at the end.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from lightkube.config.kubeconfig import KubeConfig

from bench_support import note_server, start_real_control_plane
from mo_devkit.testing import World, open_world
from mo_operator.kube.client.client import ApiClient

start_real_control_plane()
REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""A real API server to run against instead of the embedded control plane
(started here from ``KUBEBUILDER_ASSETS``, or an existing cluster)."""


NAMESPACE_TEARDOWN_SECONDS = 300.0
"""How long the namespaces of a run on a real server may take to go, plus a second
each: there the namespace controller deletes every kind of each one in turn, and
a benchmark's world holds thousands of objects in dozens of namespaces."""


def log(message: str) -> None:
    """Progress on stderr (stdout carries the figures)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> float:
    """The 1-minute load average, recorded with each figure: the machine may be shared."""
    return round(os.getloadavg()[0], 2)


@contextlib.asynccontextmanager
async def target(*, simulator: bool = True) -> AsyncIterator[World]:
    """The world the operator runs in (see the module doc); ``simulator=False``: an
    API server alone (nothing runs pods). The operator has stopped when it closes:
    nothing is left to finalize the world's objects on a real server."""
    note_server(os.environ.get("MO_BENCH_SERVER") or REAL_KUBECONFIG or "the embedded control plane")
    with tempfile.TemporaryDirectory() as d:
        async with open_world(
            Path(d), REAL_KUBECONFIG, apart=True, simulator=simulator, finalize_wait=0.0
        ) as world:
            try:
                yield world
            finally:
                if REAL_KUBECONFIG:  # before the kit's own teardown, which waits a minute or so
                    log(f"deleting {len(world.namespaces)} namespaces")
                    await world.remove_our_objects(wait=0.0)
                    await world.delete_namespaces(NAMESPACE_TEARDOWN_SECONDS + len(world.namespaces))


def client_of(world: World, field_manager: str) -> ApiClient:
    """A client of the world's cluster of its own (a watcher's, a loader's), without
    client-side rate limit."""
    return ApiClient(KubeConfig.from_file(str(world.kubeconfig)), field_manager=field_manager, qps=None)
