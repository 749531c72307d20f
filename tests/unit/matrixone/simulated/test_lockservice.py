"""The simulated TN lock service: answers as MatrixOne's lock table allocator does, lets a
marked CN's transactions end over time, and is reached through ``MOAdmin`` in process
and over the remote admin server alike."""

from __future__ import annotations

import pytest

from mo_operator.matrixone import names
from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.simulated.admin import SimulatedAdminProvider
from mo_operator.matrixone.simulated.lockservice import BindStatus
from mo_operator.matrixone.simulated.remote import AdminServer, RemoteAdminProvider
from mo_operator.matrixone.simulated.resolve import resolve_address

from .factories import NS, World, cluster

ADDRESS = names.discovery_address("mo", NS)


def _scene(txn_seconds: float = 4.0) -> tuple[World, SimulatedAdminProvider, str]:
    world = World()
    cluster(world)
    world.step()
    provider = SimulatedAdminProvider(
        world.model, lambda address: resolve_address(address, "default", world.snapshot()), lambda: world.now
    )
    provider.locks.txn_seconds = txn_seconds
    return world, provider, world.uuid("mo-tp-cn-0")


def _advance(world: World, provider: SimulatedAdminProvider, seconds: float) -> None:
    world.step(seconds)
    provider.locks.advance(world.now)


async def test_an_unmarked_cn_with_no_transaction_cannot_restart_yet() -> None:
    _, provider, uuid = _scene()
    admin = provider.admin(ADDRESS)
    assert not await admin.can_restart_cn(uuid)
    assert await admin.remain_txn_count(uuid) == -1, "none left, but not marked restartable"


async def test_a_marked_cn_may_restart_once_its_transactions_ended() -> None:
    world, provider, uuid = _scene(txn_seconds=4.0)
    admin = provider.admin(ADDRESS)
    provider.locks.set_transactions(uuid, 8, world.now)
    assert await admin.set_restart_cn(uuid)
    _advance(world, provider, 2.0)
    assert await admin.remain_txn_count(uuid) == 4 and not await admin.can_restart_cn(uuid)
    _advance(world, provider, 2.0)
    assert await admin.can_restart_cn(uuid) and await admin.remain_txn_count(uuid) == 0
    found = provider.locks.binding(uuid)
    assert found is not None and found.status is BindStatus.SERVICE_CAN_RESTART
    assert found.restartable_at == world.now


async def test_transactions_end_only_on_a_marked_cn() -> None:
    world, provider, uuid = _scene()
    provider.locks.set_transactions(uuid, 3, world.now)
    _advance(world, provider, 60.0)
    assert await provider.admin(ADDRESS).remain_txn_count(uuid) == 3


async def test_a_cn_the_tn_does_not_know_may_restart_as_the_allocator_answers() -> None:
    _, provider, _ = _scene()
    admin = provider.admin(ADDRESS)
    assert await admin.can_restart_cn("not-a-cn")
    assert await admin.set_restart_cn("not-a-cn")
    assert await admin.remain_txn_count("not-a-cn") == 0


async def test_a_forgotten_cn_loses_its_binding_and_comes_back_fresh() -> None:
    world, provider, uuid = _scene()
    admin = provider.admin(ADDRESS)
    provider.locks.set_transactions(uuid, 5, world.now)
    await admin.set_restart_cn(uuid)
    world.remove("mo-tp-cn-0")
    _advance(world, provider, 1.0)
    await admin.delete_cn_store(uuid)
    _advance(world, provider, 1.0)
    assert provider.locks.binding(uuid) is None
    assert await admin.can_restart_cn(uuid), "unknown to the TN now"


async def test_without_a_tn_the_lock_service_does_not_answer() -> None:
    world, provider, uuid = _scene()
    world.remove("mo-dn-0")
    _advance(world, provider, 10.0)
    with pytest.raises(AdminError, match="no TN"):
        await provider.admin(ADDRESS).can_restart_cn(uuid)


async def test_the_remote_admin_carries_the_lock_calls() -> None:
    world, provider, uuid = _scene(txn_seconds=0.0)
    server = AdminServer(provider)
    await server.start()
    remote = RemoteAdminProvider(server.url, server.token)
    try:
        admin = remote.admin(ADDRESS)
        assert await admin.remain_txn_count(uuid) == -1
        assert await admin.set_restart_cn(uuid)
        provider.locks.advance(world.now)
        assert await admin.can_restart_cn(uuid)
        assert [c.method for c in provider.calls] == ["remain_txn_count", "set_restart_cn", "can_restart_cn"]
    finally:
        await remote.close()
        await server.stop()
