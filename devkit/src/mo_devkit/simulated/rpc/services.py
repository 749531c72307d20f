"""What the simulated MatrixOne's morpc servers answer, read from the model (state.py)
at the moment each request arrives, as MatrixOne's handlers answer.

From matrixone 7c27538f:

- a log store (``pkg/logservice/service.go`` ``handleRPCRequest``): the answer echoes
  ``RequestID`` and ``Method`` (``getResponse``), errors go in ``ErrorCode`` and
  ``ErrorMessage`` (``toErrorCode``: a MatrixOne error keeps its code and text,
  dragonboat's map to codes with no text). ``GET_SHARD_INFO`` answers from the store's
  gossip registry (``shardinfo.go``; a shard it does not know: ``ErrShardNotFound``);
  ``CHECK_HAKEEPER`` says whether the store hosts a HAKeeper replica
  (``haKeeperReplicaID != 0``); HAKeeper calls on a store without one answer
  ``ErrNoHAKeeper``, and while the shard has no quorum, dragonboat's ``ErrShardNotReady``.
  ``PATCH_CN_STORE``/``UPDATE_CN_LABEL``/``UPDATE_CN_WORK_STATE`` of a CN HAKeeper does
  not know answer ``internal error: CN [..] does not exist`` (``store.go``), a
  ``DELETE_CN_STORE`` of one succeeds; a work state of Unknown means Working and an
  empty label map keeps the labels (``pkg/pb/logservice/logservice.go`` ``PatchCNStore``).
- a CN's query service (``pkg/cnservice/server_query.go``, ``morpc/method_based.go``): a
  request without its sub-request is a "bad request"; a method without a handler answers
  ``ErrNotSupported``; errors travel as a marshalled ``moerr.Error`` in ``Response.Error``.
- a TN's lock service (``pkg/lockservice/rpc.go``, ``lock_table_allocator.go``): the
  three calls a draining CN needs, answered from ``lockservice.py``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from mo_devkit.simulated.lockservice import LockServices
from mo_devkit.simulated.resolve import LogSetKey
from mo_devkit.simulated.rpc.server import Call
from mo_devkit.simulated.state import MOModel
from mo_operator.matrixone.admin import AdminError, StoreNotFound, WorkState
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.rpc import lock_pb as lk
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc import query_pb as q
from mo_operator.matrixone.rpc.codes import HAKEEPER_SHARD_ID, ErrorCode, labels_from_pb, labels_to_pb

Clock = Callable[[], float]
ERR_NOT_SUPPORTED = ErrorCode.NOT_SUPPORTED
ERR_INTERNAL = ErrorCode.INTERNAL
"""``moerr.ErrInternal``: MySQL code 1105, SQL state HY000."""


def _work_state(value: int) -> WorkState | None:
    try:
        return WorkState(value)
    except ValueError:
        return None


def mo_error(code: int, message: str) -> bytes:
    """A marshalled ``moerr.Error`` as MatrixOne puts it in a response's ``Error`` field."""
    return q.MOError(code=code, mysql_code=1105, message=message, sql_state="HY000").encode()


