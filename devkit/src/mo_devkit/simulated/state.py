"""The simulated MatrixOne clusters: one HAKeeper per LogSet, its stores, CN work states and sessions.

The model advances only through ``observe(instances, now)`` (what the pods do) and
the admin operations (what the operator asks); time is always passed in, so every
transition is a deterministic function that unit tests drive step by step.

How it mirrors MatrixOne, seen from outside:

- A log store heartbeats while its process serves. The HAKeeper bootstraps once every
  member listed in ``init-hakeeper-members`` serves with ``bootstrap-cluster = true``;
  from then on it answers while a majority of its replica count of log stores serve
  (a raft quorum). Its state lives on the log stores' volume claims: a LogSet whose
  pods are all gone keeps its HAKeeper (not answering) while any claim its pods
  mounted still exists, and is forgotten with its stores once none does.
- TN and CN processes wait for their HAKeeper before they serve, as ``mo-service``
  does (matrixone ``cmd/mo-service/launch.go`` at 7c27538f: ``waitHAKeeperReady``
  retries for 5 minutes, then a TN waits for HAKeeper to be Running, ``waitHAKeeperRunning``,
  and a CN for a TN store holding shards, ``waitAnyShardReady``); a process still
  waiting after ``Settings.hakeeper_wait_seconds`` exits (``panic``), and the kubelet
  restarts it. A TN registers (heartbeats) with the first HAKeeper its config reaches
  that answers; a CN with one that also lists a TN. A CN first registers in its
  ``cn.init-work-state`` (``CNState.Update``: Working unless configured) and then keeps
  the work state HAKeeper holds for it, across restarts, until its store is deleted.
- The HAKeeper shard's replicas live on its member log stores (replica IDs from 131072,
  as upstream's bootstrap numbers them); every member hosts a HAKeeper replica and
  answers HAKeeper calls while a quorum serves; the first member serving leads.
- A store that stops heartbeating shows ``TIMEOUT`` after ``store_timeout`` seconds; the
  checker removes its replicas ``removal_delay`` seconds later (a Raft config change
  takes its time, and may stall), and a store that comes back after that joins as a new
  member under a new replica ID.
- A log store that comes back on another disk (a claim made anew: an empty disk) while
  HAKeeper still lists it as a member is the fault MatrixOne cannot survive: HAKeeper
  starts the listed replica on it (``getReplicasToStart``), its Raft peers send it a
  commit index its empty log does not hold, and dragonboat panics (matrixone #25029,
  lni/dragonboat#256), or, worse, it votes without the entries it acknowledged. The
  model records it in ``HAKeeper.faults`` and the store never serves again.
- A CN's sessions die with its process. A Draining CN hands its sessions over to the
  Working CNs of its cluster, evenly over ``drain_seconds``; with no Working CN to
  take them they stay, as a real proxy cannot migrate them anywhere.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from mo_devkit.simulated.backups import BackupCatalog
from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.resolve import LogSetKey, Unresolved
from mo_devkit.simulated.view import Key
from mo_operator.matrixone.admin import (
    CNLoad,
    CNStore,
    HAKeeperPhase,
    HAKeeperState,
    LogShard,
    LogStore,
    NodeState,
    StoreNotFound,
    TNStore,
    WorkState,
)
from mo_operator.matrixone.component import Component

FIRST_REPLICA_ID = 131072
"""The HAKeeper shard's first replica ID (upstream's ``init-hakeeper-members``: 131072 + i)."""


@dataclass
class Settings:
    """How fast the simulated MatrixOne moves (seconds)."""

    store_timeout: float = 2.0
    """How long a store may miss heartbeats before HAKeeper shows it down."""
    tick_seconds: float = 0.1
    """One HAKeeper tick (the ``Tick`` in HAKeeper's answers)."""
    drain_seconds: float = 2.0
    """How long a Draining CN takes to hand all its sessions over to Working CNs."""
    hakeeper_wait_seconds: float = 300.0
    """How long a TN or CN process waits for its HAKeeper (and a CN for a TN) before it
    exits: MatrixOne's ``waitHAKeeperReady`` gives up after 5 minutes."""
    removal_delay: float = 0.0
    """How long after a log store shows TIMEOUT HAKeeper takes to remove its replicas."""


@dataclass
class StoreRecord:
    """A store as HAKeeper holds it, plus the CN's sessions (which MatrixOne keeps in the CN)."""

    uuid: str
    component: Component
    pod: Key
    process: str
    last_heartbeat: float
    service_address: str = ""
    sql_address: str = ""
    lock_service_address: str = ""
    logtail_address: str = ""
    query_address: str = ""
    work_state: WorkState = WorkState.WORKING
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sessions: int = 0
    drain_from: tuple[float, int] | None = None
    """``(since, sessions then)``: the baseline a drain moves sessions against."""


@dataclass
class HAKeeper:
    """The HAKeeper of one LogSet and the stores it knows."""

    key: LogSetKey
    phase: HAKeeperPhase = HAKeeperPhase.CREATED
    bootstrapped_at: float = 0.0
    replicas: int = 0
    """The shard's replica count (the bootstrap's); membership is repaired back to it."""
    members: tuple[str, ...] = ()
    """Log stores holding a replica now: the bootstrap members, then as the checker
    replaces expired ones (``_repair_membership``)."""
    replica_ids: dict[str, int] = field(default_factory=dict)
    """Each member's replica ID in the HAKeeper shard."""
    next_replica_id: int = FIRST_REPLICA_ID
    """The ID the next added replica gets: HAKeeper never gives an ID twice."""
    stores: dict[Component, dict[str, StoreRecord]] = field(
        default_factory=lambda: {Component.LOG: {}, Component.TN: {}, Component.CN: {}}
    )
    live_logs: frozenset[str] = frozenset()
    """Log stores serving at the last observation (the raft quorum counts these)."""
    data: frozenset[Key] = frozenset()
    """Volume claims its log pods have mounted: where its state survives the pods."""
    restored_from: str | None = None
    """The backup whose HAKeeper data it bootstrapped from (a cluster restored from a backup)."""
    disks: dict[str, frozenset[str]] = field(default_factory=dict)
    """Each log store's disks (claim UIDs) when it last served: its Raft log is there."""
    faults: list[str] = field(default_factory=list)
    """What went wrong that MatrixOne cannot repair (a member back on an empty disk)."""
    failed: set[str] = field(default_factory=set)
    """Log stores whose process crashes on start for a fault: they never serve again."""

    @property
    def bootstrapped(self) -> bool:
        return self.phase is HAKeeperPhase.RUNNING

    @property
    def available(self) -> bool:
        """Bootstrapped and a majority of its members serve: it answers calls."""
        return self.bootstrapped and len(self.live_members) >= len(self.members) // 2 + 1

    @property
    def live_members(self) -> frozenset[str]:
        """Members serving at the last observation: the Raft quorum counts these."""
        return self.live_logs & frozenset(self.members)

    @property
    def leader(self) -> str | None:
        """The member leading the HAKeeper shard: the first serving one, while a quorum serves."""
        if not self.available:
            return None
        return next((m for m in self.members if m in self.live_logs), None)

    def cn(self, uuid: str) -> StoreRecord:
        record = self.stores[Component.CN].get(uuid)
        if record is None:
            raise StoreNotFound(f"CN store {uuid} does not exist")
        return record


class MOModel:
    """Every simulated MatrixOne cluster, keyed by its LogSet."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()
        self.hakeepers: dict[LogSetKey, HAKeeper] = {}
        self.backups = BackupCatalog()
        """The backups ``mo_br`` made and the paths it restored them to (see backuptool.py)."""
        self._serving_cns: dict[str, tuple[str, LogSetKey | None]] = {}
        """CN UUID → the process that served it at the last observation, and the HAKeeper
        it heartbeated to (None when it reached none: it still serves its sessions)."""
        self.now = 0.0
        """The time of the last observation."""
        self._waiting: dict[str, float] = {}
        """TN or CN process → since when it waits for its HAKeeper (not registered yet)."""

    # ------------------------------------------------------------ observing
    def observe(
        self, instances: Iterable[Instance], now: float, volume_claims: Collection[Key] = frozenset()
    ) -> None:
        """Advance to ``now`` given what every MatrixOne pod does and which claims exist."""
        instances = list(instances)
        self.now = now
        self._observe_logs([i for i in instances if i.component is Component.LOG], now, volume_claims)
        self._serving_cns = {}
        waiting: dict[str, float] = {}
        # TNs first: a CN registers only with a HAKeeper that lists a TN (waitAnyShardReady)
        for i in sorted(instances, key=lambda i: i.component is Component.CN):
            if i.component not in (Component.TN, Component.CN) or not i.serving or i.uuid is None:
                continue
            hakeeper = self.reachable(i)
            if hakeeper is not None and i.component is Component.CN and not _lists_a_tn(hakeeper, now, self):
                hakeeper = None
            if hakeeper is not None:
                _heartbeat(hakeeper, i, now)
            elif self.registration(i) is None:
                waiting[i.process] = self._waiting.get(i.process, now)
            if i.component is Component.CN:
                self._serving_cns[i.uuid] = (i.process, hakeeper.key if hakeeper is not None else None)
        self._waiting = waiting
        for hakeeper in self.hakeepers.values():
            for record in hakeeper.stores[Component.CN].values():
                if not self._cn_serving(hakeeper, record):
                    record.sessions = 0
            self._drain(hakeeper, now)

    def _observe_logs(self, logs: list[Instance], now: float, volume_claims: Collection[Key]) -> None:
        by_logset: dict[LogSetKey, list[Instance]] = {}
        for i in logs:
            assert i.logset is not None
            by_logset.setdefault(i.logset, []).append(i)
        for key, hakeeper in list(self.hakeepers.items()):
            if key in by_logset:
                continue
            hakeeper.live_logs = frozenset()
            if not hakeeper.data & frozenset(volume_claims):
                del self.hakeepers[key]
        for key, members in by_logset.items():
            hakeeper = self.hakeepers.setdefault(key, HAKeeper(key))
            hakeeper.data |= {(i.namespace, claim) for i in members for claim in i.volume_claims}
            serving = [i for i in members if i.serving and _starts(hakeeper, i)]
            for i in serving:
                _heartbeat(hakeeper, i, now)
            hakeeper.live_logs = frozenset(i.uuid for i in serving if i.uuid is not None)
            if not hakeeper.bootstrapped:
                _try_bootstrap(hakeeper, serving, now, self.backups)
            _repair_membership(hakeeper, now, self.settings.store_timeout + self.settings.removal_delay)

    def reachable(self, instance: Instance) -> HAKeeper | None:
        """The HAKeeper a TN, CN or proxy reaches: the first of its targets that answers."""
        if isinstance(instance.hakeeper, Unresolved):
            return None
        for key in instance.hakeeper:
            hakeeper = self.hakeepers.get(key)
            if hakeeper is not None and hakeeper.available:
                return hakeeper
        return None

    def registration(self, instance: Instance) -> StoreRecord | None:
        """The store record of this instance's current process, if it registered."""
        if instance.uuid is None or isinstance(instance.hakeeper, Unresolved):
            return None
        for key in instance.hakeeper:
            hakeeper = self.hakeepers.get(key)
            stores = hakeeper.stores.get(instance.component, {}) if hakeeper is not None else {}
            record = stores.get(instance.uuid)
            if record is not None and record.process == instance.process and record.pod == instance.key:
                return record
        return None

    def gave_up(self, instance: Instance) -> bool:
        """Whether this TN or CN process, at the last observation, had waited for its
        HAKeeper longer than MatrixOne does before it exits (``hakeeper_wait_seconds``)."""
        since = self._waiting.get(instance.process)
        return since is not None and self.now - since >= self.settings.hakeeper_wait_seconds

    # ------------------------------------------------------------ answering
    def shard(self, key: LogSetKey, now: float) -> tuple[dict[int, tuple[str, str]], int] | None:
        """The HAKeeper shard as the log stores' gossip knows it (``GET_SHARD_INFO``): replica
        ID → (store UUID, service address) of the members not hard down, and the leader's
        replica ID (0: none); None before the shard exists (HAKeeper not bootstrapped)."""
        hakeeper = self.hakeepers.get(key)
        if hakeeper is None or not hakeeper.bootstrapped:
            return None
        records = hakeeper.stores[Component.LOG]
        replicas: dict[int, tuple[str, str]] = {}
        for member in hakeeper.members:
            record = records.get(member)
            down = record is None or now - record.last_heartbeat > self.settings.store_timeout
            if not down:
                assert record is not None
                replicas[hakeeper.replica_ids[member]] = (member, record.service_address)
        leader = hakeeper.leader
        return replicas, hakeeper.replica_ids[leader] if leader is not None else 0

    def available(self, key: LogSetKey) -> bool:
        hakeeper = self.hakeepers.get(key)
        return hakeeper is not None and hakeeper.available

    def hakeeper_state(self, key: LogSetKey, now: float) -> HAKeeperState:
        """HAKeeper's answer to GET_CLUSTER_DETAILS and GET_CLUSTER_STATE together."""
        hakeeper = self.hakeepers[key]
        tick = self._tick(hakeeper, now)

        def state(record: StoreRecord) -> NodeState:
            late = now - record.last_heartbeat > self.settings.store_timeout
            return NodeState.TIMEOUT if late else NodeState.NORMAL

        stores = hakeeper.stores
        return HAKeeperState(
            phase=hakeeper.phase,
            tick=tick,
            log_stores=tuple(
                LogStore(r.uuid, r.service_address, self._tick(hakeeper, r.last_heartbeat), state(r))
                for r in _sorted(stores[Component.LOG])
            ),
            tn_stores=tuple(
                TNStore(
                    r.uuid,
                    r.service_address,
                    self._tick(hakeeper, r.last_heartbeat),
                    state(r),
                    lock_service_address=r.lock_service_address,
                    logtail_server_address=r.logtail_address,
                )
                for r in _sorted(stores[Component.TN])
            ),
            cn_stores=tuple(
                CNStore(
                    r.uuid,
                    r.service_address,
                    r.sql_address,
                    self._tick(hakeeper, r.last_heartbeat),
                    state(r),
                    r.work_state,
                    lock_service_address=r.lock_service_address,
                    query_address=r.query_address,
                    labels=dict(r.labels),
                )
                for r in _sorted(stores[Component.CN])
            ),
            log_shards=(
                (LogShard(0, {hakeeper.replica_ids[m]: m for m in hakeeper.members}),)
                if hakeeper.bootstrapped
                else ()
            ),
        )

    def cn_load(self, key: LogSetKey, uuid: str) -> CNLoad:
        return CNLoad(sessions=self.hakeepers[key].cn(uuid).sessions)

    # ------------------------------------------------------------- changing
    def set_work_state(
        self,
        key: LogSetKey,
        uuid: str,
        state: WorkState,
        labels: Mapping[str, tuple[str, ...]] | None,
        now: float,
    ) -> None:
        record = self.hakeepers[key].cn(uuid)
        if state is WorkState.DRAINING and record.work_state is not WorkState.DRAINING:
            record.drain_from = (now, record.sessions)
        elif state is not WorkState.DRAINING:
            record.drain_from = None
        record.work_state = state
        if labels is not None:
            record.labels = dict(labels)

    def set_labels(self, key: LogSetKey, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        self.hakeepers[key].cn(uuid).labels = dict(labels)

    def delete_cn(self, key: LogSetKey, uuid: str) -> None:
        hakeeper = self.hakeepers[key]
        hakeeper.cn(uuid)
        del hakeeper.stores[Component.CN][uuid]

    def set_sessions(self, uuid: str, sessions: int, now: float) -> None:
        """Give CN ``uuid`` exactly ``sessions`` sessions (a test arranging its scene).

        On a Draining CN this restarts the drain from the new count.
        """
        if sessions < 0:
            raise ValueError(f"sessions must not be negative, got {sessions}")
        record = self._find_cn(uuid)
        record.sessions = sessions
        if record.work_state is WorkState.DRAINING:
            record.drain_from = (now, sessions)

    def sessions(self, uuid: str) -> int:
        return self._find_cn(uuid).sessions

    def open_sessions(self, key: LogSetKey, count: int) -> int:
        """Clients open ``count`` sessions through the proxy: each goes to the Working CN
        with the fewest. Returns how many found a CN (none when no CN works)."""
        hakeeper = self.hakeepers.get(key)
        if hakeeper is None or not hakeeper.available:
            return 0
        targets = self._working(hakeeper)
        if not targets:
            return 0
        _spread(count, targets)
        return count

    # ------------------------------------------------------------ internals
    def _tick(self, hakeeper: HAKeeper, at: float) -> int:
        if not hakeeper.bootstrapped or self.settings.tick_seconds <= 0:
            return 0
        return max(0, int((at - hakeeper.bootstrapped_at) / self.settings.tick_seconds))

    def _cn_serving(self, hakeeper: HAKeeper, record: StoreRecord) -> bool:
        """Whether the CN behind ``record`` runs, as that store of ``hakeeper``'s cluster."""
        found = self._serving_cns.get(record.uuid)
        if found is None or found[0] != record.process:
            return False
        return found[1] is None or found[1] == hakeeper.key

    def _working(self, hakeeper: HAKeeper) -> list[StoreRecord]:
        return [
            r
            for r in hakeeper.stores[Component.CN].values()
            if r.work_state is WorkState.WORKING and self._cn_serving(hakeeper, r)
        ]

    def _find_cn(self, uuid: str) -> StoreRecord:
        found = [
            (h, h.stores[Component.CN][uuid])
            for h in self.hakeepers.values()
            if uuid in h.stores[Component.CN]
        ]
        if not found:
            raise StoreNotFound(f"CN store {uuid} does not exist")
        return max(found, key=lambda hr: (self._cn_serving(*hr), hr[1].last_heartbeat))[1]

    def _drain(self, hakeeper: HAKeeper, now: float) -> None:
        targets = self._working(hakeeper)
        for record in _sorted(hakeeper.stores[Component.CN]):
            if record.work_state is not WorkState.DRAINING or record.sessions == 0:
                continue
            since, start = record.drain_from or (now, record.sessions)
            record.drain_from = (since, start)
            duration = self.settings.drain_seconds
            left = 0.0 if duration <= 0 else max(0.0, 1.0 - (now - since) / duration)
            keep = min(record.sessions, math.ceil(start * left))
            if targets and keep < record.sessions:
                _spread(record.sessions - keep, targets)
                record.sessions = keep


def _sorted(records: Mapping[str, StoreRecord]) -> list[StoreRecord]:
    return [records[k] for k in sorted(records)]


def _spread(count: int, targets: list[StoreRecord]) -> None:
    for _ in range(count):
        min(targets, key=lambda r: (r.sessions, r.uuid)).sessions += 1


def _heartbeat(hakeeper: HAKeeper, instance: Instance, now: float) -> None:
    assert instance.uuid is not None
    stores = hakeeper.stores[instance.component]
    record = stores.get(instance.uuid)
    if record is None:
        record = StoreRecord(
            instance.uuid,
            instance.component,
            instance.key,
            instance.process,
            now,
            work_state=instance.init_work_state,
        )
        if record.work_state is WorkState.DRAINING:
            record.drain_from = (now, 0)
        stores[instance.uuid] = record
    elif record.process != instance.process:
        record.sessions = 0
        if record.work_state is WorkState.DRAINING:
            record.drain_from = (now, 0)
    record.pod = instance.key
    record.process = instance.process
    record.last_heartbeat = now
    record.service_address = instance.service_address
    record.sql_address = instance.sql_address
    record.lock_service_address = instance.lock_service_address
    record.logtail_address = instance.logtail_address
    record.query_address = instance.query_address


def _starts(hakeeper: HAKeeper, instance: Instance) -> bool:
    """Whether a serving log store's process keeps running: not when HAKeeper still lists
    it as a member while none of its disks is one it last served on (the fault in the
    module's docstring, recorded once); a claim added beside its data is no new disk."""
    uuid = instance.uuid
    assert uuid is not None
    if uuid in hakeeper.failed:
        return False
    before = hakeeper.disks.get(uuid)
    if before and instance.disks and not before & instance.disks and uuid in hakeeper.members:
        hakeeper.failed.add(uuid)
        hakeeper.faults.append(
            f"log store {uuid} ({instance.pod}) came back on an empty disk while HAKeeper lists it "
            f"as replica {hakeeper.replica_ids[uuid]} of the HAKeeper shard"
        )
        return False
    if instance.disks:
        hakeeper.disks[uuid] = instance.disks
    return True


def _lists_a_tn(hakeeper: HAKeeper, now: float, model: MOModel) -> bool:
    """A TN store heartbeats to ``hakeeper`` (MatrixOne's ``waitAnyShardReady``: a TN
    holding shards), which a CN waits for before it starts."""
    timeout = model.settings.store_timeout
    return any(now - r.last_heartbeat <= timeout for r in hakeeper.stores[Component.TN].values())


def _try_bootstrap(hakeeper: HAKeeper, serving: list[Instance], now: float, backups: BackupCatalog) -> None:
    """Bootstrap once every initial member serves with the same bootstrap config; one that
    restores from a backup (``restore.file-path``) also needs the restored data there."""
    live = {i.uuid: i for i in serving if i.uuid is not None}
    for instance in serving:
        wanted = instance.bootstrap
        if wanted is None or not wanted.bootstrap_cluster:
            continue
        hakeeper.phase = HAKeeperPhase.BOOTSTRAPPING
        members = wanted.members
        if instance.uuid in members and all(m in live and live[m].bootstrap == wanted for m in members):
            if wanted.restore is not None:
                restored = backups.holding(wanted.restore)
                if restored is None:
                    return  # no HAKeeper data at the restore path: it cannot bootstrap
                hakeeper.restored_from = restored
            hakeeper.phase = HAKeeperPhase.RUNNING
            hakeeper.bootstrapped_at = now
            hakeeper.replicas = len(members)
            hakeeper.members = members
            hakeeper.replica_ids = {m: FIRST_REPLICA_ID + i for i, m in enumerate(members)}
            hakeeper.next_replica_id = FIRST_REPLICA_ID + len(members)
            return


def _repair_membership(hakeeper: HAKeeper, now: float, expire: float) -> None:
    """HAKeeper's log checker (MatrixOne pkg/hakeeper/checkers/logservice): replicas on
    stores that stopped heartbeating for ``expire`` (those it shows TIMEOUT) are
    removed, and the shard is brought back to its replica count on serving stores
    that hold none. A store that returns after its removal, empty or not, joins as a
    new member. Membership changes go through Raft, so only while a quorum serves."""
    if not hakeeper.available:
        return
    records = hakeeper.stores[Component.LOG]

    def expired(uuid: str) -> bool:
        record = records.get(uuid)
        return uuid not in hakeeper.live_logs and record is not None and now - record.last_heartbeat > expire

    kept = tuple(m for m in hakeeper.members if not expired(m))
    for removed in set(hakeeper.members) - set(kept):
        del hakeeper.replica_ids[removed]  # a store added again gets a new replica ID
    spare = sorted(u for u in hakeeper.live_logs if u not in kept)
    hakeeper.members = kept + tuple(spare[: max(0, hakeeper.replicas - len(kept))])
    for member in hakeeper.members:
        if member not in hakeeper.replica_ids:
            hakeeper.replica_ids[member] = hakeeper.next_replica_id
            hakeeper.next_replica_id += 1
