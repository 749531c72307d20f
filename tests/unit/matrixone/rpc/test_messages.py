"""MatrixOne's messages against bytes worked out by hand from ``proto/logservice.proto``,
``metadata.proto``, ``query.proto``, ``status.proto`` and ``moerr.proto`` (matrixone
7c27538f), the way gogo-protobuf writes them."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc import query_pb as q
from mo_operator.matrixone.rpc.codes import ErrorCode, labels_from_pb, labels_to_pb
from mo_operator.matrixone.rpc.pbmessage import Message, check_fields
from mo_operator.matrixone.rpc.protobuf import DecodeError

ALL_MESSAGES: list[type[Message]] = [
    pb.LabelList,
    pb.LogRequest,
    pb.CNStoreLabel,
    pb.CNWorkState,
    pb.CNStateLabel,
    pb.DeleteCNStore,
    pb.Request,
    pb.ReplicaInfo,
    pb.ShardInfoQueryResult,
    pb.LogStore,
    pb.TNStore,
    pb.CNStore,
    pb.ClusterDetails,
    pb.CheckerState,
    pb.LogResponse,
    pb.Response,
    q.ShowProcessListRequest,
    q.GetPipelineInfoRequest,
    q.GetReplicaCountRequest,
    q.Request,
    q.Session,
    q.ShowProcessListResponse,
    q.GetPipelineInfoResponse,
    q.GetReplicaCountResponse,
    q.Response,
    q.MOError,
]


def h(text: str) -> bytes:
    return bytes.fromhex(text)


@pytest.mark.parametrize("cls", ALL_MESSAGES)
def test_field_tables_name_real_attributes(cls: type[Message]) -> None:
    check_fields(cls)
    numbers = [f.number for f in cls.FIELDS]
    assert numbers == sorted(set(numbers)), "gogo writes fields in number order, once each"


def test_method_numbers_are_upstreams() -> None:
    # proto/logservice.proto enum MethodType; proto/query.proto enum CmdMethod
    used = [pb.MethodType[m] for m in ("CHECK_HAKEEPER", "GET_CLUSTER_DETAILS", "GET_SHARD_INFO")]
    used += [pb.MethodType[m] for m in ("GET_CLUSTER_STATE", "UPDATE_CN_LABEL", "UPDATE_CN_WORK_STATE")]
    used += [pb.MethodType[m] for m in ("PATCH_CN_STORE", "DELETE_CN_STORE")]
    assert [m.value for m in used] == [10, 11, 12, 14, 15, 16, 17, 18]
    methods = (q.CmdMethod.ShowProcessList, q.CmdMethod.GetPipelineInfo, q.CmdMethod.GetReplicaCount)
    assert [m.value for m in methods] == [1, 19, 24]


# ------------------------------------------------------------------ requests we send
GO_ZERO_TIME = "3a 0b 08 80 92 b8 c3 98 fe ff ff ff 01"
"""LogRequest.TS (7), a non-nullable stdtime: Go's zero time.Time is Seconds -62135596800,
a 10-byte varint; gogo writes it in every LogRequest, so every log service request has it."""
LOG_REQUEST = f"1a 0d {GO_ZERO_TIME}"


def test_check_hakeeper_request() -> None:
    # RequestID=1 (1:varint), Method=CHECK_HAKEEPER 10 (2:varint), LogRequest non-nullable (3)
    request = pb.Request(request_id=1, method=pb.MethodType.CHECK_HAKEEPER)
    assert request.encode() == h(f"08 01 10 0a {LOG_REQUEST}")


def test_get_shard_info_request() -> None:
    request = pb.Request(
        request_id=7,
        method=pb.MethodType.GET_SHARD_INFO,
        log_request=pb.LogRequest(shard_id=0, exclude_hard_down_replica_addresses=True),
    )
    # LogRequest{ShardID: 0 (left out), TS, ExcludeHardDownReplicaAddresses (9:varint, tag 0x48): true}
    assert request.encode() == h(f"08 07 10 0c 1a 0f {GO_ZERO_TIME} 48 01")


def test_patch_cn_store_request() -> None:
    label = pb.CNStateLabel(uuid="a", state=2, labels={"role": pb.LabelList(("tp",))})
    # UUID "a"; State Draining=2; Labels map entry {1: "role", 2: LabelList{1: "tp"}}
    entry = "0a 04 72 6f 6c 65 12 04 0a 02 74 70"
    assert label.encode() == h(f"0a 01 61 10 02 1a 0c {entry}")
    request = pb.Request(request_id=2, method=pb.MethodType.PATCH_CN_STORE, cn_state_label=label)
    # CNStateLabel is Request field 11: tag 11 << 3 | 2 = 0x5a
    assert request.encode() == h(f"08 02 10 11 {LOG_REQUEST} 5a 13 0a 01 61 10 02 1a 0c {entry}")


def test_labels_are_written_in_key_order_with_empty_values_kept() -> None:
    label = pb.CNStoreLabel(uuid="u", labels={"b": pb.LabelList(("x", "")), "a": pb.LabelList()})
    # entries: {1:"a", 2:{}} then {1:"b", 2:{1:"x", 1:""}}
    assert label.encode() == h("0a 01 75 1a 05 0a 01 61 12 00 1a 0a 0a 01 62 12 05 0a 01 78 0a 00")
    assert pb.CNStoreLabel.decode(label.encode()) == label


def test_delete_and_work_state_requests() -> None:
    deleted = pb.DeleteCNStore("x")
    delete = pb.Request(request_id=3, method=pb.MethodType.DELETE_CN_STORE, delete_cn_store=deleted)
    assert delete.encode() == h(f"08 03 10 12 {LOG_REQUEST} 62 03 0a 01 78")
    state = pb.Request(
        request_id=4, method=pb.MethodType.UPDATE_CN_WORK_STATE, cn_work_state=pb.CNWorkState("x", 1)
    )
    assert state.encode() == h(f"08 04 10 10 {LOG_REQUEST} 52 05 0a 01 78 10 01")


# Every non-nullable sub-request of query.Request, empty: 27 GetReplicaCount (da 01), 29
# GoMaxProcs (ea 01), 30, 31, 32, 33, 34, 36 CtlMoTableStats (a2 02), 40 (c2 02), 41 (ca 02)
ALWAYS = "da 01 00 ea 01 00 f2 01 00 fa 01 00 82 02 00 8a 02 00 92 02 00 a2 02 00 c2 02 00 ca 02 00"


def test_query_requests() -> None:
    show = q.Request(
        request_id=1,
        cmd_method=q.CmdMethod.ShowProcessList,
        show_process_list_request=q.ShowProcessListRequest(sys_tenant=True),
    )
    # 4: ShowProcessListRequest{SysTenant: true}, then the sub-requests gogo always writes
    assert show.encode() == h(f"08 01 10 01 22 02 10 01 {ALWAYS}")
    pipelines = q.Request(
        request_id=2,
        cmd_method=q.CmdMethod.GetPipelineInfo,
        get_pipeline_info_request=q.GetPipelineInfoRequest(),
    )
    # 22 (tag b2 01): an empty but present GetPipelineInfoRequest (the CN rejects a nil one)
    assert pipelines.encode() == h(f"08 02 10 13 b2 01 00 {ALWAYS}")
    replicas = q.Request(request_id=3, cmd_method=q.CmdMethod.GetReplicaCount)
    assert replicas.encode() == h(f"08 03 10 18 {ALWAYS}")


# ----------------------------------------------------------------- answers we read
def test_check_hakeeper_response_as_gogo_writes_it() -> None:
    # RequestID 1, Method 10, IsHAKeeper (5) true, LogResponse (6) always present
    response = pb.Response.decode(h("08 01 10 0a 28 01 32 00"))
    assert (response.request_id, response.method, response.is_ha_keeper) == (1, 10, True)
    assert response.error_code == 0 and response.cluster_details is None


def test_error_response() -> None:
    message = b"internal error: CN [x] does not exist"
    # ErrorCode 20101 = 157 * 128 + 5 -> varint 85 9d 01; ErrorMessage (4)
    data = h("08 05 10 11 18 85 9d 01 22") + bytes([len(message)]) + message + h("32 00")
    response = pb.Response.decode(data)
    assert response.error_code == ErrorCode.INTERNAL
    assert response.error_message == message.decode()


def test_shard_info_response() -> None:
    replica = "0a 02 6c 31 12 05 61 3a 33 32 31"  # ReplicaInfo{UUID "l1", ServiceAddress "a:321"}
    entry = f"08 02 12 0b {replica}"  # map<uint64, ReplicaInfo> entry {1: 2, 2: ...}
    # ShardInfo (10) {Replicas (2): entry, Epoch (3) 5, LeaderID (4) 2, Term (5) 9}
    shard = f"12 0f {entry} 18 05 20 02 28 09"
    response = pb.Response.decode(h(f"08 01 10 0c 32 00 52 17 {shard}"))
    assert response.shard_info == pb.ShardInfoQueryResult(
        shard_id=0, replicas={2: pb.ReplicaInfo("l1", "a:321")}, epoch=5, leader_id=2, term=9
    )


def test_cn_store_with_fields_we_do_not_declare() -> None:
    # CNStore: UUID "c", Role AP (6)=1, Tick (7)=300, State (8) Timeout=1,
    # Labels (9) {"k": ["v"]}, WorkState (10) Draining=2, QueryAddress (11) "q:1",
    # ConfigData (12) {...}, Resource (13) {CPUTotal 4}, UpTime (14) = -1, CommitID (16) "abc"
    data = h(
        "0a 01 63 30 01 38 ac 02 40 01 4a 0a 0a 01 6b 12 05 0a 01 76 0a 00"
        " 50 02 5a 03 71 3a 31 62 02 0a 00 6a 02 08 04"
        " 70 ff ff ff ff ff ff ff ff ff 01 82 01 03 61 62 63"
    )
    store = pb.CNStore.decode(data)
    assert store == pb.CNStore(
        uuid="c",
        role=1,
        tick=300,
        state=1,
        labels={"k": pb.LabelList(("v", ""))},
        work_state=2,
        query_address="q:1",
        up_time=-1,
    )


def test_checker_state_skips_the_rest_of_the_state() -> None:
    # Tick (1) 42; ClusterInfo (2), TNState (3), LogState (4), CNState (5) nested; State (6) Running=4;
    # NextIDByKey (10) map<string,uint64>; LogServiceRecoveryCompleted (18)
    data = h("08 2a 12 00 1a 00 22 04 12 02 0a 00 2a 00 30 04 52 05 0a 01 6b 10 07 90 01 01")
    assert pb.CheckerState.decode(data) == pb.CheckerState(tick=42, state=4)


def test_cluster_details() -> None:
    details = pb.ClusterDetails(
        tn_stores=(pb.TNStore("t", "t:1", 5, 0, "t:2", "t:3"),),
        cn_stores=(pb.CNStore("c1", work_state=1), pb.CNStore("c2", state=1)),
        log_stores=(pb.LogStore("l", "l:1", 9, 0),),
    )
    data = details.encode()
    # TNStores (1), CNStores (2), LogStores (3), repeated: one field per element
    assert data.startswith(h("0a 14 0a 01 74 12 03 74 3a 31 18 05 32 03 74 3a 32 3a 03 74 3a 33 12"))
    assert pb.ClusterDetails.decode(data) == details


def test_query_responses() -> None:
    # Sessions: {Account (4) "acc", FromProxy (19, tag 98 01) true}, {Account "sys"}
    sessions = "0a 08 22 03 61 63 63 98 01 01 0a 05 22 03 73 79 73"
    response = q.Response.decode(h(f"08 01 10 01 22 11 {sessions} da 01 00"))
    assert response.show_process_list_response == q.ShowProcessListResponse(
        (q.Session(account="acc", from_proxy=True), q.Session(account="sys"))
    )
    # GetPipelineInfoResponse (22) {Count: 3}; GetReplicaCount (27) {Count: -1 as int64}
    counts = q.Response.decode(h("08 02 10 13 b2 01 02 08 03 da 01 0b 08 ff ff ff ff ff ff ff ff ff 01"))
    assert counts.get_pipeline_info_response == q.GetPipelineInfoResponse(3)
    assert counts.get_replica_count == q.GetReplicaCountResponse(-1)


def test_moerror() -> None:
    # moerr.Error{code 20105 (NotSupported, varint 89 9d 01), mysql_code 1105 (d1 08), message "19 not support", sql_state "HY000"}
    data = h("08 89 9d 01 10 d1 08 1a 0e 31 39 20 6e 6f 74 20 73 75 70 70 6f 72 74 22 05 48 59 30 30 30")
    assert q.MOError.decode(data) == q.MOError(20105, 1105, "19 not support", "HY000")


# ---------------------------------------------------------------------- malformed
@pytest.mark.parametrize(
    ("cls", "wire", "message"),
    [
        (pb.Response, "08", "truncated varint"),
        (pb.Response, "4a 05 0a 01", "runs past the end"),  # ClusterDetails cut short
        (pb.Response, "4a 02 0a 05", "runs past the end"),  # inner TNStore longer than its parent
        (pb.Response, "20 01", "wire type 0, expected 2"),  # ErrorMessage as a varint
        (pb.Response, "0a 00", "wire type 2, expected 0"),  # RequestID as bytes
        (pb.ShardInfoQueryResult, "12 03 08 01 12", "truncated varint"),  # map entry cut short
        (q.Response, "22 02 0a 05", "runs past the end"),
    ],
)
def test_malformed_messages(cls: type[Message], wire: str, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        cls.decode(h(wire))


labels = st.dictionaries(
    st.text(max_size=5), st.lists(st.text(max_size=5), max_size=3).map(tuple), max_size=3
)


@given(
    uuid=st.text(max_size=10),
    state=st.integers(min_value=0, max_value=3),
    tick=st.integers(min_value=0, max_value=2**64 - 1),
    up_time=st.integers(min_value=-(2**63), max_value=2**63 - 1),
    label_map=labels,
)
def test_round_trips(
    uuid: str, state: int, tick: int, up_time: int, label_map: dict[str, tuple[str, ...]]
) -> None:
    store = pb.CNStore(
        uuid=uuid, tick=tick, work_state=state, up_time=up_time, labels=labels_to_pb(label_map)
    )
    details = pb.ClusterDetails(cn_stores=(store, store))
    response = pb.Response(
        request_id=tick, method=11, cluster_details=details, checker_state=pb.CheckerState(tick=tick, state=4)
    )
    assert pb.Response.decode(response.encode()) == response
    assert labels_from_pb(pb.CNStore.decode(store.encode()).labels) == label_map


@settings(max_examples=300)
@given(st.binary(max_size=80))
def test_garbage_messages_raise_decode_error_only(data: bytes) -> None:
    for cls in (pb.Response, pb.ClusterDetails, q.Response, pb.ShardInfoQueryResult):
        with contextlib.suppress(DecodeError):
            cls.decode(data)


def test_checker_state_carries_each_log_shards_members() -> None:
    # LogState (4) { Shards (1) map<uint64, LogShardInfo> { 1: { ShardID 1, Replicas (2)
    # map<uint64, string> { 5: "a" }, Epoch (3) 3 } } }, as gogo writes it
    data = h("22 11 0a 0f 08 01 12 0b 08 01 12 05 08 05 12 01 61 18 03")
    shard = pb.LogShardInfo(shard_id=1, replicas={5: "a"}, epoch=3)
    assert pb.CheckerState.decode(data) == pb.CheckerState(log_state=pb.LogState(shards={1: shard}))
    assert pb.CheckerState(log_state=pb.LogState(shards={1: shard})).encode() == data