class LogStoreService:
    """The log service RPC of one log store of LogSet ``key`` (HAKeeper calls included)."""

    kind = "log"
    payload_message = True

    def __init__(
        self,
        model: MOModel,
        key: LogSetKey,
        uuid: str,
        address: str,
        clock: Clock,
        on_change: Callable[[], None],
    ) -> None:
        self.model = model
        self.key = key
        self.uuid = uuid
        self.address = address
        self.clock = clock
        self.on_change = on_change

    def parse(self, body: bytes) -> tuple[pb.Request, Call]:
        request = pb.Request.decode(body)
        method = (
            pb.MethodType(request.method).name
            if request.method in pb.MethodType._value2member_map_
            else str(request.method)
        )
        uuid, state = "", None
        if request.cn_state_label is not None:
            uuid, state = request.cn_state_label.uuid, _work_state(request.cn_state_label.state)
        elif request.cn_work_state is not None:
            uuid, state = request.cn_work_state.uuid, _work_state(request.cn_work_state.state)
        elif request.cn_store_label is not None:
            uuid = request.cn_store_label.uuid
        elif request.delete_cn_store is not None:
            uuid = request.delete_cn_store.store_id
        return request, Call(self.kind, self.address, method, uuid, state, request)

    def not_supported(self, request: pb.Request) -> bytes:
        return self._encode(request, pb.Response(error_code=ERR_NOT_SUPPORTED, error_message="not supported"))

    def answer(self, request: pb.Request) -> bytes:
        return self._encode(request, self._respond(request))

    @staticmethod
    def _encode(request: pb.Request, response: pb.Response) -> bytes:
        return dataclasses.replace(response, request_id=request.request_id, method=request.method).encode()

    def _respond(self, request: pb.Request) -> pb.Response:
        method, now = request.method, self.clock()
        hakeeper = self.model.hakeepers.get(self.key)
        if method == pb.MethodType.GET_SHARD_INFO:
            shard = self.model.shard(self.key, now)
            if request.log_request.shard_id != HAKEEPER_SHARD_ID or shard is None:
                return pb.Response(error_code=ErrorCode.DRAGONBOAT_SHARD_NOT_FOUND)
            replicas, leader = shard
            return pb.Response(
                shard_info=pb.ShardInfoQueryResult(
                    shard_id=HAKEEPER_SHARD_ID,
                    replicas={
                        rid: pb.ReplicaInfo(uuid, address) for rid, (uuid, address) in replicas.items()
                    },
                    epoch=len(hakeeper.replica_ids) if hakeeper is not None else 0,
                    leader_id=leader,
                    term=1,
                )
            )
        hosts = hakeeper is not None and self.uuid in hakeeper.members
        if method == pb.MethodType.CHECK_HAKEEPER:
            return pb.Response(is_ha_keeper=hosts)
        if not hosts:
            return pb.Response(error_code=ErrorCode.NO_HAKEEPER, error_message="no HAKeeper")
        if not self.model.available(self.key):
            return pb.Response(error_code=ErrorCode.DRAGONBOAT_SHARD_NOT_READY)
        return self._hakeeper_call(request, now)

    def _hakeeper_call(self, request: pb.Request, now: float) -> pb.Response:
        method, key = request.method, self.key
        if method == pb.MethodType.GET_CLUSTER_STATE:
            state = self.model.hakeeper_state(key, now)
            shards = {
                shard.shard_id: pb.LogShardInfo(
                    shard_id=shard.shard_id,
                    replicas=dict(shard.replicas),
                    epoch=1,
                    non_voting_replicas=dict(shard.non_voting),
                )
                for shard in state.log_shards
            }
            return pb.Response(
                checker_state=pb.CheckerState(
                    tick=state.tick, log_state=pb.LogState(shards=shards), state=state.phase.value
                )
            )
        if method == pb.MethodType.GET_CLUSTER_DETAILS:
            return pb.Response(cluster_details=cluster_details(self.model, key, now))
        if method in (
            pb.MethodType.PATCH_CN_STORE,
            pb.MethodType.UPDATE_CN_WORK_STATE,
            pb.MethodType.UPDATE_CN_LABEL,
        ):
            return self._change_cn(request, now)
        if method == pb.MethodType.DELETE_CN_STORE:
            if request.delete_cn_store is None:
                return _internal("bad request")
            try:
                self.model.delete_cn(key, request.delete_cn_store.store_id)
                self.on_change()
            except StoreNotFound:
                pass  # store.go deleteCNStore: nothing to delete is success
            return pb.Response()
        return pb.Response(error_code=ERR_NOT_SUPPORTED, error_message=f"method {method} not supported")

    def _change_cn(self, request: pb.Request, now: float) -> pb.Response:
        change = request.cn_store_label or request.cn_state_label or request.cn_work_state
        if change is None:
            return _internal("bad request")
        try:
            if isinstance(change, pb.CNStoreLabel):
                self.model.set_labels(self.key, change.uuid, labels_from_pb(change.labels))
            else:
                state = _work_state(change.state) or WorkState.UNKNOWN
                if state is WorkState.UNKNOWN:  # PatchCNStore: Unknown means Working
                    state = WorkState.WORKING
                labels = change.labels if isinstance(change, pb.CNStateLabel) else None
                wanted = labels_from_pb(labels) if labels else None  # an empty map keeps the labels
                self.model.set_work_state(self.key, change.uuid, state, wanted, now)
        except StoreNotFound:
            return _internal(f"CN [{change.uuid}] does not exist")
        self.on_change()
        return pb.Response()


def _internal(message: str) -> pb.Response:
    return pb.Response(error_code=ERR_INTERNAL, error_message=f"internal error: {message}")


def cluster_details(model: MOModel, key: LogSetKey, now: float) -> pb.ClusterDetails:
    """HAKeeper's ``GET_CLUSTER_DETAILS`` answer from the model."""
    state = model.hakeeper_state(key, now)
    return pb.ClusterDetails(
        tn_stores=tuple(
            pb.TNStore(
                uuid=s.uuid,
                service_address=s.service_address,
                tick=s.tick,
                state=s.state.value,
                logtail_server_address=s.logtail_server_address,
                lock_service_address=s.lock_service_address,
            )
            for s in state.tn_stores
        ),
        cn_stores=tuple(
            pb.CNStore(
                uuid=s.uuid,
                service_address=s.service_address,
                sql_address=s.sql_address,
                lock_service_address=s.lock_service_address,
                tick=s.tick,
                state=s.state.value,
                labels=labels_to_pb(dict(s.labels)),
                work_state=s.work_state.value,
                query_address=s.query_address,
            )
            for s in state.cn_stores
        ),
        log_stores=tuple(
            pb.LogStore(uuid=s.uuid, service_address=s.service_address, tick=s.tick, state=s.state.value)
            for s in state.log_stores
        ),
    )


