"""``MOAdminProvider`` over MatrixOne's own RPC: what the operator uses against a real cluster.

The Go operator (matrixorigin/matrixone-operator 2301e3b54137033a4ffd8ad8d6598948583f76af,
``pkg/mocli/manager.go``) keeps one ``logservice.NewProxyHAKeeperClient`` per LogSet,
built from the LogSet's discovery address, and bounds each use by
``DefaultRPCTimeout = 10 * time.Second``; ``pkg/querycli`` asks CNs for their load with
the same 10 s. We keep one ``RpcAdmin`` per discovery address, and every ``MOAdmin`` call,
HAKeeper discovery included, has ``timeout`` seconds in all.

How each call maps to MatrixOne (``pkg/controllers/cnstore/controller.go`` upstream):

- ``hakeeper_state``: ``GET_CLUSTER_STATE`` (phase and tick) then ``GET_CLUSTER_DETAILS``
  (stores). Two requests, so not one atomic look; stores are sorted by UUID.
- ``cn_load``: ``GET_CLUSTER_DETAILS`` for the CN's ``QueryAddress``, then its query
  service (``query.py``).
- ``set_cn_work_state``: ``PATCH_CN_STORE`` with ``CNStateLabel{UUID, State, Labels}``,
  as upstream sets Working (with the CNSet's labels) and Draining. HAKeeper only replaces
  labels when the map is non-empty (``CNState.PatchCNStore``, matrixone
  ``pkg/pb/logservice/logservice.go``: ``if stateLabel.Labels != nil``, and an empty map
  arrives as nil), so an explicit empty ``labels`` is followed by ``UPDATE_CN_LABEL``.
- ``set_cn_labels``: ``UPDATE_CN_LABEL`` with ``CNStoreLabel{UUID, Labels}``.
- ``delete_cn_store``: ``DELETE_CN_STORE`` with ``DeleteCNStore{StoreID}``. HAKeeper
  answers success for a CN it does not know (``store.deleteCNStore``), so this never
  raises ``StoreNotFound``; callers treat both the same.
- ``can_restart_cn``, ``set_restart_cn``, ``remain_txn_count``: ``GET_CLUSTER_DETAILS``
  for the first TN's ``LockServiceAddress`` (upstream's ``GetTN``), then one
  ``lock.Request`` there (``lockservice.py``). The TN answers a CN it does not know with
  "may restart", "OK" and 0, never an error.

Errors: ``StoreNotFound`` when HAKeeper answers "CN [uuid] does not exist" (or the CN is
not in its details); every other failure is one of the admin interface's three classes,
naming the call and address, its cause chained: ``NotYet`` (MatrixOne answered with an
error: no HAKeeper yet, not bootstrapped, no quorum), ``Unreachable`` (refused, reset, a
name that does not resolve, closed mid-frame, no answer within ``timeout``) and
``ClientFault`` (a frame or message we cannot decode, a checksum mismatch, an unknown
value, ``ErrNotSupported`` for a call MatrixOne should know).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

from mo_operator.matrixone.admin import (
    AdminError,
    ClientFault,
    CNLoad,
    CNStore,
    Failure,
    HAKeeperPhase,
    HAKeeperState,
    LogShard,
    LogStore,
    NodeState,
    NotYet,
    StoreNotFound,
    TNStore,
    Unreachable,
    WorkState,
    failure_of,
)
from mo_operator.matrixone.rpc import lock_pb, lockservice, query
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc.codes import labels_from_pb, labels_to_pb
from mo_operator.matrixone.rpc.connection import Dialer, open_connection
from mo_operator.matrixone.rpc.frame import APPROXIMATE_HEADER, DEFAULT_MAX_BODY
from mo_operator.matrixone.rpc.hakeeper import HAKeeperClient

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_TIMEOUT = 10.0
"""Upstream's ``mocli.DefaultRPCTimeout`` and ``querycli`` timeout."""
DEFAULT_CONNECT_TIMEOUT = 2.0
"""Per TCP connect; MatrixOne's own HAKeeper clients use 1 s (``getRPCClient``), we allow
a little more for DNS in a busy cluster. Never more than what is left of ``timeout``."""


FAILURES: dict[Failure, type[AdminError]] = {
    Failure.NOT_YET: NotYet,
    Failure.UNREACHABLE: Unreachable,
    Failure.CLIENT_FAULT: ClientFault,
}
"""The admin interface's class of each failure: what every call raises, the cause chained."""


