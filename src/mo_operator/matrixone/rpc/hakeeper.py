"""A HAKeeper client: find the HAKeeper through a discovery address, then call it.

This is what matrixone's ``logservice.NewProxyHAKeeperClient`` does for the Go operator
(``pkg/logservice/hakeeper_client.go`` and ``shardinfo.go`` at matrixorigin/matrixone
7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e):

1. ``GetShardInfo``: send ``GET_SHARD_INFO`` with ``LogRequest{ShardID: 0 (the HAKeeper
   shard), ExcludeHardDownReplicaAddresses: true}`` to the discovery address (a Service in
   front of the log stores) on a short-lived connection. The answer maps replica IDs to
   ``ReplicaInfo{UUID, ServiceAddress}`` and names the leader. An all-zero answer or
   ``LeaderID == 0`` means no HAKeeper yet; replicas without an address are dropped; if the
   leader is not among the replicas, the others are used; if it is there without an
   address, there is no HAKeeper to reach.
2. ``connectToHAKeeper``: connect to those log stores and keep the first whose
   ``CHECK_HAKEEPER`` answer has ``IsHAKeeper``. Go shuffles the list; we try the leader
   first and then the others by replica ID (any replica of the HAKeeper shard answers
   HAKeeper calls, through raft), giving each an equal share of the time left.
3. Calls (``hakeeperClient.request``): a ``logservice.Request`` with the method and its
   argument; a non-zero ``Response.ErrorCode`` is an error (``toError``,
   ``pkg/logservice/errors.go``). ``ErrNoHAKeeper`` means this store no longer hosts the
   HAKeeper (``handleNotHAKeeperError``, ``pkg/logservice/store.go``).

The managed Go client drops its connection after any failed call and retries
"retryable" failures (EOF, no HAKeeper) until the caller's deadline. We keep the
connection across MatrixOne's own error answers, drop it on anything else (including a
timeout, so a half-dead peer cannot hold us), and retry once, with a fresh discovery,
only when the failed connection was one kept from an earlier call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging

from mo_operator.matrixone.admin import ClientFault, StoreNotFound
from mo_operator.matrixone.admin import Unreachable as NoAnswer
from mo_operator.matrixone.rpc.codes import HAKEEPER_SHARD_ID, ErrorCode
from mo_operator.matrixone.rpc.connection import Dialer, MorpcConnection, open_connection
from mo_operator.matrixone.rpc.errors import (
    ConnectionLost,
    NoHAKeeper,
    NotSupported,
    ProtocolError,
    RpcError,
    ServerError,
    Unreachable,
)
from mo_operator.matrixone.rpc.frame import APPROXIMATE_HEADER, DEFAULT_MAX_BODY
from mo_operator.matrixone.rpc.logservice_pb import (
    CheckerState,
    ClusterDetails,
    CNStateLabel,
    CNStoreLabel,
    DeleteCNStore,
    LogRequest,
    Request,
    Response,
    ShardInfoQueryResult,
)
from mo_operator.matrixone.rpc.logservice_pb import MethodType as Method
from mo_operator.matrixone.rpc.metrics import observed
from mo_operator.matrixone.rpc.protobuf import DecodeError

log = logging.getLogger(__name__)

SHARD_INFO_TIMEOUT = 1.0
"""Go's ``getShardInfo`` timeout (``queryShardInfoRaw``: ``time.Second``)."""


async def exchange(conn: MorpcConnection, request: Request, deadline: float) -> Response:
    """Send ``request`` on ``conn`` and decode the answer (its ID is set by the connection)."""

    def encode(request_id: int) -> bytes:
        return dataclasses.replace(request, request_id=request_id).encode()

    body = await conn.call(encode, deadline)
    try:
        return Response.decode(body)
    except DecodeError as e:
        conn.abort()
        raise ProtocolError(f"{conn.address} sent an invalid logservice.Response: {e}") from e


