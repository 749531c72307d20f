"""``MOAdmin`` over the model: answers while the HAKeeper answers, AdminError otherwise."""

from __future__ import annotations

import pytest

from mo_operator.matrixone import names
from mo_operator.matrixone.admin import (
    AdminError,
    CNLoad,
    HAKeeperPhase,
    MOAdminProvider,
    StoreNotFound,
    WorkState,
)
from mo_operator.matrixone.simulated.admin import AdminCall, SimulatedAdminProvider
from mo_operator.matrixone.simulated.resolve import resolve_address

from .factories import NS, World, cluster

ADDRESS = names.discovery_address("mo", NS)


def _provider(world: World, changes: list[int] | None = None) -> SimulatedAdminProvider:
    return SimulatedAdminProvider(
        world.model,
        lambda address: resolve_address(address, "default", world.snapshot()),
        lambda: world.now,
        on_change=(lambda: changes.append(1)) if changes is not None else (lambda: None),
    )


def test_provider_satisfies_the_protocol_and_caches_per_address() -> None:
    world = World()
    provider: MOAdminProvider = _provider(world)
    assert provider.admin(ADDRESS) is provider.admin(ADDRESS)
    assert provider.admin(ADDRESS) is not provider.admin("other:1")


async def test_calls_fail_until_the_hakeeper_answers() -> None:
    world = World()
    cluster(world)
    world.remove("mo-log-2")
    world.step()
    admin = _provider(world).admin(ADDRESS)
    with pytest.raises(AdminError, match="timed out"):
        await admin.hakeeper_state()
    with pytest.raises(AdminError, match="cannot reach"):
        await _provider(world).admin("mo-log-discovery.elsewhere.svc:32001").hakeeper_state()


async def test_hakeeper_state_lists_every_store() -> None:
    world = World()
    cluster(world)
    world.step()
    state = await _provider(world).admin(ADDRESS).hakeeper_state()
    assert state.phase is HAKeeperPhase.RUNNING and state.bootstrapped
    assert len(state.up_log_uuids()) == 3
    assert state.up_tn_uuids() == {world.uuid("mo-dn-0")}
    assert state.up_cn_uuids() == {world.uuid("mo-tp-cn-0"), world.uuid("mo-tp-cn-1")}
    cn = state.cn(world.uuid("mo-tp-cn-0"))
    assert cn is not None and cn.work_state is WorkState.WORKING
    assert cn.sql_address.endswith(":6001")


async def test_drain_through_the_admin_interface() -> None:
    world = World()
    cluster(world)
    world.step()
    changes: list[int] = []
    provider = _provider(world, changes)
    admin = provider.admin(ADDRESS)
    uuid = world.uuid("mo-tp-cn-0")
    world.model.set_sessions(uuid, 4, world.now)
    await admin.set_cn_work_state(uuid, WorkState.DRAINING, {"role": ("tp",)})
    assert changes, "a change makes the simulation publish new verdicts"
    assert await admin.cn_load(uuid) == CNLoad(4)
    world.step(world.settings.drain_seconds)
    assert (await admin.cn_load(uuid)).idle
    state = await admin.hakeeper_state()
    cn = state.cn(uuid)
    assert cn is not None and cn.work_state is WorkState.DRAINING and cn.labels == {"role": ("tp",)}
    await admin.set_cn_labels(uuid, {"k": ("a", "b")})
    await admin.delete_cn_store(uuid)
    assert (await admin.hakeeper_state()).cn(uuid) is None
    assert [c.method for c in provider.calls] == [
        "set_cn_work_state",
        "cn_load",
        "cn_load",
        "hakeeper_state",
        "set_cn_labels",
        "delete_cn_store",
        "hakeeper_state",
    ]
    assert provider.calls[0] == AdminCall(ADDRESS, "set_cn_work_state", uuid, WorkState.DRAINING)


async def test_unknown_cn_and_unknown_state() -> None:
    world = World()
    cluster(world)
    world.step()
    admin = _provider(world).admin(ADDRESS)
    for call in (
        admin.cn_load("nope"),
        admin.set_cn_work_state("nope", WorkState.WORKING),
        admin.set_cn_labels("nope", {}),
        admin.delete_cn_store("nope"),
    ):
        with pytest.raises(StoreNotFound, match="does not exist"):
            await call
    with pytest.raises(AdminError, match="Unknown"):
        await admin.set_cn_work_state(world.uuid("mo-tp-cn-0"), WorkState.UNKNOWN)


async def test_a_lost_majority_stops_answers() -> None:
    world = World()
    cluster(world)
    world.step()
    admin = _provider(world).admin(ADDRESS)
    await admin.hakeeper_state()
    world.remove("mo-log-0")
    world.remove("mo-log-1")
    world.step()
    with pytest.raises(AdminError):
        await admin.hakeeper_state()