class QueryService:
    """A CN's query service: its sessions (all came through the proxy), no pipeline or replica."""

    kind = "query"
    payload_message = False

    def __init__(self, model: MOModel, uuid: str, address: str) -> None:
        self.model = model
        self.uuid = uuid
        self.address = address

    def parse(self, body: bytes) -> tuple[q.Request, Call]:
        request = q.Request.decode(body)
        known = request.cmd_method in q.CmdMethod._value2member_map_
        method = q.CmdMethod(request.cmd_method).name if known else str(request.cmd_method)
        return request, Call(self.kind, self.address, method, self.uuid, None, request)

    def not_supported(self, request: q.Request) -> bytes:
        return self._error(request, ERR_NOT_SUPPORTED, f"{request.cmd_method} not support in current service")

    def answer(self, request: q.Request) -> bytes:
        response = q.Response(request_id=request.request_id, cmd_method=request.cmd_method)
        method = request.cmd_method
        if method == q.CmdMethod.ShowProcessList:
            if request.show_process_list_request is None:
                return self._error(request, ERR_INTERNAL, "internal error: bad request")
            sessions = tuple(
                q.Session(node_id=self.uuid, conn_id=i + 1, account="acc", user="user", from_proxy=True)
                for i in range(self._sessions())
            )
            listed = q.ShowProcessListResponse(sessions)
            return dataclasses.replace(response, show_process_list_response=listed).encode()
        if method == q.CmdMethod.GetPipelineInfo:
            if request.get_pipeline_info_request is None:
                return self._error(request, ERR_INTERNAL, "internal error: bad request")
            count = q.GetPipelineInfoResponse(0)
            return dataclasses.replace(response, get_pipeline_info_response=count).encode()
        if method == q.CmdMethod.GetReplicaCount:
            return dataclasses.replace(response, get_replica_count=q.GetReplicaCountResponse(0)).encode()
        return self.not_supported(request)

    def _sessions(self) -> int:
        try:
            return self.model.sessions(self.uuid)
        except StoreNotFound:
            return 0

    @staticmethod
    def _error(request: q.Request, code: int, message: str) -> bytes:
        return q.Response(
            request_id=request.request_id, cmd_method=request.cmd_method, error=mo_error(code, message)
        ).encode()


class LockService:
    """A TN's lock service: the lock table allocator's answers about leaving CNs."""

    kind = "lock"
    payload_message = False

    def __init__(self, locks: LockServices, uuid: str, address: str, clock: Clock) -> None:
        self.locks = locks
        self.uuid = uuid
        """The TN's store UUID: its cluster is the HAKeeper it registered with."""
        self.address = address
        self.clock = clock

    def parse(self, body: bytes) -> tuple[lk.Request, Call]:
        request = lk.Request.decode(body)
        known = request.method in lk.Method._value2member_map_
        method = lk.Method(request.method).name if known else str(request.method)
        about = {
            lk.Method.SetRestartService: request.set_restart_service.service_id,
            lk.Method.CanRestartService: request.can_restart_service.service_id,
            lk.Method.RemainTxnInService: request.remain_txn_in_service.service_id,
        }
        uuid = about.get(lk.Method(request.method), "") if known else ""
        return request, Call(self.kind, self.address, method, uuid, None, request)

    def not_supported(self, request: lk.Request) -> bytes:
        return lk.Response(
            request_id=request.request_id,
            method=request.method,
            error=mo_error(ERR_NOT_SUPPORTED, f"lock method {request.method} not supported"),
        ).encode()

    def answer(self, request: lk.Request) -> bytes:
        response = lk.Response(request_id=request.request_id, method=request.method)
        key = self._cluster()
        now = self.clock()
        try:
            if key is None:
                raise AdminError("the TN has not registered in HAKeeper")
            if request.method == lk.Method.CanRestartService:
                ok = self.locks.can_restart(key, request.can_restart_service.service_id, now)
                response = dataclasses.replace(response, can_restart_service=lk.CanRestartServiceResponse(ok))
            elif request.method == lk.Method.SetRestartService:
                ok = self.locks.set_restart(key, request.set_restart_service.service_id, now)
                response = dataclasses.replace(response, set_restart_service=lk.SetRestartServiceResponse(ok))
            elif request.method == lk.Method.RemainTxnInService:
                count = self.locks.remain_txn(key, request.remain_txn_in_service.service_id, now)
                remain = lk.RemainTxnInServiceResponse(count)
                response = dataclasses.replace(response, remain_txn_in_service=remain)
            else:
                return self.not_supported(request)
        except AdminError as e:
            response = dataclasses.replace(response, error=mo_error(ERR_INTERNAL, f"internal error: {e}"))
        return response.encode()

    def _cluster(self) -> LogSetKey | None:
        for key, hakeeper in self.locks.model.hakeepers.items():
            if self.uuid in hakeeper.stores[Component.TN]:
                return key
        return None