def _node_state(value: int) -> NodeState:
    """``logservice.NodeState``; an unknown value counts as not heard from."""
    return NodeState.NORMAL if value == NodeState.NORMAL.value else NodeState.TIMEOUT


def _work_state(value: int) -> WorkState:
    try:
        return WorkState(value)
    except ValueError:
        return WorkState.UNKNOWN


def hakeeper_state_from_pb(state: pb.CheckerState, details: pb.ClusterDetails) -> HAKeeperState:
    """Our ``HAKeeperState`` from HAKeeper's ``CheckerState`` and ``ClusterDetails``."""
    try:
        phase = HAKeeperPhase(state.state)
    except ValueError:
        raise ClientFault(f"HAKeeper reports an unknown HAKeeperState {state.state}") from None
    return HAKeeperState(
        phase=phase,
        tick=state.tick,
        log_stores=tuple(
            LogStore(s.uuid, s.service_address, s.tick, _node_state(s.state))
            for s in sorted(details.log_stores, key=lambda s: s.uuid)
        ),
        tn_stores=tuple(
            TNStore(
                s.uuid,
                s.service_address,
                s.tick,
                _node_state(s.state),
                lock_service_address=s.lock_service_address,
                logtail_server_address=s.logtail_server_address,
            )
            for s in sorted(details.tn_stores, key=lambda s: s.uuid)
        ),
        cn_stores=tuple(
            CNStore(
                s.uuid,
                s.service_address,
                s.sql_address,
                s.tick,
                _node_state(s.state),
                _work_state(s.work_state),
                lock_service_address=s.lock_service_address,
                query_address=s.query_address,
                labels=labels_from_pb(s.labels),
            )
            for s in sorted(details.cn_stores, key=lambda s: s.uuid)
        ),
        log_shards=tuple(
            LogShard(shard_id, dict(info.replicas), dict(info.non_voting_replicas))
            for shard_id, info in sorted(state.log_state.shards.items())
        ),
    )


