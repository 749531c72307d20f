"""The log service messages the HAKeeper client exchanges, as declared in MatrixOne's protos.

Source: matrixorigin/matrixone at 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e,
``proto/logservice.proto`` (package ``logservice``) and ``proto/metadata.proto``
(``LabelList``, ``WorkState``, ``CNRole``). Only the fields the operator reads or sends are
declared; the rest are skipped when decoding. The numbers we use are the same at
fa8af5c4dad4d7bc3c5ab24776ae60d0d0c418f0 (the MatrixOne the Go operator builds against) and
at tags v1.1.0 to v3.0.0, except ``LogRequest`` fields 7-9, added since (older servers
skip field 9, the one we send).

On the wire a request is ``logservice.Request`` itself: ``pkg/logservice/message.go``'s
``RPCRequest`` embeds it and adds only a payload kept outside the protobuf body (see
``frame.py``); likewise ``RPCResponse`` and ``Response``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mo_operator.matrixone.rpc.pbmessage import BOOL, INT64, STRING, UINT, F, MapOf, Message, Msg, Repeated


class Method(enum.IntEnum):
    """``logservice.MethodType``: the ones the operator calls."""

    CHECK_HAKEEPER = 10
    GET_CLUSTER_DETAILS = 11
    GET_SHARD_INFO = 12
    GET_CLUSTER_STATE = 14
    UPDATE_CN_LABEL = 15
    UPDATE_CN_WORK_STATE = 16
    PATCH_CN_STORE = 17
    DELETE_CN_STORE = 18


HAKEEPER_SHARD_ID = 0
"""``hakeeper.DefaultHAKeeperShardID`` (``pkg/hakeeper/rsm.go``)."""


class ErrorCode(enum.IntEnum):
    """``Response.ErrorCode`` values that matter here (``pkg/common/moerr/error.go``).

    The server fills ``ErrorCode``/``ErrorMessage`` with ``toErrorCode``
    (``pkg/logservice/errors.go``): a MatrixOne error keeps its code and text, dragonboat
    errors map to the 204xx codes with an empty message.
    """

    OK = 0
    INTERNAL = 20101
    NOT_SUPPORTED = 20105
    NO_HAKEEPER = 20417
    DRAGONBOAT_TIMEOUT = 20429
    DRAGONBOAT_SHARD_NOT_READY = 20434
    DRAGONBOAT_SYSTEM_CLOSED = 20435
    DRAGONBOAT_SHARD_NOT_FOUND = 20437
    DRAGONBOAT_OTHER_SYSTEM_ERROR = 20438


@dataclass(frozen=True)
class LabelList(Message):
    """``metadata.LabelList``: the values of one CN label."""

    labels: tuple[str, ...] = ()
    FIELDS = (F(1, "labels", Repeated(STRING)),)


Labels = dict[str, LabelList]


def labels_to_pb(labels: dict[str, tuple[str, ...]]) -> Labels:
    return {k: LabelList(tuple(v)) for k, v in labels.items()}


def labels_from_pb(labels: Labels) -> dict[str, tuple[str, ...]]:
    return {k: v.labels for k, v in labels.items()}


@dataclass(frozen=True)
class LogRequest(Message):
    """``LogRequest``: for GET_SHARD_INFO, which shard and which replicas to report.

    Field 7 (``TS``, a non-nullable ``google.protobuf.Timestamp``) is not sent; absent, the
    server reads Go's zero time, the same value Go's client sends.
    """

    name: str = ""
    shard_id: int = 0
    include_expired_replica_addresses: bool = False
    exclude_hard_down_replica_addresses: bool = False
    FIELDS = (
        F(1, "name", STRING),
        F(2, "shard_id", UINT),
        F(8, "include_expired_replica_addresses", BOOL),
        F(9, "exclude_hard_down_replica_addresses", BOOL),
    )


@dataclass(frozen=True)
class CNStoreLabel(Message):
    """``CNStoreLabel``: replace a CN's labels (UPDATE_CN_LABEL). ``Operation`` is unused upstream."""

    uuid: str = ""
    operation: int = 0
    labels: Labels = field(default_factory=dict)
    FIELDS = (F(1, "uuid", STRING), F(2, "operation", UINT), F(3, "labels", MapOf(STRING, Msg(LabelList))))


@dataclass(frozen=True)
class CNWorkState(Message):
    """``CNWorkState``: set a CN's work state (UPDATE_CN_WORK_STATE)."""

    uuid: str = ""
    state: int = 0
    FIELDS = (F(1, "uuid", STRING), F(2, "state", UINT))


@dataclass(frozen=True)
class CNStateLabel(Message):
    """``CNStateLabel``: set a CN's work state and, when labels are given, its labels (PATCH_CN_STORE)."""

    uuid: str = ""
    state: int = 0
    labels: Labels = field(default_factory=dict)
    FIELDS = (F(1, "uuid", STRING), F(2, "state", UINT), F(3, "labels", MapOf(STRING, Msg(LabelList))))


@dataclass(frozen=True)
class DeleteCNStore(Message):
    """``DeleteCNStore``: forget a CN (DELETE_CN_STORE)."""

    store_id: str = ""
    FIELDS = (F(1, "store_id", STRING),)


@dataclass(frozen=True)
class Request(Message):
    """``logservice.Request`` (the parts the operator uses)."""

    request_id: int = 0
    method: int = 0
    log_request: LogRequest = field(default_factory=LogRequest)
    cn_store_label: CNStoreLabel | None = None
    cn_work_state: CNWorkState | None = None
    cn_state_label: CNStateLabel | None = None
    delete_cn_store: DeleteCNStore | None = None
    FIELDS = (
        F(1, "request_id", UINT),
        F(2, "method", UINT),
        F(3, "log_request", Msg(LogRequest, nullable=False)),
        F(9, "cn_store_label", Msg(CNStoreLabel)),
        F(10, "cn_work_state", Msg(CNWorkState)),
        F(11, "cn_state_label", Msg(CNStateLabel)),
        F(12, "delete_cn_store", Msg(DeleteCNStore)),
    )


