"""The operator's morpc client (``RpcAdminProvider``) against the simulated MatrixOne's
servers on loopback: HAKeeper discovery, one kept connection, answers matched out of
order, and the ways a real cluster fails (not bootstrapped, refused, a name that does
not resolve, silence, a connection closed mid-frame, garbage, a store that restarted or
went away)."""

from __future__ import annotations

import asyncio
import time

import pytest

from mo_devkit.simulated.rpc.server import Faults
from mo_operator.matrixone.admin import AdminError, CNLoad, WorkState
from mo_operator.matrixone.rpc.errors import ConnectionLost, NoHAKeeper, ProtocolError, Unreachable
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from .factories import World, cluster, log_pod
from .served import DISCOVERY, served

TIMEOUT = 0.5


def cause_chain(e: BaseException) -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    current: BaseException | None = e
    while current is not None:
        found.append(type(current))
        current = current.__cause__
    return found


def method(name: str) -> object:
    return lambda call: call.method == name


def _world() -> World:
    world = World()
    cluster(world)
    world.step()
    return world


def _hakeeper_connections(s: object) -> int:
    """Connections the log stores took after discovery (the kept HAKeeper connection)."""
    network = s.network  # type: ignore[attr-defined]
    return sum(server.connections for _, server in network.servers.values() if server.service.kind == "log")


async def test_concurrent_calls_share_one_connection_and_get_their_own_answers() -> None:
    world = _world()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        before = _hakeeper_connections(s)
        uuid = world.uuid("mo-tp-cn-0")
        # answer CLUSTER_STATE late, so answers come back in another order than asked
        s.network.faults.delay = lambda call: 0.1 if call.method == "GET_CLUSTER_STATE" else 0.0
        results = await asyncio.gather(
            admin.hakeeper_state(),
            admin.set_cn_labels(uuid, {"a": ("1",)}),
            admin.hakeeper_state(),
            admin.set_cn_work_state(uuid, WorkState.DRAINING),
        )
        assert results[0].phase is results[2].phase
        assert _hakeeper_connections(s) == before, "no second connection"
        assert world.model.hakeepers[("ns", "mo")].cn(uuid).work_state is WorkState.DRAINING


async def test_an_empty_label_map_is_followed_by_update_cn_label() -> None:
    """``PatchCNStore`` keeps the labels on an empty map; the adapter clears them after."""
    world = _world()
    async with served(world) as s:
        admin, uuid = s.provider.admin(DISCOVERY), world.uuid("mo-tp-cn-0")
        await admin.set_cn_work_state(uuid, WorkState.WORKING, {"role": ("tp", "ap")})
        cn = (await admin.hakeeper_state()).cn(uuid)
        assert cn is not None and cn.labels == {"role": ("tp", "ap")}
        await admin.set_cn_work_state(uuid, WorkState.DRAINING, {})
        assert s.methods("log")[-2:] == ["PATCH_CN_STORE", "UPDATE_CN_LABEL"]
        cn = (await admin.hakeeper_state()).cn(uuid)
        assert cn is not None and cn.work_state is WorkState.DRAINING and cn.labels == {}


async def test_cn_load_of_an_older_matrixone_answering_not_supported() -> None:
    """Before 1.1.2 no GetPipelineInfo (and no FromProxy); before 2.0 no GetReplicaCount."""
    world = _world()
    async with served(world) as s:
        uuid = world.uuid("mo-tp-cn-0")
        world.model.set_sessions(uuid, 3, world.now)
        old = {"GetPipelineInfo", "GetReplicaCount"}
        s.network.faults.set("not_supported", lambda call: call.method in old)
        load = await s.provider.admin(DISCOVERY).cn_load(uuid)
        assert load == CNLoad(sessions=3, pipelines=0, replicas=0)


async def test_cn_load_when_the_cn_is_gone() -> None:
    world = _world()
    async with served(world) as s:
        world.edit("mo-tp-cn-0")["status"]["containerStatuses"][0]["state"] = {"waiting": {}}
        await s.step(0.1)  # HAKeeper still lists it; its process (and query service) stopped
        with pytest.raises(AdminError, match="cn_load") as e:
            await s.provider.admin(DISCOVERY).cn_load(world.uuid("mo-tp-cn-0"))
        assert Unreachable in cause_chain(e.value) and "Connection refused" in str(e.value)


async def test_no_hakeeper_before_the_bootstrap() -> None:
    world = World()
    cluster(world)
    world.remove("mo-log-2")  # an initial member missing: no bootstrap, no HAKeeper shard
    world.step()
    async with served(world) as s:
        with pytest.raises(AdminError, match="does not host the HAKeeper") as e:
            await s.provider.admin(DISCOVERY).hakeeper_state()
        assert NoHAKeeper in cause_chain(e.value)
        world.add(log_pod(2))
        await s.step()
        assert (await s.provider.admin(DISCOVERY).hakeeper_state()).bootstrapped


