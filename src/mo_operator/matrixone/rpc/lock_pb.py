"""The TN lock service messages the operator exchanges, as declared in MatrixOne's protos.

Source: matrixorigin/matrixone at 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e,
``proto/lock.proto`` (package ``lock``) and its generated ``pkg/pb/lock/lock.pb.go``
(``Request.MarshalToSizedBuffer``); the Go operator's use of them is
matrixorigin/matrixone-operator 2301e3b5 ``pkg/mocli/lockservice_client.go``. The three
service requests and their method numbers are the same at tag v1.2.0 and at
fa8af5c4dad4d7bc3c5ab24776ae60d0d0c418f0. ``lock.Request``/``Response`` are morpc
messages themselves, not payload messages (``pkg/pb/lock/lock.go``: ``SetID``/``GetID``
only), and the TN serves them with ``morpc.Config.NewServer`` like the query service.

Every sub-request of ``lock.Request`` is ``(gogoproto.nullable) = false``, so the Go
client writes all of them, empty ones included, and an empty one is not always zero
bytes: ``LockRequest`` carries a non-nullable ``LockOptions`` which carries a
non-nullable ``SnapShotTs``; ``UnlockRequest`` a non-nullable ``CommitTS``;
``GetWaitingListRequest`` and ``AbortRemoteDeadlockTxnRequest`` a non-nullable
``WaitTxn``. The placeholders below reproduce exactly those bytes, so what we send is
byte for byte what the Go operator sends. Fields of the response we do not read are
skipped.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mo_operator.matrixone.rpc.pbmessage import BOOL, BYTES, INT64, STRING, UINT, F, Message, Msg


class Method(enum.IntEnum):
    """``lock.Method``: the ones the operator calls."""

    SET_RESTART_SERVICE = 12
    REMAIN_TXN_IN_SERVICE = 13
    CAN_RESTART_SERVICE = 14


@dataclass(frozen=True)
class Empty(Message):
    """A sub-request with no non-nullable field (``LockTable``, ``GetBindRequest``, …) or
    ``timestamp.Timestamp``/``WaitTxn``: zero bytes when empty."""


@dataclass(frozen=True)
class LockOptions(Message):
    """``LockOptions``: ``SnapShotTs`` (9) is non-nullable."""

    snapshot_ts: Empty = field(default_factory=Empty)
    FIELDS = (F(9, "snapshot_ts", Msg(Empty, nullable=False)),)


@dataclass(frozen=True)
class LockRequest(Message):
    """``LockRequest``: ``Options`` (4) is non-nullable."""

    options: LockOptions = field(default_factory=LockOptions)
    FIELDS = (F(4, "options", Msg(LockOptions, nullable=False)),)


@dataclass(frozen=True)
class UnlockRequest(Message):
    """``UnlockRequest``: ``CommitTS`` (2) is non-nullable."""

    commit_ts: Empty = field(default_factory=Empty)
    FIELDS = (F(2, "commit_ts", Msg(Empty, nullable=False)),)


@dataclass(frozen=True)
class TxnRequest(Message):
    """``GetWaitingListRequest`` and ``AbortRemoteDeadlockTxnRequest``: a non-nullable
    ``WaitTxn`` at field 1."""

    txn: Empty = field(default_factory=Empty)
    FIELDS = (F(1, "txn", Msg(Empty, nullable=False)),)


@dataclass(frozen=True)
class ServiceRequest(Message):
    """``SetRestartServiceRequest``, ``CanRestartServiceRequest`` and
    ``RemainTxnInServiceRequest``: ``string ServiceID = 1`` (the CN's UUID)."""

    service_id: str = ""
    FIELDS = (F(1, "service_id", STRING),)


def _empty(number: int, name: str, cls: type[Message] = Empty) -> F:
    return F(number, name, Msg(cls, nullable=False))


@dataclass(frozen=True)
class Request(Message):
    """``lock.Request`` with every non-nullable sub-request, as the Go client writes it."""

    request_id: int = 0
    method: int = 0
    set_restart_service: ServiceRequest = field(default_factory=ServiceRequest)
    can_restart_service: ServiceRequest = field(default_factory=ServiceRequest)
    remain_txn_in_service: ServiceRequest = field(default_factory=ServiceRequest)
    lock_table: Empty = field(default_factory=Empty)
    lock: LockRequest = field(default_factory=LockRequest)
    unlock: UnlockRequest = field(default_factory=UnlockRequest)
    get_txn_lock: Empty = field(default_factory=Empty)
    get_waiting_list: TxnRequest = field(default_factory=TxnRequest)
    get_bind: Empty = field(default_factory=Empty)
    keep_lock_table_bind: Empty = field(default_factory=Empty)
    keep_remote_lock: Empty = field(default_factory=Empty)
    validate_service: Empty = field(default_factory=Empty)
    cannot_commit: Empty = field(default_factory=Empty)
    get_active_txn: Empty = field(default_factory=Empty)
    check_orphan: Empty = field(default_factory=Empty)
    resume_invalid_cn: Empty = field(default_factory=Empty)
    get_lock_holder: Empty = field(default_factory=Empty)
    abort_remote_deadlock_txn: TxnRequest = field(default_factory=TxnRequest)
    check_active_txn: Empty = field(default_factory=Empty)
    FIELDS = (
        F(1, "request_id", UINT),
        _empty(2, "lock_table"),
        F(3, "method", UINT),
        _empty(4, "lock", LockRequest),
        _empty(5, "unlock", UnlockRequest),
        _empty(6, "get_txn_lock"),
        _empty(7, "get_waiting_list", TxnRequest),
        _empty(8, "get_bind"),
        _empty(9, "keep_lock_table_bind"),
        _empty(10, "keep_remote_lock"),
        _empty(11, "validate_service"),
        _empty(12, "cannot_commit"),
        _empty(13, "get_active_txn"),
        _empty(14, "set_restart_service", ServiceRequest),
        _empty(15, "can_restart_service", ServiceRequest),
        _empty(16, "remain_txn_in_service", ServiceRequest),
        _empty(17, "check_orphan"),
        _empty(18, "resume_invalid_cn"),
        _empty(19, "get_lock_holder"),
        _empty(20, "abort_remote_deadlock_txn", TxnRequest),
        _empty(21, "check_active_txn"),
    )


@dataclass(frozen=True)
class OKResponse(Message):
    """``SetRestartServiceResponse`` and ``CanRestartServiceResponse``: ``bool OK = 1``."""

    ok: bool = False
    FIELDS = (F(1, "ok", BOOL),)


@dataclass(frozen=True)
class RemainTxnResponse(Message):
    """``RemainTxnInServiceResponse``: ``int32 RemainTxn = 1`` (-1: cannot tell)."""

    remain_txn: int = 0
    FIELDS = (F(1, "remain_txn", INT64),)


@dataclass(frozen=True)
class Response(Message):
    """``lock.Response``; ``error`` holds a marshalled ``moerr.Error`` when the call failed."""

    request_id: int = 0
    method: int = 0
    error: bytes = b""
    set_restart_service: OKResponse = field(default_factory=OKResponse)
    can_restart_service: OKResponse = field(default_factory=OKResponse)
    remain_txn_in_service: RemainTxnResponse = field(default_factory=RemainTxnResponse)
    FIELDS = (
        F(1, "request_id", UINT),
        F(2, "method", UINT),
        F(3, "error", BYTES),
        F(15, "set_restart_service", Msg(OKResponse, nullable=False)),
        F(16, "can_restart_service", Msg(OKResponse, nullable=False)),
        F(17, "remain_txn_in_service", Msg(RemainTxnResponse, nullable=False)),
    )
