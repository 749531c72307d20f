"""What the operator asks of a running MatrixOne cluster: the admin interface and its answers.

Controllers depend on the ``MOAdmin`` protocol only. Tests and the demo use a simulated
implementation (in the simulated MatrixOne); production uses the adapter in
``mo_operator.matrixone.rpc`` (``provider.RpcAdminProvider``), which speaks MatrixOne's own
RPC; ``docs/matrixone-rpc.md`` says what it implements and what is unverified. What it
does, found in upstream's source (matrixone-operator ``pkg/mocli``, ``pkg/querycli``,
``pkg/controllers/cnstore``; matrixone ``pkg/logservice/hakeeper_client.go``,
``proto/logservice.proto``, ``proto/metadata.proto``, ``proto/query.proto``,
``proto/lock.proto``):

Transport
    MatrixOne's ``morpc``: TCP, length-prefixed frames carrying gogo-protobuf messages
    (``logservice.RPCRequest``/``RPCResponse`` wrapping ``logservice.Request``/
    ``Response``). Upstream calls ``logservice.NewProxyHAKeeperClient`` with
    ``HAKeeperClientConfig{DiscoveryAddress: <LogSet status.discovery>}`` and a 10 s
    timeout per call, one client per LogSet, cached and closed when the LogSet goes.

Finding the HAKeeper
    Send ``GET_SHARD_INFO`` (MethodType 12) for shard 0 (the HAKeeper shard) to the
    discovery address (``<ls>-log-discovery.<ns>.svc:32001``); the answer maps replica
    IDs to log store addresses and names the leader. Connect to the leader first, then
    the others, and keep the first for which ``CHECK_HAKEEPER`` (10) says it is the
    HAKeeper. Before MatrixOne 2.0 one may instead try the log stores' addresses
    (``hakeeper-client.service-addresses``) directly.

HAKeeper calls (``logservice.MethodType``)
    - ``GET_CLUSTER_DETAILS`` (11) → ``ClusterDetails{TNStores, CNStores, LogStores}``:
      per store UUID, ServiceAddress, Tick, State (``NodeState`` NormalState=0,
      TimeoutState=1); CN stores add SQLAddress, LockServiceAddress, QueryAddress,
      Role, Labels (``map<string, LabelList>``) and WorkState; TN stores add
      LockServiceAddress and LogtailServerAddress. → ``hakeeper_state().stores``.
    - ``GET_CLUSTER_STATE`` (14) → ``CheckerState{Tick, LogState, State (HAKeeperState), …}``:
      the HAKeeper's own tick and bootstrap state, and in ``LogState.Shards`` each log
      shard's members (``LogShardInfo.Replicas`` and ``NonVotingReplicas``: replica ID →
      store UUID). → ``hakeeper_state()`` (``log_shards``).
    - ``PATCH_CN_STORE`` (17) with ``CNStateLabel{UUID, State, Labels}``: upstream's way
      to set Working (with the CN's labels) and Draining. → ``set_cn_work_state``.
    - ``UPDATE_CN_LABEL`` (15) with ``CNStoreLabel{UUID, Labels}``: labels only, used
      when draining is disabled. → ``set_cn_labels``.
    - ``DELETE_CN_STORE`` (18) with ``DeleteCNStore{StoreID}``: forget a removed CN.
      → ``delete_cn_store``. (``UPDATE_CN_WORK_STATE`` (16, ``CNWorkState``) also
      exists; upstream does not use it.)
    An error whose text contains "does not exist" means HAKeeper has no such store;
    the adapter raises ``StoreNotFound`` for it (upstream then treats a drain as done).

CN query service (at the CN store's ``QueryAddress``; ``query.Request.CmdMethod``)
    - ``ShowProcessList`` with ``SysTenant: true``: count sessions with ``FromProxy``
      (MatrixOne with SessionSource, >= 1.1.2) or else those whose Account is neither
      empty nor ``sys``. → ``cn_load().sessions``.
    - ``GetPipelineInfo`` → Count (only with PipelineInfo, >= 1.1.2). → ``pipelines``.
    - ``GetReplicaCount`` → Count (only with ShardingMigration, >= 2.0). → ``replicas``.

Lock service, on the TN's ``LockServiceAddress`` (MatrixOne >= 1.2, LockMigration)
    ``lock.Request`` with ``Method`` ``CanRestartService`` (14), ``SetRestartService``
    (12) or ``RemainTxnInService`` (13) and the CN's UUID as ``ServiceID``
    (``pkg/mocli/lockservice_client.go``): once a draining CN holds no session, upstream
    asks the TN whether it may stop; if not, marks it restarting (the TN moves its lock
    tables away as its transactions end) and asks again later.
    → ``can_restart_cn``, ``set_restart_cn``, ``remain_txn_count``.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from mo_operator.kube.controller.outcome import Transient


class AdminError(Exception):
    """A call to the running cluster failed. Every one is one of the ``Failure`` classes
    (``failure_of``), which tell a controller whether to wait or to report its own fault."""


class NotYet(AdminError, Transient):
    """MatrixOne answered, and said not yet: no HAKeeper yet, not bootstrapped, no quorum,
    or an error of its own. Wait."""


class Unreachable(AdminError, Transient):
    """No answer: connection refused or reset, a name that does not resolve, no answer
    before the deadline. Wait, as the Go operator would; say so after a while."""


class ClientFault(AdminError):
    """The operator's own client is at fault: an answer it cannot decode (a bad frame or
    message, a checksum mismatch, an unknown value) or ``ErrNotSupported`` for a call
    MatrixOne should know. Waiting does not help: report it and fall back."""


class StoreNotFound(NotYet):
    """HAKeeper does not know the store (never registered, or already deleted)."""


class Failure(enum.Enum):
    """The three ways a call to MatrixOne fails, as a controller must tell them apart."""

    NOT_YET = "NotYet"
    UNREACHABLE = "Unreachable"
    CLIENT_FAULT = "ClientFault"


def failure_of(error: AdminError) -> Failure:
    """Which of the three ``error`` is (an ``AdminError`` of no finer class: not yet)."""
    if isinstance(error, ClientFault):
        return Failure.CLIENT_FAULT
    if isinstance(error, Unreachable):
        return Failure.UNREACHABLE
    return Failure.NOT_YET


class WorkState(enum.Enum):
    """A CN's work state in HAKeeper (MatrixOne ``metadata.WorkState``, same names and numbers).

    Draining: the proxy sends it no new sessions and moves existing ones away.
    Drained: draining finished. A CN configured with ``init-work-state = "Draining"``
    starts Draining and works only once the operator sets it Working.
    """

    UNKNOWN = 0
    WORKING = 1
    DRAINING = 2
    DRAINED = 3

    @property
    def mo_name(self) -> str:
        """MatrixOne's spelling: ``Working``, ``Draining``, …"""
        return self.name.capitalize()