class RpcAdmin:
    """``MOAdmin`` for the cluster whose HAKeeper is found at one discovery address."""

    def __init__(
        self,
        discovery_address: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
        dialer: Dialer = open_connection,
    ) -> None:
        self.discovery_address = discovery_address
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_frame = max_frame
        self.dialer = dialer
        self.hakeeper = HAKeeperClient(
            discovery_address, connect_timeout=connect_timeout, max_frame=max_frame, dialer=dialer
        )

    async def _run(self, what: str, op: Callable[[float], Awaitable[T]]) -> T:
        """Run ``op(deadline)`` within ``timeout``; every failure becomes an AdminError saying what and where."""
        deadline = asyncio.get_running_loop().time() + self.timeout
        where = f"{what} (HAKeeper via {self.discovery_address})"
        try:
            async with asyncio.timeout_at(deadline):
                return await op(deadline)
        except TimeoutError as e:
            raise Unreachable(f"{where}: no answer within {self.timeout:g}s") from e
        except StoreNotFound as e:
            raise StoreNotFound(f"{where}: {e}") from e
        except AdminError as e:
            raise FAILURES[failure_of(e)](f"{where}: {e}") from e
        except Exception as e:  # a bug or an input we did not foresee: never crash a controller
            log.exception("%s failed unexpectedly", where)
            raise ClientFault(f"{where}: unexpected {type(e).__name__}: {e}") from e

    async def hakeeper_state(self) -> HAKeeperState:
        async def op(deadline: float) -> HAKeeperState:
            state = await self.hakeeper.checker_state(deadline)
            details = await self.hakeeper.cluster_details(deadline)
            return hakeeper_state_from_pb(state, details)

        return await self._run("hakeeper_state", op)

    async def cn_load(self, uuid: str) -> CNLoad:
        async def op(deadline: float) -> CNLoad:
            details = await self.hakeeper.cluster_details(deadline)
            store = next((s for s in details.cn_stores if s.uuid == uuid), None)
            if store is None:
                raise StoreNotFound(f"CN [{uuid}] does not exist")
            if not store.query_address:
                raise NotYet(f"CN [{uuid}] has no query service address in HAKeeper yet")
            remaining = deadline - asyncio.get_running_loop().time()
            return await query.cn_load(
                store.query_address,
                deadline,
                connect_timeout=max(0.001, min(self.connect_timeout, remaining)),
                max_frame=self.max_frame,
                dialer=self.dialer,
            )

        return await self._run(f"cn_load {uuid}", op)

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        if state is WorkState.UNKNOWN:
            raise ClientFault(f"set_cn_work_state {uuid}: {state.mo_name} is not a state a CN can be put in")

        async def op(deadline: float) -> None:
            patch = pb.CNStateLabel(uuid=uuid, state=state.value, labels=labels_to_pb(dict(labels or {})))
            await self.hakeeper.patch_cn_store(patch, deadline)
            if labels is not None and not labels:
                await self.hakeeper.update_cn_label(pb.CNStoreLabel(uuid=uuid), deadline)

        await self._run(f"set_cn_work_state {uuid} {state.mo_name}", op)

    async def set_cn_labels(self, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        async def op(deadline: float) -> None:
            label = pb.CNStoreLabel(uuid=uuid, labels=labels_to_pb(dict(labels)))
            await self.hakeeper.update_cn_label(label, deadline)

        await self._run(f"set_cn_labels {uuid}", op)

    async def delete_cn_store(self, uuid: str) -> None:
        async def op(deadline: float) -> None:
            await self.hakeeper.delete_cn_store(pb.DeleteCNStore(store_id=uuid), deadline)

        await self._run(f"delete_cn_store {uuid}", op)

    async def can_restart_cn(self, uuid: str) -> bool:
        answer = await self._lock(lock_pb.Method.CanRestartService, uuid)
        return answer.can_restart_service.ok

    async def set_restart_cn(self, uuid: str) -> bool:
        answer = await self._lock(lock_pb.Method.SetRestartService, uuid)
        return answer.set_restart_service.ok

    async def remain_txn_count(self, uuid: str) -> int:
        answer = await self._lock(lock_pb.Method.RemainTxnInService, uuid)
        return answer.remain_txn_in_service.remain_txn

    async def _lock(self, method: lock_pb.Method, uuid: str) -> lock_pb.Response:
        """Ask the lock service of the first TN HAKeeper lists (upstream's ``GetTN``)."""

        async def op(deadline: float) -> lock_pb.Response:
            details = await self.hakeeper.cluster_details(deadline)
            tn = next((s for s in details.tn_stores if s.lock_service_address), None)
            if tn is None:
                raise NotYet("HAKeeper lists no TN store with a lock service address")
            remaining = deadline - asyncio.get_running_loop().time()
            return await lockservice.ask(
                tn.lock_service_address,
                method,
                uuid,
                deadline,
                connect_timeout=max(0.001, min(self.connect_timeout, remaining)),
                max_frame=self.max_frame,
                dialer=self.dialer,
            )

        return await self._run(f"{method.name.lower()} {uuid}", op)

    async def close(self) -> None:
        await self.hakeeper.close()


class RpcAdminProvider:
    """``MOAdminProvider`` speaking morpc to real MatrixOne clusters; one client per discovery address.

    ``timeout`` bounds each admin call (discovery, reconnects and all), ``connect_timeout``
    each TCP connect, ``max_message_size`` the protobuf body we accept (morpc's default).
    ``dialer`` opens every TCP connection: production leaves it (``asyncio.open_connection``,
    cluster DNS); the dev kit gives the one that reaches the simulated MatrixOne.
    Clients connect lazily, so constructing this and calling ``admin`` never does I/O.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_message_size: int = DEFAULT_MAX_BODY,
        dialer: Dialer = open_connection,
    ) -> None:
        if timeout <= 0 or connect_timeout <= 0 or max_message_size <= 0:
            raise ValueError("timeouts and the message size must be positive")
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_frame = max_message_size + APPROXIMATE_HEADER
        self.dialer = dialer
        self._admins: dict[str, RpcAdmin] = {}

    def admin(self, discovery_address: str) -> RpcAdmin:
        found = self._admins.get(discovery_address)
        if found is None:
            found = RpcAdmin(
                discovery_address,
                timeout=self.timeout,
                connect_timeout=self.connect_timeout,
                max_frame=self.max_frame,
                dialer=self.dialer,
            )
            self._admins[discovery_address] = found
        return found

    async def close(self) -> None:
        """Close every client's connection (the operator calls this on the way out)."""
        admins, self._admins = list(self._admins.values()), {}
        for admin in admins:
            await admin.close()