async def test_refused_then_back() -> None:
    world = _world()
    async with served(world, timeout=TIMEOUT) as s:
        s.network.faults.set("refuse")
        await s.network.settle()
        start = time.monotonic()
        with pytest.raises(AdminError, match="Connection refused") as e:
            await s.provider.admin(DISCOVERY).hakeeper_state()
        assert time.monotonic() - start < TIMEOUT * 2
        assert Unreachable in cause_chain(e.value)
        s.network.faults.clear()
        await s.network.settle()
        assert (await s.provider.admin(DISCOVERY).hakeeper_state()).bootstrapped


async def test_names_that_do_not_resolve_or_are_not_addresses() -> None:
    world = _world()
    async with served(world) as s:
        with pytest.raises(AdminError, match="Name or service not known"):
            await s.provider.admin("nowhere.ns.svc:32001").hakeeper_state()
        with pytest.raises(AdminError, match="not a host:port"):
            await s.provider.admin("no-port-here").hakeeper_state()


async def test_discovery_that_never_answers() -> None:
    world = _world()
    async with served(world, timeout=TIMEOUT) as s:
        s.network.faults.set("stall", method("GET_SHARD_INFO"))
        start = time.monotonic()
        with pytest.raises(AdminError, match=f"no answer within {TIMEOUT:g}s"):
            await s.provider.admin(DISCOVERY).hakeeper_state()
        assert TIMEOUT * 0.9 <= time.monotonic() - start < TIMEOUT + 0.3


async def test_hakeeper_that_stops_answering_is_given_up_and_found_again() -> None:
    world = _world()
    async with served(world, timeout=TIMEOUT) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        before = _hakeeper_connections(s)
        s.network.faults.set("stall", lambda call: call.method != "GET_SHARD_INFO")
        with pytest.raises(AdminError, match="no answer within"):
            await admin.set_cn_labels(world.uuid("mo-tp-cn-0"), {})
        s.network.faults.clear()
        await admin.hakeeper_state()
        assert _hakeeper_connections(s) > before + 1, "discovery and the HAKeeper connected again"


async def test_hakeeper_that_closes_mid_frame() -> None:
    world = _world()
    async with served(world, timeout=TIMEOUT) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        s.network.faults.set("half", method("GET_CLUSTER_STATE"))
        with pytest.raises(AdminError, match="closed the connection mid-frame") as e:
            await admin.hakeeper_state()
        assert ConnectionLost in cause_chain(e.value)
        # the kept connection failed: the adapter found the HAKeeper again once, and gave up
        assert s.methods("log")[-4:] == [
            "GET_CLUSTER_STATE",
            "GET_SHARD_INFO",
            "CHECK_HAKEEPER",
            "GET_CLUSTER_STATE",
        ]
        s.network.faults.clear()
        assert (await admin.hakeeper_state()).bootstrapped


@pytest.mark.parametrize(
    ("fault", "message"),
    [("corrupt", "checksum mismatch"), ("compressed", "compressed"), ("garbage", "checksum mismatch")],
)
async def test_garbage_from_the_hakeeper(fault: str, message: str) -> None:
    world = _world()
    async with served(world, timeout=TIMEOUT) as s:
        admin = s.provider.admin(DISCOVERY)
        s.network.faults.set(fault, method("GET_CLUSTER_STATE"))
        with pytest.raises(AdminError, match=message) as e:
            await admin.hakeeper_state()
        assert ProtocolError in cause_chain(e.value)
        s.network.faults.clear()
        assert (await admin.hakeeper_state()).bootstrapped


async def test_a_store_that_restarted_is_connected_to_again() -> None:
    world = _world()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        for i in range(3):  # every log store's process restarts: their connections drop
            world.edit(f"mo-log-{i}")["status"]["containerStatuses"][0]["restartCount"] = 1
        await s.step(0.1)
        await asyncio.sleep(0.05)
        assert (await admin.hakeeper_state()).bootstrapped


async def test_a_hakeeper_store_that_goes_away_is_replaced_by_another_replica() -> None:
    world = _world()
    async with served(world) as s:
        admin = s.provider.admin(DISCOVERY)
        await admin.hakeeper_state()
        first = next(c.address for c in s.network.calls if c.method == "GET_CLUSTER_STATE")
        pod = first.split(".")[0]
        world.edit(pod)["status"]["conditions"][0]["status"] = "False"  # it no longer serves
        await s.step(0.1)
        assert (await admin.hakeeper_state()).bootstrapped
        last = [c.address for c in s.network.calls if c.method == "GET_CLUSTER_STATE"][-1]
        assert last != first


async def test_close_closes_connections() -> None:
    world = _world()
    async with served(world) as s:
        provider = RpcAdminProvider(dialer=s.network.dialer, timeout=TIMEOUT)
        await provider.admin(DISCOVERY).hakeeper_state()
        await provider.close()
        await asyncio.sleep(0.05)
        assert all(not server._writers for _, server in s.network.servers.values())


def test_faults_are_named() -> None:
    with pytest.raises(ValueError, match="unknown fault"):
        Faults().set("explode")