class NodeState(enum.Enum):
    """Whether HAKeeper hears a store's heartbeats (``logservice.NodeState``)."""

    NORMAL = 0
    TIMEOUT = 1


class HAKeeperPhase(enum.Enum):
    """The HAKeeper's bootstrap state (``logservice.HAKeeperState``, same numbers)."""

    CREATED = 0
    BOOTSTRAPPING = 1
    BOOTSTRAP_COMMANDS_RECEIVED = 2
    BOOTSTRAP_FAILED = 3
    RUNNING = 4

    @property
    def mo_name(self) -> str:
        """MatrixOne's name without its ``HAKeeper`` prefix: ``Running``, ``BootstrapFailed``, …"""
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True)
class LogStore:
    """A log store as HAKeeper sees it."""

    uuid: str
    service_address: str
    tick: int
    state: NodeState

    @property
    def up(self) -> bool:
        return self.state is NodeState.NORMAL


@dataclass(frozen=True)
class TNStore:
    """A TN store as HAKeeper sees it."""

    uuid: str
    service_address: str
    tick: int
    state: NodeState
    lock_service_address: str = ""
    logtail_server_address: str = ""

    @property
    def up(self) -> bool:
        return self.state is NodeState.NORMAL


@dataclass(frozen=True)
class CNStore:
    """A CN store as HAKeeper sees it; ``labels`` maps a label key to its values."""

    uuid: str
    service_address: str
    sql_address: str
    tick: int
    state: NodeState
    work_state: WorkState
    lock_service_address: str = ""
    query_address: str = ""
    labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def up(self) -> bool:
        return self.state is NodeState.NORMAL


