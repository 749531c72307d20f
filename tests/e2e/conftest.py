"""Fixtures of the acceptance scenarios (MISSION.md): a world per test and
the operator under test, from the shared test kit (``mo_devkit.testing``).

On the embedded control plane every test gets a fresh cluster (a second to
start), so scenarios never see each other's objects or faults. With
``MO_TEST_KUBECONFIG`` the tests share that real cluster: each uses its own
namespace, whose deletion it starts and the session waits for once, at its end
(failing if a namespace or a volume of theirs stays), before it removes the CRDs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from lightkube.config.kubeconfig import KubeConfig

from mo_devkit.testing.cleanup import PendingDeletions
from mo_devkit.testing.world import open_world, remove_crds_and_simulated_nodes
from mo_operator.kube.client.client import ApiClient

from .harness import REAL_KUBECONFIG, OperatorRunner, World

pytestmark = pytest.mark.e2e


@pytest.fixture
async def world(tmp_path: Path, _leave_a_real_cluster_as_found: PendingDeletions) -> AsyncIterator[World]:
    """No operator runs when the world closes: the operator fixtures stop theirs first (the
    ``operator`` fixture once it has finalized the test's objects), so what is left of our
    kinds loses its finalizers at once (``finalize_wait=0``)."""
    deletions = _leave_a_real_cluster_as_found
    async with open_world(tmp_path, REAL_KUBECONFIG, finalize_wait=0.0, deletions=deletions) as w:
        yield w


@pytest.fixture(scope="session", autouse=True)
def _leave_a_real_cluster_as_found() -> Iterator[PendingDeletions]:
    """The namespaces the session's worlds deleted, gone with their volumes, then the CRDs."""
    deletions = PendingDeletions()
    yield deletions
    if REAL_KUBECONFIG:
        try:
            asyncio.run(_finish(deletions, REAL_KUBECONFIG))
        finally:
            asyncio.run(remove_crds_and_simulated_nodes(REAL_KUBECONFIG))


async def _finish(deletions: PendingDeletions, kubeconfig: str) -> None:
    client = ApiClient(KubeConfig.from_file(kubeconfig), field_manager="e2e-user")
    try:
        await deletions.finish(client)
    finally:
        await client.close()


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
