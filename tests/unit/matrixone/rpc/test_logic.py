"""The decisions around the wire: which log stores to try for the HAKeeper, how error
answers are read, which sessions count, and how HAKeeper's answers become our types."""

from __future__ import annotations

import pytest

from mo_operator.matrixone.admin import (
    AdminError,
    HAKeeperPhase,
    NodeState,
    StoreNotFound,
    WorkState,
)
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc.codes import labels_to_pb
from mo_operator.matrixone.rpc.connection import response_id, split_address
from mo_operator.matrixone.rpc.errors import NoHAKeeper, ServerError, Unreachable
from mo_operator.matrixone.rpc.hakeeper import hakeeper_candidates, raise_for_error
from mo_operator.matrixone.rpc.provider import RpcAdminProvider, hakeeper_state_from_pb
from mo_operator.matrixone.rpc.query import user_sessions
from mo_operator.matrixone.rpc.query_pb import Session


def shard(leader: int, **replicas: str) -> pb.ShardInfoQueryResult:
    return pb.ShardInfoQueryResult(
        replicas={int(k[1:]): pb.ReplicaInfo(f"uuid-{k}", v) for k, v in replicas.items()},
        epoch=1,
        leader_id=leader,
        term=1,
    )


def test_candidates_leader_first_then_by_replica_id() -> None:
    assert hakeeper_candidates(shard(2, r3="c:1", r1="a:1", r2="b:1")) == ["b:1", "a:1", "c:1"]


def test_candidates_skip_replicas_without_address_and_duplicates() -> None:
    assert hakeeper_candidates(shard(1, r1="a:1", r2="", r3="a:1", r4="d:1")) == ["a:1", "d:1"]


def test_candidates_without_leader_replica_fall_back_to_the_others() -> None:
    # GetShardInfo: the leader was filtered out (hard down): use the surviving replicas
    assert hakeeper_candidates(shard(9, r2="b:1", r1="a:1")) == ["a:1", "b:1"]


@pytest.mark.parametrize(
    "result",
    [
        pb.ShardInfoQueryResult(),  # the all-zero answer: shard unknown
        shard(0, r1="a:1"),  # no leader elected
        shard(1, r1="", r2="b:1"),  # the leader is known but not its address
    ],
)
def test_no_candidates(result: pb.ShardInfoQueryResult) -> None:
    assert hakeeper_candidates(result) == []


def test_error_answers() -> None:
    raise_for_error(pb.Response(), "x")
    with pytest.raises(StoreNotFound, match=r"CN \[u\] does not exist"):
        raise_for_error(
            pb.Response(error_code=20101, error_message="internal error: CN [u] does not exist"), "x"
        )
    with pytest.raises(NoHAKeeper):
        raise_for_error(pb.Response(error_code=20417, error_message="cannot locate ha keeper"), "x")
    with pytest.raises(NoHAKeeper):
        raise_for_error(pb.Response(error_code=20437), "GET_SHARD_INFO")  # dragonboat ErrShardNotFound
    with pytest.raises(ServerError, match="20429: DRAGONBOAT_TIMEOUT") as e:
        raise_for_error(pb.Response(error_code=20429), "x")
    assert e.value.code == 20429
    with pytest.raises(ServerError, match="99999: boom"):
        raise_for_error(pb.Response(error_code=99999, error_message="boom"), "x")


def test_session_counting() -> None:
    sessions = (
        Session(account="acc", from_proxy=True),
        Session(account="sys", from_proxy=True),
        Session(account="acc"),
        Session(account="other"),
        Session(account=""),
        Session(account="sys"),
    )
    assert user_sessions(sessions, session_source=True) == 2
    assert user_sessions(sessions, session_source=False) == 3


def test_hakeeper_state_from_answers() -> None:
    details = pb.ClusterDetails(
        tn_stores=(pb.TNStore("t", "t:1", 5, 0, logtail_server_address="t:2", lock_service_address="t:3"),),
        cn_stores=(
            pb.CNStore("c2", "c2:1", "c2:6001", tick=3, state=1, work_state=7),
            pb.CNStore("c1", query_address="c1:q", work_state=2, labels=labels_to_pb({"k": ("v",)})),
        ),
        log_stores=(pb.LogStore("l", "l:1", 9, 5),),
    )
    state = hakeeper_state_from_pb(pb.CheckerState(tick=77, state=4), details)
    assert state.phase is HAKeeperPhase.RUNNING and state.bootstrapped and state.tick == 77
    assert [s.uuid for s in state.cn_stores] == ["c1", "c2"]
    c1, c2 = state.cn_stores
    assert c1.work_state is WorkState.DRAINING and c1.labels == {"k": ("v",)} and c1.query_address == "c1:q"
    assert (
        c2.work_state is WorkState.UNKNOWN and c2.state is NodeState.TIMEOUT and c2.sql_address == "c2:6001"
    )
    assert state.log_stores[0].state is NodeState.TIMEOUT  # an unknown NodeState is not "up"
    assert (
        state.tn_stores[0].lock_service_address == "t:3"
        and state.tn_stores[0].logtail_server_address == "t:2"
    )
    assert hakeeper_state_from_pb(pb.CheckerState(), pb.ClusterDetails()).phase is HAKeeperPhase.CREATED
    with pytest.raises(AdminError, match="unknown HAKeeperState 9"):
        hakeeper_state_from_pb(pb.CheckerState(state=9), details)


def test_addresses() -> None:
    assert split_address("mo-log-discovery.ns.svc:32001") == ("mo-log-discovery.ns.svc", 32001)
    assert split_address("tcp://10.0.0.1:19000") == ("10.0.0.1", 19000)
    assert split_address("[::1]:32001") == ("::1", 32001)
    for bad in ("host", "host:", ":1", "host:0", "host:70000", "host:x"):
        with pytest.raises(Unreachable):
            split_address(bad)


def test_response_id() -> None:
    assert response_id(bytes.fromhex("08 2a 10 01")) == 42
    assert response_id(bytes.fromhex("10 01")) == 0


def test_provider_defaults_and_cache() -> None:
    provider = RpcAdminProvider()
    assert provider.timeout == 10.0
    assert provider.admin("a:1") is provider.admin("a:1")
    assert provider.admin("a:1") is not provider.admin("b:1")
    with pytest.raises(ValueError):
        RpcAdminProvider(timeout=0)