@dataclass(frozen=True)
class LogShard:
    """A log shard's members as HAKeeper holds them (``LogShardInfo``): replica ID → store UUID.

    HAKeeper starts every listed replica on its store (MatrixOne
    ``pkg/hakeeper/checkers/logservice/parse.go`` ``getReplicasToStart``), so a store
    listed here that comes back on an empty disk is told to start a replica whose Raft
    peers remember entries its disk no longer holds."""

    shard_id: int
    replicas: Mapping[int, str] = field(default_factory=dict)
    non_voting: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class HAKeeperState:
    """One consistent look at the HAKeeper: its phase and tick, and every store it knows."""

    phase: HAKeeperPhase
    tick: int
    log_stores: tuple[LogStore, ...] = ()
    tn_stores: tuple[TNStore, ...] = ()
    cn_stores: tuple[CNStore, ...] = ()
    log_shards: tuple[LogShard, ...] = ()

    @property
    def bootstrapped(self) -> bool:
        return self.phase is HAKeeperPhase.RUNNING

    def replicas_on(self, uuid: str) -> tuple[tuple[int, int], ...]:
        """``(shard, replica)`` of every replica HAKeeper still lists on log store ``uuid``."""
        return tuple(
            (shard.shard_id, replica)
            for shard in self.log_shards
            for members in (shard.replicas, shard.non_voting)
            for replica, store in sorted(members.items())
            if store == uuid
        )

    def cn(self, uuid: str) -> CNStore | None:
        """The CN store with ``uuid``, if HAKeeper knows it."""
        return next((s for s in self.cn_stores if s.uuid == uuid), None)

    def up_log_uuids(self) -> frozenset[str]:
        return frozenset(s.uuid for s in self.log_stores if s.up)

    def up_tn_uuids(self) -> frozenset[str]:
        return frozenset(s.uuid for s in self.tn_stores if s.up)

    def up_cn_uuids(self) -> frozenset[str]:
        return frozenset(s.uuid for s in self.cn_stores if s.up)


@dataclass(frozen=True)
class CNLoad:
    """What still runs on a CN: a CN may be removed only when all three are zero."""

    sessions: int
    pipelines: int = 0
    replicas: int = 0

    @property
    def idle(self) -> bool:
        return self.sessions == 0 and self.pipelines == 0 and self.replicas == 0


class MOAdmin(Protocol):
    """The admin interface of one running MatrixOne cluster (one LogSet's HAKeeper).

    Every method may raise AdminError; methods naming a CN raise StoreNotFound when
    HAKeeper does not know it. Implementations bound each call with a timeout.
    """

    async def hakeeper_state(self) -> HAKeeperState:
        """The HAKeeper's phase and tick and the log, TN and CN stores it knows."""
        ...

    async def cn_load(self, uuid: str) -> CNLoad:
        """The sessions, pipelines and sharding replicas still on CN ``uuid``."""
        ...

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        """Set CN ``uuid`` Working or Draining; with ``labels``, also replace its labels."""
        ...

    async def set_cn_labels(self, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        """Replace CN ``uuid``'s labels (the CNSet's ``cnLabels``), leaving its work state."""
        ...

    async def delete_cn_store(self, uuid: str) -> None:
        """Make HAKeeper forget CN ``uuid`` (its pod is gone for good)."""
        ...

    async def can_restart_cn(self, uuid: str) -> bool:
        """Whether the TN lock service lets CN ``uuid`` stop: it holds no lock table a
        live transaction needs (a CN the lock service does not know may stop)."""
        ...

    async def set_restart_cn(self, uuid: str) -> bool:
        """Mark CN ``uuid`` restarting in the TN lock service, which then moves its lock
        tables away as its transactions end; True when the TN took it."""
        ...

    async def remain_txn_count(self, uuid: str) -> int:
        """Transactions still holding locks on CN ``uuid``; -1 when the lock service
        cannot tell (none left, but it is not marked restartable)."""
        ...


class MOAdminProvider(Protocol):
    """Hands out the admin interface of the cluster behind a HAKeeper discovery address.

    Controllers hold one provider; implementations cache a client per address.
    """

    def admin(self, discovery_address: str) -> MOAdmin:
        """The admin interface of the cluster whose HAKeeper is at ``discovery_address``."""
        ...


def cn_labels_from_spec(cn_labels: object) -> dict[str, tuple[str, ...]]:
    """A CNSet's ``spec.cnLabels`` (``[{key, values}]``) as HAKeeper store labels."""
    result: dict[str, tuple[str, ...]] = {}
    if isinstance(cn_labels, list):
        for item in cn_labels:
            if isinstance(item, Mapping) and isinstance(item.get("key"), str):
                result[item["key"]] = tuple(str(v) for v in item.get("values") or ())
    return result
