"""What keeps a refresh of the simulated MatrixOne cheap at a hundred clusters and more.

A refresh looks at every MatrixOne pod. At 100 clusters the control plane spent most
of its time there: parsing every config again (its parse cache was smaller than the
number of distinct files, so it missed on every read), scanning every pod for each
address, and refreshing back to back. These tests fail if any of that comes back.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mo_devkit.simulated import configfiles
from mo_devkit.simulated.install import refresh_loop
from mo_devkit.simulated.instances import observe_instances
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone.component import Component

from .factories import component_config_map, logset_services, node, set_pod

CLUSTERS = 600
"""More CN configs than the parse cache used to hold (256)."""


def _many_clusters() -> Snapshot:
    """One CN per namespace-less set, each with a config file of its own."""
    pods: list[dict[str, Any]] = []
    configmaps: list[dict[str, Any]] = []
    for i in range(CLUSTERS):
        cm = component_config_map(Component.CN, f"cn{i}")
        cm["data"] = {k: f"{v}\n# cluster {i}\n" for k, v in cm["data"].items()}
        configmaps.append(cm)
        pods.append(set_pod(Component.CN, f"cn{i}", 0))
    return Snapshot.of(pods=pods, configmaps=configmaps, services=logset_services(), nodes=[node()])


def test_a_second_refresh_parses_no_config_again() -> None:
    snapshot = _many_clusters()
    observe_instances(snapshot)
    before = configfiles._parse.cache_info()
    found = observe_instances(snapshot)
    after = configfiles._parse.cache_info()
    assert len(found) == CLUSTERS and all(i.problem is None for i in found)
    assert after.misses == before.misses
    assert after.hits - before.hits == CLUSTERS


def test_pods_in_gives_one_namespace() -> None:
    a = set_pod(Component.CN, "a", 0, namespace="one")
    b = set_pod(Component.CN, "b", 0, namespace="two")
    c = set_pod(Component.CN, "c", 0, namespace="one")
    snapshot = Snapshot.of(pods=[a, b, c])
    assert snapshot.pods_in("one") == [a, c]
    assert snapshot.pods_in("two") == [b]
    assert snapshot.pods_in("three") == []


async def test_refreshing_under_constant_change_takes_a_bounded_share() -> None:
    """Changes that never stop (``dirty`` set again by every refresh) get a quarter of the time."""
    dirty = asyncio.Event()
    busy: list[float] = []

    def refresh() -> None:
        started = time.perf_counter()
        while time.perf_counter() - started < 0.01:
            pass
        busy.append(time.perf_counter() - started)
        dirty.set()

    dirty.set()
    started = time.perf_counter()
    task = asyncio.create_task(refresh_loop(refresh, dirty, interval=10.0, max_busy_share=0.25))
    await asyncio.sleep(0.6)
    task.cancel()
    elapsed = time.perf_counter() - started
    assert len(busy) >= 3, "it still refreshes while changes keep coming"
    assert sum(busy) <= 0.25 * elapsed + 0.011, f"{sum(busy):.3f}s busy of {elapsed:.3f}s"


async def test_a_failing_refresh_does_not_stop_the_loop() -> None:
    dirty = asyncio.Event()
    calls: list[int] = []

    def refresh() -> None:
        calls.append(1)
        dirty.set()
        raise RuntimeError("a bug in the model")

    dirty.set()
    task = asyncio.create_task(refresh_loop(refresh, dirty, interval=10.0))
    await asyncio.sleep(0.05)
    task.cancel()
    assert len(calls) >= 2
