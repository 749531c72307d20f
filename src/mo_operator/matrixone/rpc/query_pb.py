"""The CN query service messages the operator exchanges, as declared in MatrixOne's protos.

Source: matrixorigin/matrixone at 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e,
``proto/query.proto`` (package ``query``), ``proto/status.proto`` (``Session``) and
``proto/moerr.proto`` (``Error``, the bytes of ``Response.Error``). Field numbers are the
same at fa8af5c4dad4d7bc3c5ab24776ae60d0d0c418f0. ``query.Request``/``Response`` are
morpc messages themselves (``pkg/pb/query/query.go``), not payload messages.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mo_operator.matrixone.rpc.pbmessage import BOOL, BYTES, INT64, STRING, UINT, F, Message, Msg, Repeated


class CmdMethod(enum.IntEnum):
    """``query.CmdMethod``: the ones the operator calls."""

    SHOW_PROCESS_LIST = 1
    GET_PIPELINE_INFO = 19
    GET_REPLICA_COUNT = 24


ERR_NOT_SUPPORTED = 20105
"""``moerr.ErrNotSupported``: what ``morpc``'s method-based server answers for a method
it has no handler for (``pkg/common/morpc/method_based.go getHandleFunc``), i.e. what a CN
older than the method answers."""


@dataclass(frozen=True)
class ShowProcessListRequest(Message):
    """``ShowProcessListRequest``: ``sys_tenant`` lists every tenant's sessions."""

    tenant: str = ""
    sys_tenant: bool = False
    FIELDS = (F(1, "tenant", STRING), F(2, "sys_tenant", BOOL))


@dataclass(frozen=True)
class Empty(Message):
    """``GetPipelineInfoRequest`` (no fields)."""


@dataclass(frozen=True)
class GetReplicaCountRequest(Message):
    """``GetReplicaCountRequest``; upstream sends it with ``CN`` empty."""

    cn: str = ""
    FIELDS = (F(1, "cn", STRING),)


@dataclass(frozen=True)
class Request(Message):
    """``query.Request``. The CN's handlers reject a request whose sub-request pointer is nil
    ("bad request", ``pkg/cnservice/server_query.go``), so each is sent even when empty;
    ``GetReplicaCount`` is non-nullable and always sent."""

    request_id: int = 0
    cmd_method: int = 0
    show_process_list: ShowProcessListRequest | None = None
    get_pipeline_info: Empty | None = None
    get_replica_count: GetReplicaCountRequest = field(default_factory=GetReplicaCountRequest)
    FIELDS = (
        F(1, "request_id", UINT),
        F(2, "cmd_method", UINT),
        F(4, "show_process_list", Msg(ShowProcessListRequest)),
        F(22, "get_pipeline_info", Msg(Empty)),
        F(27, "get_replica_count", Msg(GetReplicaCountRequest, nullable=False)),
    )


@dataclass(frozen=True)
class Session(Message):
    """``status.Session``: one session on a CN (only what counting sessions needs)."""

    node_id: str = ""
    conn_id: int = 0
    session_id: str = ""
    account: str = ""
    user: str = ""
    from_proxy: bool = False
    FIELDS = (
        F(1, "node_id", STRING),
        F(2, "conn_id", UINT),
        F(3, "session_id", STRING),
        F(4, "account", STRING),
        F(5, "user", STRING),
        F(19, "from_proxy", BOOL),
    )


@dataclass(frozen=True)
class ShowProcessListResponse(Message):
    sessions: tuple[Session, ...] = ()
    FIELDS = (F(1, "sessions", Repeated(Msg(Session))),)


@dataclass(frozen=True)
class CountResponse(Message):
    """``GetPipelineInfoResponse`` and ``GetReplicaCountResponse``: ``int64 Count = 1``."""

    count: int = 0
    FIELDS = (F(1, "count", INT64),)


@dataclass(frozen=True)
class Response(Message):
    """``query.Response``; ``error`` holds a marshalled ``moerr.Error`` when the call failed."""

    request_id: int = 0
    cmd_method: int = 0
    error: bytes = b""
    show_process_list: ShowProcessListResponse | None = None
    get_pipeline_info: CountResponse | None = None
    get_replica_count: CountResponse = field(default_factory=CountResponse)
    FIELDS = (
        F(1, "request_id", UINT),
        F(2, "cmd_method", UINT),
        F(3, "error", BYTES),
        F(4, "show_process_list", Msg(ShowProcessListResponse)),
        F(22, "get_pipeline_info", Msg(CountResponse)),
        F(27, "get_replica_count", Msg(CountResponse, nullable=False)),
    )


@dataclass(frozen=True)
class MOError(Message):
    """``moerr.Error``: a MatrixOne error's code and text."""

    code: int = 0
    mysql_code: int = 0
    message: str = ""
    sql_state: str = ""
    FIELDS = (
        F(1, "code", UINT),
        F(2, "mysql_code", UINT),
        F(3, "message", STRING),
        F(4, "sql_state", STRING),
    )