@dataclass(frozen=True)
class ReplicaInfo(Message):
    """``ReplicaInfo``: a replica's log store and its service address (may be empty)."""

    uuid: str = ""
    service_address: str = ""
    FIELDS = (F(1, "uuid", STRING), F(2, "service_address", STRING))


@dataclass(frozen=True)
class ShardInfoQueryResult(Message):
    """``ShardInfoQueryResult``: the members of a shard by replica ID, and its leader."""

    shard_id: int = 0
    replicas: dict[int, ReplicaInfo] = field(default_factory=dict)
    epoch: int = 0
    leader_id: int = 0
    term: int = 0
    FIELDS = (
        F(1, "shard_id", UINT),
        F(2, "replicas", MapOf(UINT, Msg(ReplicaInfo))),
        F(3, "epoch", UINT),
        F(4, "leader_id", UINT),
        F(5, "term", UINT),
    )


@dataclass(frozen=True)
class LogStore(Message):
    """``LogStore`` in ClusterDetails. ``state`` is ``NodeState`` (0 Normal, 1 Timeout)."""

    uuid: str = ""
    service_address: str = ""
    tick: int = 0
    state: int = 0
    FIELDS = (F(1, "uuid", STRING), F(2, "service_address", STRING), F(3, "tick", UINT), F(4, "state", UINT))


@dataclass(frozen=True)
class TNStore(Message):
    """``TNStore`` in ClusterDetails."""

    uuid: str = ""
    service_address: str = ""
    tick: int = 0
    state: int = 0
    logtail_server_address: str = ""
    lock_service_address: str = ""
    query_address: str = ""
    FIELDS = (
        F(1, "uuid", STRING),
        F(2, "service_address", STRING),
        F(3, "tick", UINT),
        F(4, "state", UINT),
        F(6, "logtail_server_address", STRING),
        F(7, "lock_service_address", STRING),
        F(10, "query_address", STRING),
    )


@dataclass(frozen=True)
class CNStore(Message):
    """``CNStore`` in ClusterDetails; ``work_state`` is ``metadata.WorkState``, ``role`` ``metadata.CNRole``."""

    uuid: str = ""
    service_address: str = ""
    sql_address: str = ""
    lock_service_address: str = ""
    role: int = 0
    tick: int = 0
    state: int = 0
    labels: Labels = field(default_factory=dict)
    work_state: int = 0
    query_address: str = ""
    up_time: int = 0
    FIELDS = (
        F(1, "uuid", STRING),
        F(2, "service_address", STRING),
        F(3, "sql_address", STRING),
        F(4, "lock_service_address", STRING),
        F(6, "role", UINT),
        F(7, "tick", UINT),
        F(8, "state", UINT),
        F(9, "labels", MapOf(STRING, Msg(LabelList))),
        F(10, "work_state", UINT),
        F(11, "query_address", STRING),
        F(14, "up_time", INT64),
    )


@dataclass(frozen=True)
class ClusterDetails(Message):
    """``ClusterDetails``: every TN, CN and log store HAKeeper knows (proxy and deleted stores skipped)."""

    tn_stores: tuple[TNStore, ...] = ()
    cn_stores: tuple[CNStore, ...] = ()
    log_stores: tuple[LogStore, ...] = ()
    FIELDS = (
        F(1, "tn_stores", Repeated(Msg(TNStore))),
        F(2, "cn_stores", Repeated(Msg(CNStore))),
        F(3, "log_stores", Repeated(Msg(LogStore))),
    )


@dataclass(frozen=True)
class CheckerState(Message):
    """``CheckerState``: the HAKeeper's tick and ``HAKeeperState`` (0 Created … 4 Running).

    The real message also carries every store's state, the cluster info and more; all of
    it is skipped.
    """

    tick: int = 0
    state: int = 0
    FIELDS = (F(1, "tick", UINT), F(6, "state", UINT))


@dataclass(frozen=True)
class LogResponse(Message):
    """``LogResponse``: log-append results; non-nullable in ``Response``, so always sent."""

    shard_id: int = 0
    lsn: int = 0
    last_lsn: int = 0
    leader_id: int = 0
    FIELDS = (F(1, "shard_id", UINT), F(2, "lsn", UINT), F(3, "last_lsn", UINT), F(4, "leader_id", UINT))


@dataclass(frozen=True)
class Response(Message):
    """``logservice.Response`` (the parts the operator uses)."""

    request_id: int = 0
    method: int = 0
    error_code: int = 0
    error_message: str = ""
    is_hakeeper: bool = False
    log_response: LogResponse = field(default_factory=LogResponse)
    cluster_details: ClusterDetails | None = None
    shard_info: ShardInfoQueryResult | None = None
    checker_state: CheckerState | None = None
    FIELDS = (
        F(1, "request_id", UINT),
        F(2, "method", UINT),
        F(3, "error_code", UINT),
        F(4, "error_message", STRING),
        F(5, "is_hakeeper", BOOL),
        F(6, "log_response", Msg(LogResponse, nullable=False)),
        F(9, "cluster_details", Msg(ClusterDetails)),
        F(10, "shard_info", Msg(ShardInfoQueryResult)),
        F(12, "checker_state", Msg(CheckerState)),
    )
