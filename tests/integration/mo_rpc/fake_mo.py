"""A fake MatrixOne speaking morpc on 127.0.0.1: log stores (one hosting the HAKeeper) and
CN query services, answering as the Go code does.

What it copies from matrixone 7c27538f (and checks of every request, closing the
connection on a bad frame as morpc's server does on a decode error):

- ``pkg/logservice/service.go`` ``handleRPCRequest``/``handle*``: the response echoes
  ``RequestID`` and ``Method``; errors go in ``ErrorCode``/``ErrorMessage`` as ``toErrorCode``
  fills them; a store without the HAKeeper answers ``ErrNoHAKeeper`` to HAKeeper calls.
- ``store.go``: PATCH/UPDATE of an unknown CN answers ``internal error: CN [..] does not
  exist``; DELETE of an unknown CN succeeds; ``pkg/pb/logservice/logservice.go``
  ``PatchCNStore`` replaces labels only when the map is non-empty.
- ``shardinfo.go`` ``getShardInfo``: an unknown shard answers dragonboat ``ErrShardNotFound``.
- ``pkg/cnservice/server_query.go``: the CN rejects a request without its sub-request
  ("bad request"); ``pkg/common/morpc/method_based.go``: a method without a handler
  answers ``ErrNotSupported``.
- frames: logservice requests are payload messages (flag bit 0), query requests are not;
  checksum and custom headers are on; responses carry the request's deadline back.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Self

from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc import query_pb as q
from mo_operator.matrixone.rpc.frame import (
    FLAG_CHECKSUM,
    FLAG_CUSTOM_HEADER,
    FLAG_PAYLOAD,
    Frame,
    FrameError,
    decode_frame,
    encode_frame,
    frame_size,
)

ERR_INTERNAL = 20101
ERR_NO_HAKEEPER = 20417
ERR_SHARD_NOT_FOUND = 20437


class FakeServer:
    """A morpc server on 127.0.0.1; subclasses answer decoded requests.

    ``behaviour``: ``answer``; ``silent`` (read requests, never answer); ``half`` (write
    half of the answer's frame, then close); ``corrupt`` (flip a body byte, so the
    checksum fails); ``compressed`` (set the LZ4 flag). ``affects`` picks the requests the
    behaviour applies to (all by default); the others are answered.
    """

    payload_message = True

    def __init__(self) -> None:
        self.behaviour = "answer"
        self.affects: Callable[[object], bool] = lambda request: True
        self.delay: Callable[[object], float] = lambda request: 0.0
        self.received: list[object] = []
        self.frame_errors: list[str] = []
        self.connections = 0
        self._writers: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self.port = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self) -> Self:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        self.drop_connections()
        if self._server is not None:
            await self._server.wait_closed()

    def drop_connections(self) -> None:
        for writer in list(self._writers):
            writer.close()

    def check(self, frame: Frame) -> None:
        """What morpc's server codec requires of a client frame (else it closes the connection)."""
        if not frame.flag & FLAG_CHECKSUM:
            raise FrameError("client frames carry a checksum")
        if not frame.flag & FLAG_CUSTOM_HEADER or not frame.timeout_ns or frame.timeout_ns <= 0:
            raise FrameError("client frames carry a positive deadline")
        if len(frame.span_context) != 24:
            raise FrameError("trace.SpanContext is 24 bytes")
        if bool(frame.flag & FLAG_PAYLOAD) != self.payload_message:
            raise FrameError(f"payload flag {bool(frame.flag & FLAG_PAYLOAD)} for this message type")

    def handle(self, body: bytes) -> tuple[object, bytes]:
        """The decoded request and the response body."""
        raise NotImplementedError

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._writers.add(writer)
        tasks: set[asyncio.Task[None]] = set()
        try:
            while True:
                prefix = await reader.readexactly(4)
                frame = decode_frame(await reader.readexactly(frame_size(prefix, 1 << 24)))
                self.check(frame)
                request, response = self.handle(frame.body)
                self.received.append(request)
                behaviour = self.behaviour if self.affects(request) else "answer"
                if behaviour == "silent":
                    continue
                task = asyncio.create_task(
                    self._answer(writer, frame, response, behaviour, self.delay(request))
                )
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except (FrameError, ValueError) as e:
            self.frame_errors.append(str(e))
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _answer(
        self, writer: asyncio.StreamWriter, frame: Frame, response: bytes, behaviour: str, delay: float
    ) -> None:
        await asyncio.sleep(delay)
        data = bytearray(
            encode_frame(
                response,
                timeout_ns=frame.timeout_ns or 1,
                payload=b"" if self.payload_message else None,
            )
        )
        if behaviour == "corrupt":
            data[-1] ^= 0xFF
        if behaviour == "compressed":
            data[4] |= 0x08
        with contextlib.suppress(ConnectionError):
            if behaviour == "half":
                writer.write(bytes(data[: len(data) // 2]))
                await writer.drain()
                writer.close()
                return
            writer.write(bytes(data))
            await writer.drain()


@dataclass
class HAKeeperModel:
    """What the HAKeeper knows: its state and the stores (``CheckerState`` + ``ClusterDetails``)."""

    phase: int = 4
    tick: int = 1000
    log_stores: list[pb.LogStore] = field(default_factory=list)
    tn_stores: list[pb.TNStore] = field(default_factory=list)
    cn_stores: dict[str, pb.CNStore] = field(default_factory=dict)

    def details(self) -> pb.ClusterDetails:
        return pb.ClusterDetails(
            tuple(self.tn_stores), tuple(self.cn_stores.values()), tuple(self.log_stores)
        )


class FakeLogStore(FakeServer):
    """A log store's RPC server; ``hakeeper`` says whether it hosts the HAKeeper replica."""

    def __init__(self, model: HAKeeperModel, *, hakeeper: bool = False) -> None:
        super().__init__()
        self.model = model
        self.hakeeper = hakeeper
        self.shard_info: pb.ShardInfoQueryResult | None = None
        """The HAKeeper shard as this store's gossip registry sees it (None: unknown shard)."""

    def methods(self) -> list[str]:
        return [pb.Method(r.method).name for r in self.received if isinstance(r, pb.Request)]

    def handle(self, body: bytes) -> tuple[object, bytes]:
        request = pb.Request.decode(body)
        response = self.respond(request)
        return request, dataclasses.replace(
            response, request_id=request.request_id, method=request.method
        ).encode()

    def respond(self, request: pb.Request) -> pb.Response:
        model, method = self.model, request.method
        if method == pb.Method.CHECK_HAKEEPER:
            return pb.Response(is_hakeeper=self.hakeeper)
        if method == pb.Method.GET_SHARD_INFO:
            if request.log_request.shard_id != pb.HAKEEPER_SHARD_ID or self.shard_info is None:
                return pb.Response(error_code=ERR_SHARD_NOT_FOUND)  # dragonboat errors: code only
            return pb.Response(shard_info=self.shard_info)
        if not self.hakeeper:
            return pb.Response(error_code=ERR_NO_HAKEEPER, error_message="cannot locate ha keeper")
        if method == pb.Method.GET_CLUSTER_STATE:
            return pb.Response(checker_state=pb.CheckerState(tick=model.tick, state=model.phase))
        if method == pb.Method.GET_CLUSTER_DETAILS:
            return pb.Response(cluster_details=model.details())
        if method == pb.Method.PATCH_CN_STORE:
            assert request.cn_state_label is not None, (
                "PATCH_CN_STORE without CNStateLabel: a nil dereference in Go"
            )
            patch = request.cn_state_label
            store = model.cn_stores.get(patch.uuid)
            if store is None:
                return self._missing(patch.uuid)
            changes: dict[str, object] = {"work_state": patch.state or 1}  # Unknown becomes Working
            if patch.labels:
                changes["labels"] = patch.labels
            model.cn_stores[patch.uuid] = dataclasses.replace(store, **changes)
            return pb.Response()
        if method == pb.Method.UPDATE_CN_LABEL:
            assert request.cn_store_label is not None
            label = request.cn_store_label
            store = model.cn_stores.get(label.uuid)
            if store is None:
                return self._missing(label.uuid)
            model.cn_stores[label.uuid] = dataclasses.replace(store, labels=label.labels)
            return pb.Response()
        if method == pb.Method.DELETE_CN_STORE:
            assert request.delete_cn_store is not None
            model.cn_stores.pop(request.delete_cn_store.store_id, None)
            return pb.Response()
        return pb.Response(error_code=20105, error_message=f"{method} not supported here")

    @staticmethod
    def _missing(uuid: str) -> pb.Response:
        return pb.Response(
            error_code=ERR_INTERNAL, error_message=f"internal error: CN [{uuid}] does not exist"
        )


class FakeQueryService(FakeServer):
    """A CN's query service. ``pipelines``/``replicas`` None: a CN too old to have the method."""

    payload_message = False

    def __init__(
        self, sessions: list[q.Session], *, pipelines: int | None = 0, replicas: int | None = 0
    ) -> None:
        super().__init__()
        self.sessions = sessions
        self.pipelines = pipelines
        self.replicas = replicas

    def methods(self) -> list[str]:
        return [q.CmdMethod(r.cmd_method).name for r in self.received if isinstance(r, q.Request)]

    def handle(self, body: bytes) -> tuple[object, bytes]:
        request = q.Request.decode(body)
        response = q.Response(request_id=request.request_id, cmd_method=request.cmd_method)
        method = request.cmd_method
        if method == q.CmdMethod.SHOW_PROCESS_LIST:
            if request.show_process_list is None:
                response = self._error(response, ERR_INTERNAL, "internal error: bad request")
            else:
                response = dataclasses.replace(
                    response, show_process_list=q.ShowProcessListResponse(tuple(self.sessions))
                )
        elif method == q.CmdMethod.GET_PIPELINE_INFO and self.pipelines is not None:
            if request.get_pipeline_info is None:
                response = self._error(response, ERR_INTERNAL, "internal error: bad request")
            else:
                response = dataclasses.replace(response, get_pipeline_info=q.CountResponse(self.pipelines))
        elif method == q.CmdMethod.GET_REPLICA_COUNT and self.replicas is not None:
            response = dataclasses.replace(response, get_replica_count=q.CountResponse(self.replicas))
        else:
            response = self._error(response, 20105, f"{method} not support in current service")
        return request, response.encode()

    @staticmethod
    def _error(response: q.Response, code: int, message: str) -> q.Response:
        return dataclasses.replace(
            response, error=q.MOError(code=code, mysql_code=1105, message=message, sql_state="HY000").encode()
        )


@dataclass
class FakeCluster:
    """Three log stores (the second hosts the HAKeeper and leads its shard) and CN query services."""

    model: HAKeeperModel
    logs: list[FakeLogStore]
    cns: dict[str, FakeQueryService] = field(default_factory=dict)

    @property
    def discovery(self) -> FakeLogStore:
        """What the discovery Service forwards to: here, always the first log store."""
        return self.logs[0]

    @property
    def hakeeper(self) -> FakeLogStore:
        return next(s for s in self.logs if s.hakeeper)

    def publish_shard(self, leader: int = 2) -> None:
        info = pb.ShardInfoQueryResult(
            shard_id=0,
            replicas={i + 1: pb.ReplicaInfo(f"log-{i}", s.address) for i, s in enumerate(self.logs)},
            epoch=3,
            leader_id=leader,
            term=2,
        )
        for s in self.logs:
            s.shard_info = info

    async def add_cn(self, uuid: str, service: FakeQueryService, **fields: object) -> None:
        await service.start()
        self.cns[uuid] = service
        defaults: dict[str, object] = {
            "service_address": f"{uuid}:6002",
            "sql_address": f"{uuid}:6001",
            "query_address": service.address,
            "tick": 990,
            "work_state": 1,
        }
        self.model.cn_stores[uuid] = pb.CNStore(uuid=uuid, **{**defaults, **fields})

    async def stop(self) -> None:
        for s in [*self.logs, *self.cns.values()]:
            await s.stop()


async def start_cluster() -> FakeCluster:
    model = HAKeeperModel(
        log_stores=[pb.LogStore(f"log-{i}", f"log-{i}:32000", 1000, 0) for i in range(3)],
        tn_stores=[pb.TNStore("tn-0", "tn-0:41010", 999, 0, "tn-0:32003", "tn-0:6003")],
    )
    logs = [await FakeLogStore(model, hakeeper=(i == 1)).start() for i in range(3)]
    cluster = FakeCluster(model, logs)
    cluster.publish_shard()
    return cluster
