"""A burst of 10,000 creations through lightkube: no watch event is lost or
duplicated, and every watcher sees every change once, in resourceVersion order."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lightkube import AsyncClient
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap

from mo_devkit.localcluster.controlplane import ControlPlane

N = 10_000
WATCHERS = 3


@pytest.mark.timeout(300)
async def test_burst_of_creations_reaches_every_watcher_exactly_once(tmp_path: Any) -> None:
    cp = ControlPlane(history_size=N * 2, simulate_workloads=False)
    await cp.start(tmp_path / "kc")
    client: AsyncClient = cp.client()
    try:
        seen: list[list[tuple[str, int]]] = [[] for _ in range(WATCHERS)]
        start_rv = str(cp.server.store.rv)

        async def watch(i: int) -> None:
            async for typ, obj in client.watch(ConfigMap, namespace="default", resource_version=start_rv):
                seen[i].append((obj.metadata.name, int(obj.metadata.resourceVersion)))
                assert typ == "ADDED"
                if len(seen[i]) == N:
                    return

        watchers = [asyncio.create_task(watch(i)) for i in range(WATCHERS)]
        sem = asyncio.Semaphore(64)

        async def create(i: int) -> None:
            async with sem:
                await client.create(ConfigMap(metadata=ObjectMeta(name=f"cm-{i:05d}"), data={"i": str(i)}))

        await asyncio.gather(*(create(i) for i in range(N)))
        await asyncio.wait_for(asyncio.gather(*watchers), 120)
        for events in seen:
            assert len(events) == N
            assert len({name for name, _ in events}) == N
            rvs = [rv for _, rv in events]
            assert rvs == sorted(rvs)
        assert seen[0] == seen[1] == seen[2]
        listed = [cm async for cm in client.list(ConfigMap, namespace="default", chunk_size=500)]
        assert len(listed) == N
    finally:
        await client.close()
        await cp.stop()
