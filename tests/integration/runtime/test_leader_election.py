"""Two replicas of the test controller with leader election on a Lease
(client-go ``tools/leaderelection``; https://kubernetes.io/docs/concepts/architecture/leases/):
only the leader writes, a killed leader (no release) is replaced once its
lease expires, and a leader cut off from the lease stops writing — through
the fence — before anyone else may take over. The request log of the server
is the witness: who wrote what, when."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.faults import RequestRecord
from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.leaderelection.leader import LeaderElectionConfig, LeaderElector
from mo_operator.kube.manager.adapters import ClientLeaseStore, WriteFence, WriteRefused
from mo_operator.kube.manager.manager import Manager

from .child_controller import PARENT_LABEL, BeforeWrite, ChildController, all_children_as_desired, parent
from .conftest import make_client, make_informers
from .ledger import CONFIGMAPS, eventually

NS = "default"
LEASE, DURATION, RENEW, RETRY = "child-controller", 2.0, 1.5, 0.3


class KillableLeaseStore(ClientLeaseStore):
    """The lease as a replica sees it; ``dead`` cuts it off (a killed
    process, or one partitioned from the API server's lease endpoint)."""

    dead = False

    def _check(self) -> None:
        if self.dead:
            raise ConnectionError("cut off")

    async def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        self._check()
        return await super().get(namespace, name)

    async def create(self, namespace: str, lease: dict[str, Any]) -> dict[str, Any]:
        self._check()
        return await super().create(namespace, lease)

    async def replace(self, namespace: str, lease: dict[str, Any]) -> dict[str, Any]:
        self._check()
        return await super().replace(namespace, lease)


@dataclass
class Replica:
    name: str
    client: ApiClient
    store: KillableLeaseStore
    elector: LeaderElector
    fenced: ApiClient
    fence: WriteFence
    manager: Manager
    task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.manager.run(), name=f"manager-{self.name}")


def replica(cp: ControlPlane, name: str, before_write: BeforeWrite | None = None) -> Replica:
    client = make_client(cp, name)
    store = KillableLeaseStore(client)
    elector = LeaderElector(store, LeaderElectionConfig(LEASE, NS, name, DURATION, RENEW, RETRY))
    fence = WriteFence(elector.may_write)
    fenced = client.with_write_hook(fence)
    cc = ChildController(make_informers(client), fenced, NS, name=f"cc-{name}", before_write=before_write)
    manager = Manager(cc.informers, [cc.controller], elector=elector, shutdown_timeout=5)
    return Replica(name, client, store, elector, fenced, fence, manager)


@pytest.fixture
async def pair(control_plane: ControlPlane) -> AsyncIterator[Callable[..., tuple[Replica, Replica]]]:
    made: list[Replica] = []

    def make(before_write: BeforeWrite | None = None) -> tuple[Replica, Replica]:
        a, b = (
            replica(control_plane, "replica-a", before_write),
            replica(control_plane, "replica-b", before_write),
        )
        made.extend((a, b))
        return a, b

    yield make
    for r in made:
        r.manager.request_stop()
    for r in made:
        if r.task is not None:
            await asyncio.gather(r.task, return_exceptions=True)
        await r.client.close()


def cm_writes(cp: ControlPlane, r: Replica) -> list[RequestRecord]:
    return [w for w in cp.server.faults.writes(field_manager=r.name) if w.resource == "configmaps"]


def first_lease_win(cp: ControlPlane, r: Replica, since: float) -> float:
    wins = [
        w.time
        for w in cp.server.faults.writes(field_manager=r.name, since=since)
        if w.resource.startswith("leases") and w.code in (200, 201)
    ]
    return min(wins)


async def leader_of(a: Replica, b: Replica) -> tuple[Replica, Replica]:
    await eventually(lambda: a.elector.is_leader or b.elector.is_leader, 10, "a leader")
    assert not (a.elector.is_leader and b.elector.is_leader)
    return (a, b) if a.elector.is_leader else (b, a)


def assert_never_both_wrote(cp: ControlPlane, old: Replica, new: Replica) -> None:
    old_times = [w.time for w in cm_writes(cp, old)]
    new_times = [w.time for w in cm_writes(cp, new)]
    assert old_times and new_times
    assert max(old_times) < min(new_times), "the two replicas' writes interleave"