def raise_for_error(response: Response, what: str) -> None:
    """Raise the error a response carries, as ``toError`` and the Go operator read it.

    The Go operator treats an error whose text contains "does not exist" as "HAKeeper does
    not know this CN" (``pkg/controllers/cnstore``; the text comes from
    ``store.go``: ``CN [%s] does not exist``, code ``ErrInternal``).
    """
    code, message = response.error_code, response.error_message
    if code == ErrorCode.OK:
        return
    if code in (ErrorCode.NO_HAKEEPER, ErrorCode.DRAGONBOAT_SHARD_NOT_FOUND):
        raise NoHAKeeper(f"{what}: the log store does not host the HAKeeper (error {code})")
    if "does not exist" in message:
        raise StoreNotFound(f"{what}: {message}")
    name = ErrorCode(code).name if code in ErrorCode._value2member_map_ else ""
    if code == ErrorCode.NOT_SUPPORTED:
        raise NotSupported(code, message or name, what)
    raise ServerError(code, message or name, what)


def hakeeper_candidates(shard: ShardInfoQueryResult) -> list[str]:
    """The addresses to try for the HAKeeper, leader first, as ``GetShardInfo`` filters them."""
    if shard == ShardInfoQueryResult() or shard.leader_id == 0:
        return []
    with_address = {rid: r.service_address for rid, r in sorted(shard.replicas.items()) if r.service_address}
    leader = shard.replicas.get(shard.leader_id)
    if leader is not None and not leader.service_address:
        return []
    ordered = [with_address.pop(shard.leader_id)] if leader is not None else []
    ordered += list(with_address.values())
    return list(dict.fromkeys(ordered))


