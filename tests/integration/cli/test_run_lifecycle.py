"""``mo-operator run`` as a pod runs it, against the embedded API server:

- SIGTERM stops it within a few seconds, exit code 0, at every stage: while
  webhook setup waits on the API server, before its caches sync (no CRDs),
  as a standby replica campaigning for the lease, and while reconciling. (A
  pod that ignores SIGTERM waits out its grace period and is SIGKILLed.)
- Started before our CRDs are installed, it says once which are missing and
  how to install them, stays not ready, and starts by itself once they are
  served; its informers do not log each failed list.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from lightkube import KubeConfig

from mo_devkit.cli.demo import example_cluster
from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing import free_port
from mo_operator.api.install import install_crds
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.manager.adapters import LEASES

from .process import STOP_SECONDS, Command, eventually, http_get

IDENTITY = "cli-test"
HANG = 1_000_000
CRDS_MISSING = r"CustomResourceDefinitions of .* are not installed"


class Operator:
    """One ``mo-operator run`` process and the addresses of its endpoints."""

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.health = free_port()
        self.metrics = free_port()
        self.command: Command | None = None

    async def start(self, *extra: str) -> Command:
        self.command = await Command.start(
            "run",
            "--kubeconfig",
            str(self.kubeconfig),
            "--identity",
            IDENTITY,
            "--health-probe-bind-address",
            f"127.0.0.1:{self.health}",
            "--metrics-bind-address",
            f"127.0.0.1:{self.metrics}",
            "--api-poll-seconds",
            "0.2",
            *extra,
        )
        return self.command

    async def readyz(self) -> tuple[int, str]:
        return await http_get(f"http://127.0.0.1:{self.health}/readyz")

    async def metric(self, pattern: str) -> float:
        """The value of the first /metrics sample matching ``pattern`` (0 when none)."""
        _, text = await http_get(f"http://127.0.0.1:{self.metrics}/metrics")
        found = re.search(rf"^{pattern} (\S+)$", text, re.MULTILINE)
        return float(found.group(1)) if found else 0.0


@pytest.fixture
async def operator(control_plane: ControlPlane) -> AsyncIterator[Operator]:
    assert control_plane.kubeconfig_path is not None
    op = Operator(control_plane.kubeconfig_path)
    try:
        yield op
    finally:
        control_plane.server.faults.fail_count = 0
        if op.command is not None:
            await op.command.kill()


@pytest.fixture
async def api(control_plane: ControlPlane) -> AsyncIterator[ApiClient]:
    client = ApiClient(
        KubeConfig.from_dict(control_plane.server.kubeconfig()), field_manager="test", qps=None
    )
    try:
        yield client
    finally:
        await client.close()


async def reconciling(api: ApiClient) -> None:
    """Create the demo's cluster and wait until the operator made its LogSet."""
    cluster = example_cluster()
    meta = cluster["metadata"]
    await api.apply(cluster, resource=r.MATRIXONE_CLUSTERS, field_manager="test")

    async def has_logset() -> bool:
        return await api.get_or_none(r.LOGSETS, meta["name"], meta["namespace"]) is not None

    await eventually(has_logset, 60, "the operator creates the cluster's LogSet")


async def test_missing_crds_are_named_once_and_installing_them_starts_the_operator(
    operator: Operator, api: ApiClient
) -> None:
    run = await operator.start("--no-webhooks", "--no-leader-elect")
    warning = await run.wait_for(CRDS_MISSING)
    for named in ("matrixoneclusters.core.matrixorigin.io", "cnsets.core.matrixorigin.io"):
        assert named in warning
    for hint in ("--install-crds", "deploy/crds", "charts/mo-operator"):
        assert hint in warning

    async def polled_a_few_times() -> bool:
        pattern = r'rest_client_requests_total\{code="404",host="[^"]+",method="GET"\}'
        return await operator.metric(pattern) >= 5

    await eventually(polled_a_few_times, 30, "the operator looked for the CRDs five times")
    status, body = await operator.readyz()
    assert status == 503 and "[-]informers" in body, body
    assert len(run.said(CRDS_MISSING)) == 1, run.output
    assert run.said("list failed") == [], "the informers must not start before the CRDs are served"

    await install_crds(api)

    async def ready() -> bool:
        return (await operator.readyz())[0] == 200

    await eventually(ready, 30, "/readyz says ready")
    await reconciling(api)
    assert "events_dropped_total" in (await http_get(f"http://127.0.0.1:{operator.metrics}/metrics"))[1]
    assert await run.signal_and_wait() == 0, run.output


async def webhook_setup_hangs(control_plane: ControlPlane, operator: Operator, api: ApiClient) -> Command:
    """Every request of the operator hangs: it waits in webhook setup (its CA Secret)."""
    control_plane.server.faults.fail_next(HANG, hang=True, user_agent=f"mo-operator/{IDENTITY}")
    run = await operator.start(
        "--no-leader-elect", "--webhook-host", "127.0.0.1", "--webhook-port", str(free_port())
    )

    async def waiting() -> bool:
        return control_plane.server.faults.fail_count < HANG

    await eventually(waiting, 30, "the operator's first request hangs")
    return run


async def without_crds(control_plane: ControlPlane, operator: Operator, api: ApiClient) -> Command:
    run = await operator.start("--no-webhooks", "--no-leader-elect")
    await run.wait_for(CRDS_MISSING)
    return run


async def standby(control_plane: ControlPlane, operator: Operator, api: ApiClient) -> Command:
    """Synced, and campaigning for a lease another replica holds."""
    await install_crds(api)
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "mo-operator-leader", "namespace": "default"},
        "spec": {"holderIdentity": "another-replica", "leaseDurationSeconds": 3600, "renewTime": now},
    }
    await api.apply(lease, resource=LEASES, field_manager="another-replica")
    run = await operator.start("--no-webhooks", "--lease-namespace", "default")

    async def campaigning() -> bool:
        status, body = await operator.readyz()
        return status == 200 and "[+]leader standby" in body

    await eventually(campaigning, 30, "the operator is synced and standing by")
    return run


async def busy(control_plane: ControlPlane, operator: Operator, api: ApiClient) -> Command:
    await install_crds(api)
    run = await operator.start("--no-webhooks", "--no-leader-elect")
    await reconciling(api)
    return run


Stage = Callable[[ControlPlane, Operator, ApiClient], Awaitable[Command]]


@pytest.mark.parametrize(
    "stage", [webhook_setup_hangs, without_crds, standby, busy], ids=lambda s: s.__name__
)
async def test_sigterm_stops_the_operator_at_every_stage(
    control_plane: ControlPlane, operator: Operator, api: ApiClient, stage: Stage
) -> None:
    run = await stage(control_plane, operator, api)
    assert await run.signal_and_wait(timeout=STOP_SECONDS) == 0, run.output
    assert run.said("Traceback") == [], run.output
