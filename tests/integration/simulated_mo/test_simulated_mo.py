"""The simulated MatrixOne driven only by API objects, reached only over morpc (``RpcAdminProvider``)."""

from __future__ import annotations

import functools

import pytest

from mo_devkit.localcluster.simulator.core.kinds import POD
from mo_devkit.simulated import STATE_ANNOTATION
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.admin import AdminError, HAKeeperState, NodeState, WorkState
from mo_operator.matrixone.component import Component

from .conftest import NS, MOCluster, eventually

DISCOVERY = names.discovery_address("mo", NS)


async def _state(cluster: MOCluster) -> HAKeeperState | None:
    try:
        return await cluster.provider.admin(DISCOVERY).hakeeper_state()
    except AdminError:
        return None


async def _note(cluster: MOCluster, pod: str) -> str:
    return str(((await cluster.pod(pod))["metadata"].get("annotations") or {}).get(STATE_ANNOTATION, ""))


async def test_bootstrap_then_registration_then_drain(mo_cluster: MOCluster) -> None:
    """TN and CN wait for the HAKeeper; it bootstraps once its initial members run.
    A waiting TN is Ready as a container without a readiness probe is; a CN is not, its
    readiness gate (kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-readiness-gate)
    waits for its store; a Draining CN leaves Ready and hands its sessions over."""
    c = mo_cluster
    await c.logset()
    await c.set_config(Component.TN, "mo")
    await c.set_config(Component.CN, "mo-tp")
    tn = await c.run(Component.TN, "mo", 0)
    cns = [await c.run(Component.CN, "mo-tp", i) for i in range(2)]
    await eventually(lambda: _noted(c, tn, "WaitingForHAKeeper"))
    await eventually(lambda: _noted(c, cns[0], "WaitingForHAKeeper"))
    await eventually(lambda: c.ready(tn))
    assert not await c.ready(cns[0])
    assert await _state(c) is None, "no HAKeeper answers before the log service runs"

    logs = [await c.run(Component.LOG, "mo", i) for i in range(3)]
    for pod in (*logs, tn, *cns):
        await eventually(functools.partial(c.ready, pod), timeout=20)
    state = await _state(c)
    assert state is not None and state.bootstrapped
    assert len(state.up_log_uuids()) == 3 and len(state.up_tn_uuids()) == 1
    uuids = [c.mo.store_uuid(NS, pod) for pod in cns]
    assert state.up_cn_uuids() == set(uuids)
    assert await c.condition(cns[0], labels.CN_STORE_READINESS) == "True"

    a, b = uuids
    assert a is not None and b is not None
    c.mo.set_sessions(a, 6)
    admin = c.provider.admin(DISCOVERY)
    await admin.set_cn_work_state(a, WorkState.DRAINING)
    await eventually(lambda: _not_ready(c, cns[0]))
    assert await c.condition(cns[0], labels.CN_STORE_READINESS) == "False"
    await eventually(lambda: _idle(c, a))
    assert c.mo.sessions(b) == 6
    await admin.set_cn_work_state(a, WorkState.WORKING)
    await eventually(lambda: c.ready(cns[0]))


async def test_lost_log_store_shows_down(mo_cluster: MOCluster) -> None:
    """A deleted log pod stops heartbeating; after ``store_timeout`` HAKeeper shows it down."""
    c = mo_cluster
    await c.logset()
    logs = [await c.run(Component.LOG, "mo", i) for i in range(3)]
    await eventually(lambda: _state(c), timeout=20)
    lost = c.mo.store_uuid(NS, logs[2])
    await c.api.delete(POD, NS, logs[2], grace_period=0)

    async def down() -> set[str]:
        state = await _state(c)
        return {s.uuid for s in state.log_stores if s.state is NodeState.TIMEOUT} if state else set()

    assert await eventually(down) == {lost}


async def test_bad_image_and_invalid_config_never_become_ready(mo_cluster: MOCluster) -> None:
    """Next to a healthy CN, one with a bad image and one with broken TOML stay unready."""
    c = mo_cluster
    c.mo.mark_image_bad("*:9.9.9-bad")
    await c.logset()
    await c.config_map("broken-config", {"config.toml": "service-type = "})
    for i in range(3):
        await c.run(Component.LOG, "mo", i)
    await c.set_config(Component.TN, "mo")
    await c.run(Component.TN, "mo", 0)  # a CN starts once HAKeeper lists a TN
    await c.set_config(Component.CN, "mo-tp")
    good = await c.run(Component.CN, "mo-tp", 0)
    bad = await c.run(Component.CN, "mo-tp", 1, image="matrixorigin/matrixone:9.9.9-bad")
    broken = await c.run(Component.CN, "mo-tp", 2, config="broken-config")
    await eventually(lambda: c.ready(good), timeout=20)
    await eventually(lambda: _noted(c, bad, "BadImage"))
    await eventually(lambda: _noted(c, broken, "InvalidConfig"))
    assert not await c.ready(bad) and not await c.ready(broken)
    assert await c.condition(bad, labels.CN_STORE_READINESS) == "False"


async def _noted(c: MOCluster, pod: str, prefix: str) -> bool:
    return (await _note(c, pod)).startswith(prefix)


async def _not_ready(c: MOCluster, pod: str) -> bool:
    return not await c.ready(pod)


def _idle(c: MOCluster, uuid: str) -> bool:
    return c.mo.sessions(uuid) == 0


pytestmark = pytest.mark.timeout(90)
