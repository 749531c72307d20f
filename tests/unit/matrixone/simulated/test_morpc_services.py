"""The simulated MatrixOne's morpc servers answer the operator's client from the model,
as MatrixOne's handlers answer: while the HAKeeper answers; ``StoreNotFound`` for a CN
it does not know; the TN lock service as the lock table allocator does. Every call
here goes over loopback TCP, through the product's client."""

from __future__ import annotations

import pytest

from mo_devkit.simulated.lockservice import BindStatus
from mo_devkit.simulated.rpc.server import Call
from mo_operator.matrixone.admin import AdminError, CNLoad, HAKeeperPhase, StoreNotFound, WorkState

from .factories import World, cluster
from .served import DISCOVERY, served


async def test_calls_fail_until_the_hakeeper_answers() -> None:
    world = World()
    cluster(world)
    world.remove("mo-log-2")
    world.step()
    async with served(world) as s:
        with pytest.raises(AdminError, match=r"knows no HAKeeper|does not host"):
            await s.provider.admin(DISCOVERY).hakeeper_state()
        with pytest.raises(AdminError, match="Name or service not known"):
            await s.provider.admin("mo-log-discovery.elsewhere.svc:32001").hakeeper_state()


async def test_hakeeper_state_lists_every_store_with_its_addresses() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        state = await s.provider.admin(DISCOVERY).hakeeper_state()
    assert state.phase is HAKeeperPhase.RUNNING and state.bootstrapped
    assert len(state.up_log_uuids()) == 3
    assert state.up_tn_uuids() == {world.uuid("mo-dn-0")}
    assert state.up_cn_uuids() == {world.uuid("mo-tp-cn-0"), world.uuid("mo-tp-cn-1")}
    cn = state.cn(world.uuid("mo-tp-cn-0"))
    assert cn is not None and cn.work_state is WorkState.WORKING
    assert cn.sql_address.endswith(":6001") and cn.query_address.endswith(":6004")
    (tn,) = state.tn_stores
    assert tn.lock_service_address == "mo-dn-0.mo-dn-headless.ns.svc:6003"


async def test_discovery_goes_through_the_service_then_keeps_one_hakeeper_connection() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        for _ in range(3):
            await admin.hakeeper_state()
        log_calls = [c for c in s.network.calls if c.service == "log"]
        assert [c.method for c in log_calls][:2] == ["GET_SHARD_INFO", "CHECK_HAKEEPER"]
        assert [c.method for c in log_calls].count("CHECK_HAKEEPER") == 1, "the connection is kept"
        shard_query = log_calls[0].request
        assert (
            shard_query.log_request.shard_id == 0
            and shard_query.log_request.exclude_hard_down_replica_addresses
        )
        assert s.network.journal.frame_errors == []


async def test_drain_over_morpc_moves_sessions_and_journals_each_request() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        uuid = world.uuid("mo-tp-cn-0")
        world.model.set_sessions(uuid, 4, world.now)
        await admin.set_cn_work_state(uuid, WorkState.DRAINING, {"role": ("tp",)})
        assert s.changes, "a change makes the simulation publish new verdicts"
        assert await admin.cn_load(uuid) == CNLoad(4)
        await s.step(world.settings.drain_seconds)
        assert (await admin.cn_load(uuid)).idle
        cn = (await admin.hakeeper_state()).cn(uuid)
        assert cn is not None and cn.work_state is WorkState.DRAINING and cn.labels == {"role": ("tp",)}
        await admin.set_cn_labels(uuid, {"k": ("a", "b")})
        await admin.delete_cn_store(uuid)
        assert (await admin.hakeeper_state()).cn(uuid) is None
        about = [(c.service, c.method, c.work_state) for c in s.network.calls if c.uuid == uuid]
    assert about == [
        ("log", "PATCH_CN_STORE", WorkState.DRAINING),
        ("query", "GetPipelineInfo", None),
        ("query", "ShowProcessList", None),
        ("query", "GetReplicaCount", None),
        ("query", "GetPipelineInfo", None),
        ("query", "ShowProcessList", None),
        ("query", "GetReplicaCount", None),
        ("log", "UPDATE_CN_LABEL", None),
        ("log", "DELETE_CN_STORE", None),
    ]


