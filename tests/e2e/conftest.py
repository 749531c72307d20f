"""Fixtures of the acceptance scenarios (MISSION.md): a world per test and
the operator under test.

On the embedded control plane every test gets a fresh cluster (a second to
start), so scenarios never see each other's objects or faults. With
``MO_TEST_KUBECONFIG`` the tests share that real cluster: each uses its own
namespace, and the CRDs are removed at the end of the session.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lightkube.config.kubeconfig import KubeConfig

from mo_operator.api.crdgen import all_crds
from mo_operator.api.install import CRDS, install_crds
from mo_operator.kube.client import ApiClient
from mo_operator.kube.resource import Resource
from mo_operator.localcluster.simulator.config import SIMULATED_LABEL
from mo_operator.matrixone.simulated.cluster import SimulatedCluster

from .harness import (
    FAST_SIMULATOR,
    MO_SETTINGS,
    NAMESPACES,
    REAL_KUBECONFIG,
    OperatorRunner,
    World,
    eventually,
)

pytestmark = pytest.mark.e2e
NODES = Resource("", "v1", "Node", "nodes", False)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    if REAL_KUBECONFIG:
        cluster = SimulatedCluster(
            attach_to=REAL_KUBECONFIG,
            simulator_options=FAST_SIMULATOR,  # the kubelets' timing; the controllers are the real ones
            mo_settings=MO_SETTINGS,
            refresh_interval=0.05,
        )
        await cluster.start()
        kubeconfig = Path(REAL_KUBECONFIG)
    else:
        cluster = SimulatedCluster(
            data_dir=tmp_path / "etcd",  # so a test can restart the API server over its state
            simulator_options=FAST_SIMULATOR,
            mo_settings=MO_SETTINGS,
            refresh_interval=0.05,
        )
        kubeconfig = tmp_path / "kubeconfig"
        await cluster.start(kubeconfig)
    client = ApiClient(KubeConfig.from_file(str(kubeconfig)), field_manager="e2e-user", qps=None)
    world = World(cluster, kubeconfig, f"e2e-{uuid.uuid4().hex[:8]}", client)
    try:
        await install_crds(client)
        await client.create(NAMESPACES, {"metadata": {"name": world.namespace}})
        yield world
    finally:
        try:
            if REAL_KUBECONFIG:  # a shared cluster: leave nothing behind, nothing Terminating
                await world.remove_our_objects(wait=5.0)
                await world.delete_namespace()
        finally:
            await client.close()
            await cluster.stop()


@pytest.fixture(scope="session", autouse=True)
def _remove_crds_from_a_real_cluster() -> object:
    yield None
    if REAL_KUBECONFIG:
        import asyncio

        async def remove() -> None:
            client = ApiClient(KubeConfig.from_file(REAL_KUBECONFIG), field_manager="e2e-user")
            names = [crd["metadata"]["name"] for crd in all_crds()]
            for name in names:
                await client.delete(CRDS, name, missing_ok=True)
            # The simulated Nodes outlive each test's simulator (the next one takes them
            # over); once the session ends nothing plays their kubelets.
            nodes = await client.list(NODES, label_selector=f"{SIMULATED_LABEL}=true")
            for node in nodes.items:
                await client.delete(NODES, node["metadata"]["name"], missing_ok=True)

            async def gone() -> bool:  # a next session must not find them Terminating
                return all([await client.get_or_none(CRDS, name) is None for name in names])

            await eventually(gone, timeout=60, message="the CRDs are deleted")
            await client.close()

        asyncio.run(remove())


@pytest.fixture
async def operator(world: World) -> AsyncIterator[OperatorRunner]:
    """The operator, running in this process."""
    runner = OperatorRunner(world)
    await runner.start()
    try:
        yield runner
    finally:
        try:
            if REAL_KUBECONFIG:  # let the operator finalize what the test made
                await world.remove_our_objects(wait=60.0)
        finally:
            await runner.stop()


@pytest.fixture
async def operator_runner(world: World) -> AsyncIterator[OperatorRunner]:
    """An operator runner the test starts itself (in process or as a child process)."""
    runner = OperatorRunner(world)
    try:
        yield runner
    finally:
        await runner.stop()
