"""The TN lock service messages against bytes worked out by hand from ``proto/lock.proto``
and the generated ``pkg/pb/lock/lock.pb.go`` (matrixone 7c27538f), the way gogo-protobuf
writes them: every non-nullable sub-request present, in field order."""

from __future__ import annotations

import asyncio

import pytest

from mo_operator.matrixone.rpc import lock_pb as lk
from mo_operator.matrixone.rpc import lockservice
from mo_operator.matrixone.rpc.errors import NotSupported, ServerError
from mo_operator.matrixone.rpc.frame import LENGTH_FIELD, decode_frame, encode_frame
from mo_operator.matrixone.rpc.pbmessage import Message, check_fields
from mo_operator.matrixone.rpc.query_pb import MOError


def h(text: str) -> bytes:
    return bytes.fromhex(text)


@pytest.mark.parametrize(
    "cls",
    [
        lk.Timestamp,
        lk.LockOptions,
        lk.LockRequest,
        lk.UnlockRequest,
        lk.GetWaitingListRequest,
        lk.SetRestartServiceRequest,
        lk.Request,
        lk.CanRestartServiceResponse,
        lk.RemainTxnInServiceResponse,
        lk.Response,
    ],
)
def test_field_tables_name_real_attributes(cls: type[Message]) -> None:
    check_fields(cls)
    numbers = [f.number for f in cls.FIELDS]
    assert numbers == sorted(set(numbers))


def test_method_numbers_are_upstreams() -> None:
    # proto/lock.proto enum Method (the same at v1.2.0, v2.0.0 and fa8af5c4)
    used = (lk.Method.SetRestartService, lk.Method.RemainTxnInService, lk.Method.CanRestartService)
    assert [(m.name, m.value) for m in used] == [
        ("SetRestartService", 12),
        ("RemainTxnInService", 13),
        ("CanRestartService", 14),
    ]


# Every non-nullable sub-request of lock.Request as an empty Go value marshals:
# 2 LockTable {} | 3 Method | 4 Lock {4 Options {9 SnapShotTs {}}} | 5 Unlock {2 CommitTS {}}
# | 6 {} | 7 GetWaitingList {1 Txn {}} | 8..13 {} | 14, 15, 16 the service requests
# | 17, 18, 19 {} | 20 AbortRemoteDeadlockTxn {1 txn {}} | 21 {}
def _request(method: str, set_restart: str, can_restart: str, remain: str) -> bytes:
    return h(
        "08 05"  # RequestID 5
        "12 00"
        f"18 {method}"
        "22 04 22 02 4a 00"
        "2a 02 12 00"
        "32 00"
        "3a 02 0a 00"
        "42 00 4a 00 52 00 5a 00 62 00 6a 00"
        f"72 {set_restart}"
        f"7a {can_restart}"
        f"82 01 {remain}"
        "8a 01 00 92 01 00 9a 01 00"
        "a2 01 02 0a 00"
        "aa 01 00"
    )


SERVICE = "06 0a 04 63 6e 2d 31"  # len 6: field 1 "cn-1"


@pytest.mark.parametrize(
    ("method", "wire"),
    [
        (lk.Method.CanRestartService, _request("0e", "00", SERVICE, "00")),
        (lk.Method.SetRestartService, _request("0c", SERVICE, "00", "00")),
        (lk.Method.RemainTxnInService, _request("0d", "00", "00", SERVICE)),
    ],
)
def test_service_requests_are_what_the_go_client_writes(method: lk.Method, wire: bytes) -> None:
    request = lockservice.service_request(method, "cn-1")
    assert lk.Request(**{**request.__dict__, "request_id": 5}).encode() == wire


def test_an_answer_as_the_tn_writes_it() -> None:
    # RequestID 7, Method 14, then the Go server's non-nullable responses (some not empty
    # when empty: Lock {Result {LockedOn {}, Timestamp {}}}, GetBind {LockTable {}}), and
    # CanRestartService {OK: true}.
    wire = h(
        "08 07 10 0e"
        "2a 06 0a 04 0a 00 22 00"
        "32 00 3a 00 42 00 4a 02 12 00 52 00 5a 00 62 00 6a 02 12 00 72 00"
        "7a 00"
        "82 01 02 08 01"
        "8a 01 00 92 01 00 9a 01 00 a2 01 00 aa 01 02 0a 00 b2 01 00"
    )
    answer = lk.Response.decode(wire)
    assert (answer.request_id, answer.method) == (7, 14)
    assert answer.can_restart_service.ok and not answer.set_restart_service.ok
    assert answer.remain_txn_in_service.remain_txn == 0


def test_remaining_transactions_may_be_minus_one() -> None:
    # int32 -1 is a 10-byte varint (sign-extended), as gogo writes a negative int32
    wire = h("8a 01 0b 08 ff ff ff ff ff ff ff ff ff 01")
    assert lk.Response.decode(wire).remain_txn_in_service.remain_txn == -1
    assert lk.Response.decode(h("8a 01 02 08 03")).remain_txn_in_service.remain_txn == 3


# ------------------------------------------------------------------ one exchange on loopback
async def _serve(answer: lk.Response, seen: list[lk.Request]) -> tuple[asyncio.Server, str]:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        size = int.from_bytes(await reader.readexactly(LENGTH_FIELD), "big")
        frame = decode_frame(await reader.readexactly(size))
        assert frame.payload == b"" and frame.timeout_ns, "not a payload message; deadline header sent"
        request = lk.Request.decode(frame.body)
        seen.append(request)
        reply = lk.Response(**{**answer.__dict__, "request_id": request.request_id, "method": request.method})
        writer.write(encode_frame(reply.encode(), timeout_ns=1))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"127.0.0.1:{port}"


async def _ask(answer: lk.Response, method: lk.Method) -> tuple[lk.Response, list[lk.Request]]:
    seen: list[lk.Request] = []
    server, address = await _serve(answer, seen)
    async with server:
        deadline = asyncio.get_running_loop().time() + 5
        return await lockservice.ask(address, method, "cn-1", deadline), seen


async def test_asking_the_tn_sends_one_request_and_reads_its_answer() -> None:
    answer, seen = await _ask(
        lk.Response(remain_txn_in_service=lk.RemainTxnInServiceResponse(remain_txn=4)),
        lk.Method.RemainTxnInService,
    )
    assert answer.remain_txn_in_service.remain_txn == 4
    [request] = seen
    assert request.method == lk.Method.RemainTxnInService
    assert request.remain_txn_in_service.service_id == "cn-1" and request.request_id > 0


async def test_an_error_answer_is_raised_and_an_unknown_method_means_an_older_tn() -> None:
    failed = lk.Response(error=MOError(code=20101, message="boom").encode())
    with pytest.raises(ServerError, match="boom"):
        await _ask(failed, lk.Method.CanRestartService)
    older = lk.Response(error=MOError(code=20105, message="method [CanRestartService]").encode())
    with pytest.raises(NotSupported):
        await _ask(older, lk.Method.CanRestartService)
