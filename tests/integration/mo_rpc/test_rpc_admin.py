"""``RpcAdminProvider`` against a fake MatrixOne on loopback: every ``MOAdmin`` call, HAKeeper
discovery, and the ways a real cluster fails (not bootstrapped, no HAKeeper, unknown
store, silence, refusal, a connection closed mid-frame, garbage)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from mo_operator.matrixone.admin import (
    AdminError,
    CNLoad,
    HAKeeperPhase,
    NodeState,
    StoreNotFound,
    WorkState,
)
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc import query_pb as q
from mo_operator.matrixone.rpc.errors import ConnectionLost, NoHAKeeper, ProtocolError, Unreachable
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.testing import free_port

from .fake_mo import FakeCluster, FakeQueryService, start_cluster

TIMEOUT = 0.5


@pytest.fixture
async def cluster() -> AsyncIterator[FakeCluster]:
    c = await start_cluster()
    yield c
    await c.stop()


@pytest.fixture
async def provider() -> AsyncIterator[RpcAdminProvider]:
    p = RpcAdminProvider(timeout=TIMEOUT, connect_timeout=0.2)
    yield p
    await p.close()


def cause_chain(e: BaseException) -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    current: BaseException | None = e
    while current is not None:
        found.append(type(current))
        current = current.__cause__
    return found


# ------------------------------------------------------------------ the happy paths
async def test_hakeeper_state(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    await cluster.add_cn("cn-b", FakeQueryService([]), state=1, labels=pb.labels_to_pb({"role": ("ap",)}))
    await cluster.add_cn("cn-a", FakeQueryService([]), work_state=2)
    state = await provider.admin(cluster.discovery.address).hakeeper_state()

    assert state.phase is HAKeeperPhase.RUNNING and state.bootstrapped and state.tick == 1000
    assert [s.uuid for s in state.log_stores] == ["log-0", "log-1", "log-2"]
    assert state.up_log_uuids() == {"log-0", "log-1", "log-2"}
    (tn,) = state.tn_stores
    assert (tn.uuid, tn.lock_service_address, tn.logtail_server_address) == (
        "tn-0",
        "tn-0:6003",
        "tn-0:32003",
    )
    a, b = state.cn_stores
    assert (a.uuid, a.work_state, a.state) == ("cn-a", WorkState.DRAINING, NodeState.NORMAL)
    assert (b.uuid, b.work_state, b.state, b.labels) == (
        "cn-b",
        WorkState.WORKING,
        NodeState.TIMEOUT,
        {"role": ("ap",)},
    )
    assert b.sql_address == "cn-b:6001" and b.query_address == cluster.cns["cn-b"].address
    assert state.up_cn_uuids() == {"cn-a"}

    # discovery asked the discovery address for shard 0, leaving out hard-down replicas ...
    (shard_query,) = [r for r in cluster.discovery.received if r.method == pb.Method.GET_SHARD_INFO]
    assert shard_query.log_request == pb.LogRequest(shard_id=0, exclude_hard_down_replica_addresses=True)
    # ... then asked the leader (replica 2, the second store) whether it is the HAKeeper, and kept it
    assert cluster.hakeeper.methods() == ["CHECK_HAKEEPER", "GET_CLUSTER_STATE", "GET_CLUSTER_DETAILS"]
    assert cluster.logs[2].received == []
    for server in cluster.logs:
        assert server.frame_errors == []


async def test_connection_is_kept_across_calls(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    for _ in range(3):
        await admin.hakeeper_state()
    assert cluster.hakeeper.connections == 1
    assert cluster.hakeeper.methods().count("CHECK_HAKEEPER") == 1


async def test_leader_that_is_not_the_hakeeper_is_skipped(
    cluster: FakeCluster, provider: RpcAdminProvider
) -> None:
    cluster.publish_shard(leader=3)  # the third store leads but does not host the HAKeeper
    await provider.admin(cluster.discovery.address).hakeeper_state()
    assert cluster.logs[2].methods() == ["CHECK_HAKEEPER"]
    assert cluster.logs[0].methods() == ["GET_SHARD_INFO", "CHECK_HAKEEPER"]  # then replica 1, then 2
    assert cluster.hakeeper.methods()[0] == "CHECK_HAKEEPER"


async def test_not_bootstrapped(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    cluster.model.phase = 1
    cluster.model.tick = 0
    state = await provider.admin(cluster.discovery.address).hakeeper_state()
    assert state.phase is HAKeeperPhase.BOOTSTRAPPING and not state.bootstrapped and state.tick == 0


async def test_concurrent_calls_share_one_connection_and_get_their_own_answers(
    cluster: FakeCluster, provider: RpcAdminProvider
) -> None:
    await cluster.add_cn("cn-1", FakeQueryService([]))
    admin = provider.admin(cluster.discovery.address)
    await admin.hakeeper_state()
    # answer CLUSTER_STATE requests late, so answers come back in another order than asked
    cluster.hakeeper.delay = lambda r: 0.1 if getattr(r, "method", 0) == pb.Method.GET_CLUSTER_STATE else 0.0
    results = await asyncio.gather(
        admin.hakeeper_state(),
        admin.set_cn_labels("cn-1", {"a": ("1",)}),
        admin.hakeeper_state(),
        admin.set_cn_work_state("cn-1", WorkState.DRAINING),
    )
    assert results[0].tick == results[2].tick == 1000
    assert cluster.hakeeper.connections == 1
    assert cluster.model.cn_stores["cn-1"].work_state == 2


# ---------------------------------------------------------------------- CN state
async def test_set_cn_work_state_and_labels(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    await cluster.add_cn("cn-1", FakeQueryService([]), labels=pb.labels_to_pb({"old": ("x",)}))
    admin = provider.admin(cluster.discovery.address)

    await admin.set_cn_work_state("cn-1", WorkState.DRAINING)
    patch = cluster.hakeeper.received[-1]
    assert patch.method == pb.Method.PATCH_CN_STORE
    assert patch.cn_state_label == pb.CNStateLabel(uuid="cn-1", state=2)
    cn = (await admin.hakeeper_state()).cn("cn-1")
    assert cn is not None and cn.work_state is WorkState.DRAINING and cn.labels == {"old": ("x",)}

    await admin.set_cn_work_state("cn-1", WorkState.WORKING, {"role": ("tp", "ap")})
    cn = (await admin.hakeeper_state()).cn("cn-1")
    assert cn is not None and cn.work_state is WorkState.WORKING and cn.labels == {"role": ("tp", "ap")}

    # an empty map does not clear labels in PATCH_CN_STORE: the adapter follows with UPDATE_CN_LABEL
    await admin.set_cn_work_state("cn-1", WorkState.DRAINING, {})
    assert cluster.hakeeper.methods()[-2:] == ["PATCH_CN_STORE", "UPDATE_CN_LABEL"]
    cn = (await admin.hakeeper_state()).cn("cn-1")
    assert cn is not None and cn.work_state is WorkState.DRAINING and cn.labels == {}

    await admin.set_cn_labels("cn-1", {"k": ("v",)})
    update = cluster.hakeeper.received[-1]
    assert update.method == pb.Method.UPDATE_CN_LABEL
    assert update.cn_store_label == pb.CNStoreLabel(uuid="cn-1", labels={"k": pb.LabelList(("v",))})
    cn = (await admin.hakeeper_state()).cn("cn-1")
    assert cn is not None and cn.labels == {"k": ("v",)} and cn.work_state is WorkState.DRAINING

    with pytest.raises(AdminError, match="Unknown"):
        await admin.set_cn_work_state("cn-1", WorkState.UNKNOWN)


async def test_unknown_store(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    with pytest.raises(StoreNotFound, match=r"CN \[ghost\] does not exist"):
        await admin.set_cn_work_state("ghost", WorkState.DRAINING)
    with pytest.raises(StoreNotFound):
        await admin.set_cn_labels("ghost", {"a": ("b",)})
    with pytest.raises(StoreNotFound):
        await admin.cn_load("ghost")
    # an error answer leaves the connection in use
    assert cluster.hakeeper.connections == 1


async def test_delete_cn_store(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    await cluster.add_cn("cn-1", FakeQueryService([]))
    admin = provider.admin(cluster.discovery.address)
    await admin.delete_cn_store("cn-1")
    assert cluster.hakeeper.received[-1].delete_cn_store == pb.DeleteCNStore("cn-1")
    assert (await admin.hakeeper_state()).cn("cn-1") is None
    await admin.delete_cn_store("cn-1")  # HAKeeper answers success for a store it does not know


# ----------------------------------------------------------------------- CN load
async def test_cn_load(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    sessions = [
        q.Session(account="acc1", from_proxy=True),
        q.Session(account="acc2", from_proxy=True),
        q.Session(account="sys"),  # the operator's or an internal session: not counted
    ]
    service = FakeQueryService(sessions, pipelines=4, replicas=2)
    await cluster.add_cn("cn-1", service)
    load = await provider.admin(cluster.discovery.address).cn_load("cn-1")
    assert load == CNLoad(sessions=2, pipelines=4, replicas=2)
    assert service.methods() == ["GET_PIPELINE_INFO", "SHOW_PROCESS_LIST", "GET_REPLICA_COUNT"]
    show = service.received[1]
    assert show.show_process_list == q.ShowProcessListRequest(sys_tenant=True)
    assert service.frame_errors == []
    # one short-lived connection per call
    await provider.admin(cluster.discovery.address).cn_load("cn-1")
    assert service.connections == 2


async def test_cn_load_of_an_older_matrixone(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    # before 1.1.2: no GetPipelineInfo, no FromProxy (count non-sys tenants); before 2.0: no replicas
    sessions = [q.Session(account="acc"), q.Session(account="acc"), q.Session(account="sys"), q.Session()]
    await cluster.add_cn("cn-1", FakeQueryService(sessions, pipelines=None, replicas=None))
    load = await provider.admin(cluster.discovery.address).cn_load("cn-1")
    assert load == CNLoad(sessions=2, pipelines=0, replicas=0)
    assert load.idle is False


async def test_cn_load_when_the_cn_is_gone(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    service = FakeQueryService([])
    await cluster.add_cn("cn-1", service)
    await service.stop()
    with pytest.raises(AdminError, match="cn_load cn-1") as e:
        await provider.admin(cluster.discovery.address).cn_load("cn-1")
    assert Unreachable in cause_chain(e.value)


# ------------------------------------------------------------------------ failures
async def test_no_hakeeper_yet(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    for s in cluster.logs:
        s.shard_info = None  # the HAKeeper shard is not in gossip: dragonboat ErrShardNotFound
    with pytest.raises(AdminError, match="does not host the HAKeeper") as e:
        await provider.admin(cluster.discovery.address).hakeeper_state()
    assert NoHAKeeper in cause_chain(e.value)

    cluster.publish_shard(leader=0)  # shard known, no leader elected
    with pytest.raises(AdminError, match="no HAKeeper replica with a leader"):
        await provider.admin(cluster.discovery.address).hakeeper_state()


async def test_no_store_says_it_is_the_hakeeper(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    cluster.hakeeper.hakeeper = False
    with pytest.raises(AdminError, match="no HAKeeper among") as e:
        await provider.admin(cluster.discovery.address).hakeeper_state()
    assert "is not the HAKeeper" in str(e.value)
    for s in cluster.logs:
        assert s.methods()[-1] == "CHECK_HAKEEPER"


async def test_connection_refused() -> None:
    provider = RpcAdminProvider(timeout=TIMEOUT, connect_timeout=0.2)
    start = time.monotonic()
    with pytest.raises(AdminError, match="cannot connect") as e:
        await provider.admin(f"127.0.0.1:{free_port()}").hakeeper_state()
    assert time.monotonic() - start < TIMEOUT
    assert Unreachable in cause_chain(e.value)
    await provider.close()


async def test_unresolvable_address(provider: RpcAdminProvider) -> None:
    with pytest.raises(AdminError, match="not a host:port"):
        await provider.admin("no-port-here").hakeeper_state()


async def test_discovery_that_never_answers(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    cluster.discovery.behaviour = "silent"
    start = time.monotonic()
    with pytest.raises(AdminError, match=f"no answer within {TIMEOUT:g}s"):
        await provider.admin(cluster.discovery.address).hakeeper_state()
    elapsed = time.monotonic() - start
    assert TIMEOUT * 0.9 <= elapsed < TIMEOUT + 0.3


async def test_hakeeper_that_stops_answering(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    await admin.hakeeper_state()
    cluster.hakeeper.behaviour = "silent"
    start = time.monotonic()
    with pytest.raises(AdminError, match="no answer within"):
        await admin.set_cn_labels("cn-1", {})
    assert time.monotonic() - start < TIMEOUT + 0.3
    # the silent connection was given up: the next call finds the HAKeeper again
    cluster.hakeeper.behaviour = "answer"
    await admin.hakeeper_state()
    assert cluster.hakeeper.connections == 2


def is_state_query(request: object) -> bool:
    return getattr(request, "method", None) == pb.Method.GET_CLUSTER_STATE


async def test_hakeeper_that_closes_mid_frame(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    await admin.hakeeper_state()
    cluster.hakeeper.behaviour = "half"
    cluster.hakeeper.affects = is_state_query
    start = time.monotonic()
    with pytest.raises(AdminError, match="closed the connection mid-frame") as e:
        await admin.hakeeper_state()
    assert ConnectionLost in cause_chain(e.value)
    assert time.monotonic() - start < TIMEOUT
    # the kept connection failed, so the adapter found the HAKeeper again once, and gave up
    assert cluster.hakeeper.methods()[-3:] == ["GET_CLUSTER_STATE", "CHECK_HAKEEPER", "GET_CLUSTER_STATE"]
    cluster.hakeeper.behaviour = "answer"
    assert (await admin.hakeeper_state()).bootstrapped


async def test_closes_mid_frame_during_discovery(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    cluster.discovery.behaviour = "half"
    with pytest.raises(AdminError, match="closed the connection mid-frame") as e:
        await provider.admin(cluster.discovery.address).hakeeper_state()
    assert ConnectionLost in cause_chain(e.value)
    cluster.discovery.behaviour = "answer"
    cluster.hakeeper.behaviour = "half"  # now the HAKeeper's CHECK_HAKEEPER answer breaks off
    with pytest.raises(AdminError, match="mid-frame") as e:
        await provider.admin(cluster.discovery.address).hakeeper_state()
    assert NoHAKeeper in cause_chain(e.value)


async def test_garbage_from_the_hakeeper(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    cluster.hakeeper.affects = is_state_query
    cluster.hakeeper.behaviour = "corrupt"
    with pytest.raises(AdminError, match="checksum mismatch") as e:
        await admin.hakeeper_state()
    assert ProtocolError in cause_chain(e.value)
    cluster.hakeeper.behaviour = "compressed"
    with pytest.raises(AdminError, match="compressed") as e:
        await admin.hakeeper_state()
    assert ProtocolError in cause_chain(e.value)
    cluster.hakeeper.behaviour = "answer"
    assert (await admin.hakeeper_state()).bootstrapped


async def test_kept_connection_closed_by_the_server_is_replaced(
    cluster: FakeCluster, provider: RpcAdminProvider
) -> None:
    admin = provider.admin(cluster.discovery.address)
    await admin.hakeeper_state()
    cluster.hakeeper.drop_connections()  # e.g. the log store restarted
    await asyncio.sleep(0.05)
    assert (await admin.hakeeper_state()).bootstrapped
    assert cluster.hakeeper.connections == 2


async def test_hakeeper_that_moved(cluster: FakeCluster, provider: RpcAdminProvider) -> None:
    admin = provider.admin(cluster.discovery.address)
    await admin.hakeeper_state()
    # the HAKeeper replica moves to the third store, which now leads the shard
    cluster.logs[1].hakeeper = False
    cluster.logs[2].hakeeper = True
    cluster.publish_shard(leader=3)
    assert (await admin.hakeeper_state()).bootstrapped
    assert cluster.logs[1].methods()[-1] == "GET_CLUSTER_STATE"  # answered "no HAKeeper here"
    assert cluster.logs[2].methods()[:2] == ["CHECK_HAKEEPER", "GET_CLUSTER_STATE"]


async def test_close_closes_connections(cluster: FakeCluster) -> None:
    provider = RpcAdminProvider(timeout=TIMEOUT)
    await provider.admin(cluster.discovery.address).hakeeper_state()
    await provider.close()
    await asyncio.sleep(0.05)
    assert cluster.hakeeper._writers == set()