async def test_only_the_leader_writes_and_a_killed_leader_is_replaced_within_the_lease(
    control_plane: ControlPlane, pair: Callable[..., tuple[Replica, Replica]]
) -> None:
    a, b = pair()
    a.start()
    b.start()
    leader, standby = await leader_of(a, b)
    user = make_client(control_plane, "someone-else")
    try:
        for i in range(5):
            await user.create(CONFIGMAPS, parent(f"p{i}", v=str(i)))
        await eventually(lambda: all_children_as_desired(control_plane), 10, "children")
        assert cm_writes(control_plane, standby) == []

        # Kill the leader: no release (its lease endpoint is gone with it).
        leader.store.dead = True
        killed = time.time()
        assert leader.task is not None
        leader.task.cancel()
        await asyncio.gather(leader.task, return_exceptions=True)
        await eventually(lambda: standby.elector.is_leader, DURATION + 3, "the standby to take over")
        handover = first_lease_win(control_plane, standby, killed) - killed
        # Not before the lease expired (so it was not released), and soon after:
        # the standby judges expiry from when it saw the last renewal (it polls
        # every retry period), so up to about two retry periods past the duration.
        assert DURATION - 2 * RETRY - 0.2 < handover < DURATION + RETRY + 0.5, handover

        await user.create(CONFIGMAPS, parent("p-late", v="late"))
        await user.delete(CONFIGMAPS, "p0-child", NS)
        await eventually(lambda: all_children_as_desired(control_plane), 10, "the new leader's work")
        assert_never_both_wrote(control_plane, leader, standby)
        assert all(w.time < killed for w in cm_writes(control_plane, leader))
    finally:
        await user.close()


async def test_a_leader_cut_off_from_its_lease_is_fenced_before_anyone_takes_over(
    control_plane: ControlPlane, pair: Callable[..., tuple[Replica, Replica]]
) -> None:
    """A reconcile that read its cache while leading but reaches its write
    after the renew deadline must not write: the new leader may already be
    writing the same object (the fence, ``LeaderElector.may_write``)."""
    holding = asyncio.Event()
    held: list[str] = []

    async def slow_first_write(req: Request) -> None:
        if not held:
            held.append(str(req))
            holding.set()
            await asyncio.sleep(RENEW + 1.0)  # past the renew deadline

    a, b = pair(slow_first_write)
    a.start()
    b.start()
    leader, standby = await leader_of(a, b)
    user = make_client(control_plane, "someone-else")
    try:
        await user.create(CONFIGMAPS, parent("slow", v="1"))
        await asyncio.wait_for(holding.wait(), 5)
        cut = time.time()
        leader.store.dead = True  # renewals fail from now on; its other requests still work

        await eventually(
            lambda: leader.fence.refused >= 1, 2 * DURATION, "the fence to refuse the late write"
        )
        await eventually(lambda: leader.manager.lost_leadership, 5, "the old leader's manager to stop")
        await eventually(
            lambda: all_children_as_desired(control_plane), DURATION + 5, "the new leader's write"
        )
        assert [w.name for w in cm_writes(control_plane, standby)] == ["slow-child"]
        assert [w for w in cm_writes(control_plane, leader) if w.time >= cut] == []
        assert first_lease_win(control_plane, standby, cut) - cut >= RENEW  # the old leader had stepped down
    finally:
        await user.close()


async def test_fenced_client_refuses_writes_locally(control_plane: ControlPlane) -> None:
    client = make_client(control_plane, "fenced")
    allowed = [False]
    fence = WriteFence(lambda: allowed[0])
    fenced = client.with_write_hook(fence)
    try:
        body = parent("x")
        with pytest.raises(WriteRefused):
            await fenced.create(CONFIGMAPS, body)
        with pytest.raises(WriteRefused):
            await fenced.apply(body, resource=CONFIGMAPS)
        with pytest.raises(WriteRefused):
            await fenced.delete(CONFIGMAPS, "x", NS)
        assert control_plane.server.faults.writes(field_manager="fenced") == []
        assert fence.refused == 3
        assert await fenced.get_or_none(CONFIGMAPS, "x", NS) is None  # reads pass

        allowed[0] = True
        created = await fenced.create(CONFIGMAPS, body)
        assert created["metadata"]["labels"] == {PARENT_LABEL: "yes"}
        assert len(control_plane.server.faults.writes(field_manager="fenced")) == 1
    finally:
        await client.close()


async def test_cancelling_the_manager_stops_leading_and_releases_the_lease(
    control_plane: ControlPlane, pair: Callable[..., tuple[Replica, Replica]]
) -> None:
    """Cancelling ``Manager.run`` (the asyncio form of shutdown) must take
    the elector down with it: no renewals afterwards, the lease released so
    the standby takes over at once instead of after expiry."""
    a, b = pair()
    a.start()
    b.start()
    leader, standby = await leader_of(a, b)
    assert leader.task is not None
    leader.task.cancel()
    await asyncio.gather(leader.task, return_exceptions=True)
    cancelled = time.time()
    assert not leader.elector.is_leader
    await eventually(lambda: standby.elector.is_leader, DURATION, "the standby to take over")
    assert first_lease_win(control_plane, standby, cancelled) - cancelled < DURATION / 2
    await asyncio.sleep(2 * RETRY)
    renewals = [
        w
        for w in control_plane.server.faults.writes(field_manager=leader.name, since=cancelled)
        if w.resource.startswith("leases")
    ]
    assert renewals == []