async def test_unknown_cn_is_store_not_found_and_deleting_it_succeeds() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        for call in (
            admin.cn_load("nope"),
            admin.set_cn_work_state("nope", WorkState.WORKING),
            admin.set_cn_labels("nope", {}),
        ):
            with pytest.raises(StoreNotFound, match="does not exist"):
                await call
        await admin.delete_cn_store("nope")  # HAKeeper answers success, as store.go does
        with pytest.raises(AdminError, match="Unknown"):
            await admin.set_cn_work_state(world.uuid("mo-tp-cn-0"), WorkState.UNKNOWN)


async def test_a_lost_majority_stops_answers_and_a_stopped_store_refuses() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        world.remove("mo-log-0")
        world.remove("mo-log-1")
        await s.step()
        with pytest.raises(AdminError):
            await admin.hakeeper_state()
        assert s.network.server("mo-log-0.mo-log-headless.ns.svc:32001") is None, "its process stopped"


# -------------------------------------------------------------------- lock service
async def test_an_unmarked_cn_with_no_transaction_cannot_restart_yet() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin, uuid = s.provider.admin(DISCOVERY), world.uuid("mo-tp-cn-0")
        assert not await admin.can_restart_cn(uuid)
        assert await admin.remain_txn_count(uuid) == -1, "none left, but not marked restartable"
        lock_calls = [c for c in s.network.calls if c.service == "lock"]
        assert lock_calls[0].address == "mo-dn-0.mo-dn-headless.ns.svc:6003"


async def test_a_marked_cn_may_restart_once_its_transactions_ended() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world, txn_seconds=4.0) as s:
        admin, uuid = s.provider.admin(DISCOVERY), world.uuid("mo-tp-cn-0")
        s.locks.set_transactions(uuid, 8, world.now)
        assert await admin.set_restart_cn(uuid)
        await s.step(2.0)
        assert await admin.remain_txn_count(uuid) == 4 and not await admin.can_restart_cn(uuid)
        await s.step(2.0)
        assert await admin.can_restart_cn(uuid) and await admin.remain_txn_count(uuid) == 0
        found = s.locks.binding(uuid)
        assert found is not None and found.status is BindStatus.SERVICE_CAN_RESTART
        assert found.restartable_at == world.now
        methods = [c.method for c in s.network.calls if c.service == "lock"]
    assert methods[:3] == ["SetRestartService", "RemainTxnInService", "CanRestartService"]


async def test_transactions_end_only_on_a_marked_cn() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        uuid = world.uuid("mo-tp-cn-0")
        s.locks.set_transactions(uuid, 3, world.now)
        await s.step(60.0)
        assert await s.provider.admin(DISCOVERY).remain_txn_count(uuid) == 3


async def test_a_cn_the_tn_does_not_know_may_restart_as_the_allocator_answers() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        assert await admin.can_restart_cn("not-a-cn")
        assert await admin.set_restart_cn("not-a-cn")
        assert await admin.remain_txn_count("not-a-cn") == 0


async def test_a_forgotten_cn_loses_its_binding_and_comes_back_fresh() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        admin, uuid = s.provider.admin(DISCOVERY), world.uuid("mo-tp-cn-0")
        s.locks.set_transactions(uuid, 5, world.now)
        await admin.set_restart_cn(uuid)
        world.remove("mo-tp-cn-0")
        await s.step(1.0)
        await admin.delete_cn_store(uuid)
        await s.step(1.0)
        assert s.locks.binding(uuid) is None
        assert await admin.can_restart_cn(uuid), "unknown to the TN now"


async def test_without_a_tn_the_lock_service_is_gone() -> None:
    """HAKeeper still lists the TN (down), and its pod's name no longer resolves."""
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        world.remove("mo-dn-0")
        await s.step(10.0)
        with pytest.raises(AdminError, match=r"cannot connect to mo-dn-0\.mo-dn-headless\.ns\.svc:6003"):
            await s.provider.admin(DISCOVERY).can_restart_cn(world.uuid("mo-tp-cn-0"))


def test_a_call_names_what_it_asks() -> None:
    assert Call("log", "a:1", "PATCH_CN_STORE", "cn", WorkState.DRAINING) == Call(
        "log", "a:1", "PATCH_CN_STORE", "cn", WorkState.DRAINING, request="ignored in comparisons"
    )