class HAKeeperClient:
    """The HAKeeper of the cluster behind one discovery address, over one kept connection."""

    def __init__(
        self,
        discovery_address: str,
        *,
        connect_timeout: float = 2.0,
        max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
        dialer: Dialer = open_connection,
    ) -> None:
        self.discovery_address = discovery_address
        self.connect_timeout = connect_timeout
        self.max_frame = max_frame
        self.dialer = dialer
        self._conn: MorpcConnection | None = None
        self._lock = asyncio.Lock()

    # ------------------------------------------------------------------ calls
    async def cluster_details(self, deadline: float) -> ClusterDetails:
        response = await self.call(Request(method=Method.GET_CLUSTER_DETAILS), deadline)
        return response.cluster_details or ClusterDetails()

    async def checker_state(self, deadline: float) -> CheckerState:
        response = await self.call(Request(method=Method.GET_CLUSTER_STATE), deadline)
        return response.checker_state or CheckerState()

    async def patch_cn_store(self, state_label: CNStateLabel, deadline: float) -> None:
        await self.call(Request(method=Method.PATCH_CN_STORE, cn_state_label=state_label), deadline)

    async def update_cn_label(self, label: CNStoreLabel, deadline: float) -> None:
        await self.call(Request(method=Method.UPDATE_CN_LABEL, cn_store_label=label), deadline)

    async def delete_cn_store(self, store: DeleteCNStore, deadline: float) -> None:
        await self.call(Request(method=Method.DELETE_CN_STORE, delete_cn_store=store), deadline)

    async def call(self, request: Request, deadline: float) -> Response:
        """``request`` to the HAKeeper; raises an ``AdminError`` (``StoreNotFound`` included)."""
        what = Method(request.method).name if request.method in Method._value2member_map_ else "call"
        for attempt in range(2):
            with observed(what, deadline):
                conn, kept = await self._connection(deadline)
                retry = kept and attempt == 0
                try:
                    response = await exchange(conn, request, deadline)
                except (ConnectionLost, ProtocolError) as e:
                    self._drop(conn)
                    if not retry:
                        raise
                    log.debug(
                        "HAKeeper connection to %s failed (%s); finding the HAKeeper again", conn.address, e
                    )
                    continue
                except BaseException:
                    self._drop(conn)  # a timeout or cancellation: the peer may be half dead
                    raise
                try:
                    raise_for_error(response, what)
                except NoHAKeeper:
                    self._drop(conn)
                    if not retry:
                        raise
                    log.debug("%s no longer hosts the HAKeeper; finding it again", conn.address)
                    continue
                return response
        raise AssertionError("unreachable: the second attempt returns or raises")

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    # -------------------------------------------------------------- discovery
    async def _connection(self, deadline: float) -> tuple[MorpcConnection, bool]:
        """The kept connection (``True``) or a new one to a freshly found HAKeeper (``False``)."""
        async with self._lock:
            if self._conn is not None and not self._conn.closed:
                return self._conn, True
            self._conn = await self._find(deadline)
            return self._conn, False

    def _drop(self, conn: MorpcConnection) -> None:
        if self._conn is conn:
            self._conn = None
        conn.abort()

    async def _shard_info(self, deadline: float) -> ShardInfoQueryResult:
        """Ask the discovery address where the HAKeeper shard's replicas are.

        Go bounds this query by 1 s (``queryShardInfoRaw``) and its managed client retries
        on a new connection, which the Service may send to another log store; we do the
        same, up to three attempts of at least ``SHARD_INFO_TIMEOUT`` each.
        """
        loop = asyncio.get_running_loop()
        failure: BaseException | None = None
        for _ in range(3):
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            attempt = loop.time() + min(remaining, max(SHARD_INFO_TIMEOUT, remaining / 3))
            try:
                return await self._shard_info_once(attempt)
            except (Unreachable, ConnectionLost, ProtocolError, TimeoutError) as e:
                failure = e
        if isinstance(failure, RpcError):
            raise failure
        raise TimeoutError

    async def _shard_info_once(self, deadline: float) -> ShardInfoQueryResult:
        with observed(Method.GET_SHARD_INFO.name, deadline):
            conn = await self._open(self.discovery_address, deadline)
            try:
                request = Request(
                    method=Method.GET_SHARD_INFO,
                    log_request=LogRequest(
                        shard_id=HAKEEPER_SHARD_ID, exclude_hard_down_replica_addresses=True
                    ),
                )
                response = await exchange(conn, request, deadline)
            finally:
                conn.abort()
            raise_for_error(response, f"GET_SHARD_INFO at {self.discovery_address}")
        return response.shard_info or ShardInfoQueryResult()

    async def _find(self, deadline: float) -> MorpcConnection:
        shard = await self._shard_info(deadline)
        candidates = hakeeper_candidates(shard)
        if not candidates:
            raise NoHAKeeper(f"{self.discovery_address} knows no HAKeeper replica with a leader yet")
        problems: list[str] = []
        failures: list[BaseException] = []
        loop = asyncio.get_running_loop()
        for i, address in enumerate(candidates):
            share = loop.time() + (deadline - loop.time()) / (len(candidates) - i)
            try:
                with observed(Method.CHECK_HAKEEPER.name, share):
                    conn = await self._check(address, share)
                log.debug("HAKeeper of %s found at %s", self.discovery_address, address)
                return conn
            except RpcError as e:
                problems.append(str(e))  # it names the address
                failures.append(e)
            except TimeoutError as e:
                problems.append(f"{address}: no answer in time")
                failures.append(e)
        summary = f"no HAKeeper among {', '.join(candidates)}: {'; '.join(problems)}"
        if failures and all(isinstance(f, NoAnswer | TimeoutError) for f in failures):
            raise Unreachable(summary)
        if any(isinstance(f, ClientFault) for f in failures):
            raise ProtocolError(summary)
        raise NoHAKeeper(summary)

    async def _check(self, address: str, deadline: float) -> MorpcConnection:
        """A connection to ``address`` once it answers ``CHECK_HAKEEPER`` that it hosts the HAKeeper."""
        conn = await self._open(address, deadline)
        found = False
        try:
            response = await exchange(conn, Request(method=Method.CHECK_HAKEEPER), deadline)
            raise_for_error(response, f"CHECK_HAKEEPER at {address}")
            found = response.is_ha_keeper
            if not found:
                raise NoHAKeeper(f"{address} is not the HAKeeper")
            return conn
        finally:
            if not found:
                conn.abort()

    async def _open(self, address: str, deadline: float) -> MorpcConnection:
        remaining = deadline - asyncio.get_running_loop().time()
        return await MorpcConnection.open(
            address,
            payload_message=True,
            connect_timeout=max(0.001, min(self.connect_timeout, remaining)),
            max_frame=self.max_frame,
            dialer=self.dialer,
        )
