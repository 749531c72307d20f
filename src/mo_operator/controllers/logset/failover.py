"""Whether and how to replace lost log stores: a pure decision.

A log store is *lost* when HAKeeper reports it down (its heartbeats stopped long
enough for HAKeeper to expire it) and its pod has not been ready for
``storeFailureTimeout``; either alone is not enough (a failing probe on a store
that heartbeats, or a store restarting in a ready pod). Replacing lost stores is
safe only while the rest still form the Raft quorum, so:

- without a live quorum (HAKeeper does not answer) nothing is judged or touched; while
  a majority of the stores is ready that is a pause (a leader election, a roll), not
  a lost quorum, and the condition says so;
- a store its set's roll or a drain is restarting is not reported down (planned work is told in
  Normal Events only) until it has been down for the failover timeout, when it counts
  as lost like any other;
- losses beyond a minority of the shard's replicas are only reported: acting on
  a lost majority could split the Raft group;
- with failover switched off, or ``failedPodStrategy: Orphan``, lost stores are
  reported with what a person must do, and nothing is deleted.

A lost store whose volume is pinned to a node that is gone (local storage), or to
a zone (or other node labels) where no schedulable Ready node is left, can never
come back on its own: its pod would stay Pending with that volume. Its claims are
deleted along with the pod, so that the StatefulSet makes a fresh volume wherever
the new pod lands. The store keeps its UUID (it derives from the pod's ordinal), so
that happens only once HAKeeper lists no replica on that UUID: HAKeeper starts
every replica it lists on the store that heartbeats under its UUID (MatrixOne
``pkg/hakeeper/checkers/logservice/parse.go``, ``getReplicasToStart``), and a
replica started on an empty disk under an ID its Raft peers know has lost the
entries they counted on it for. Once HAKeeper has removed the expired store's
replicas (it does for a store down for its ``LogStoreTimeout``), the store that
comes back empty is added under new replica IDs, never mistaken for the old one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

CONDITION = "Failover"
"""Condition: whether lost log stores are being (or can be) replaced."""


@dataclass(frozen=True)
class Claim:
    """A volume claim of a store, with the place its volume was pinned to."""

    name: str
    uid: str
    node: str = ""
    """The node that is gone (a volume pinned to one host)."""
    zone: str = ""
    """Where the volume may be used, when no schedulable Ready node is left there:
    ``zone eu-1a``, or the node labels its affinity asks for."""

    @property
    def lost_place(self) -> str:
        if self.zone:
            return f"{self.zone}, which has no schedulable Ready node"
        return f"node {self.node}, which is gone"


@dataclass(frozen=True)
class Store:
    """What the decision needs to know of one log store (one pod)."""

    pod: str
    uid: str
    down_since: float | None
    """When its pod stopped being ready (None: ready)."""
    store_down: bool
    """HAKeeper reports its store down."""
    orphaned: bool = False
    """Already marked for a human (``failedPodStrategy: Orphan``)."""
    stranded: tuple[Claim, ...] = ()
    """Its claims whose volume is pinned to a node that is gone, or to a zone with no usable node."""
    planned: bool = False
    """Down for planned work: the set's roll or a drain is replacing it (or has just
    replaced it), see :mod:`.planned`."""
    has_pod: bool = True
    """False for an ordinal whose pod the StatefulSet has yet to make again: such a
    store is down (when HAKeeper says so) but there is nothing to replace."""
    listed: tuple[tuple[int, int], ...] = ()
    """``(shard, replica)`` HAKeeper still lists on its UUID."""


@dataclass(frozen=True)
class Policy:
    timeout: float
    """``storeFailureTimeout`` in seconds."""
    shard_replicas: int
    """``logShardReplicas``: the Raft group size the minority limit comes from."""
    strategy: str = "Delete"
    """``failedPodStrategy``: Delete or Orphan."""
    enabled: bool = True
    """The operator's ``--failover``."""
    namespace: str = "default"
    """Where the stores are (for the commands a person is told to run)."""

    @property
    def limit(self) -> int:
        """How many stores the shard can lose and keep its quorum."""
        return self.shard_replicas // 2


@dataclass(frozen=True)
class Replace:
    """Delete this pod (and these claims first): the StatefulSet makes it anew."""

    pod: str
    uid: str
    claims: tuple[Claim, ...] = ()


@dataclass(frozen=True)
class Decision:
    status: bool
    reason: str
    message: str
    warning: str | None = None
    """Reason of a Warning Event (its message is ``message``), when a person should know."""
    replace: tuple[Replace, ...] = ()
    orphan: tuple[str, ...] = ()
    """Pods to mark for a human."""
    recheck_after: float | None = None
    """When a store that is down now would count as lost."""


def decide(stores: Sequence[Store], now: float, policy: Policy, *, quorum: bool) -> Decision:
    """What failover does now. ``quorum``: HAKeeper answers (a majority serves)."""
    if not quorum:
        down = sorted(s.pod for s in stores if s.down_since is not None)
        where = f" ({', '.join(down)} not ready)" if down else ""
        up = len(stores) - len(down)
        if up > len(stores) // 2:
            # a majority runs: HAKeeper is electing a leader or its Service is catching up
            return Decision(
                False,
                "HAKeeperNotAnswering",
                f"HAKeeper does not answer while {up}/{len(stores)} log stores are ready{where}: "
                "no log store is replaced until it answers",
            )
        return Decision(
            False,
            "NoQuorum",
            f"HAKeeper does not answer{where}: without a live quorum no log store is replaced "
            "automatically; bring back a majority of the log stores",
        )
    lost, waiting, soonest = _classify(stores, now, policy.timeout)
    marked = sorted((s for s in stores if s.orphaned and s.down_since is not None), key=lambda s: s.pod)
    if not lost and not marked:
        restarting = {s.pod for s in stores if s.planned}
        if waiting and {s.pod for s in waiting} <= restarting:
            return Decision(
                True,
                "StoresRestarting",
                f"log stores {_names(waiting)} restarting for a rollout or a drain; replaced only if down for "
                f"{int(policy.timeout)}s",
                recheck_after=soonest,
            )
        if waiting:
            return Decision(
                False,
                "StoresDown",
                f"log stores {_names(waiting)} down; replaced once down for {int(policy.timeout)}s",
                recheck_after=soonest,
            )
        return Decision(True, "NoLostStores", "every log store is up", recheck_after=soonest)
    names = ", ".join(s.pod for s in lost)
    if len(lost) + len(marked) > policy.limit:
        message = (
            f"{len(lost) + len(marked)} log stores lost ({', '.join(sorted(s.pod for s in [*lost, *marked]))}), "
            f"more than the {policy.limit} a {policy.shard_replicas}-replica Raft group can lose safely: "
            "not replacing them automatically"
        )
        return Decision(False, "MajorityLost", message, warning="MajorityLost", recheck_after=soonest)
    if not policy.enabled or policy.strategy == "Orphan" or not lost:
        return _for_a_human(lost, marked, policy, soonest)
    held = [s for s in lost if s.stranded and s.listed]
    replace = tuple(Replace(s.pod, s.uid, s.stranded) for s in lost if s not in held)
    fresh = [s for s in lost if s.stranded and s not in held]
    detail = "".join(
        f"; {s.pod} gets a new volume ({_claims(s)} pinned to {s.stranded[0].lost_place})" for s in fresh
    )
    wait = "".join(
        f"; {s.pod} gets a new volume ({_claims(s)} pinned to {s.stranded[0].lost_place}) once HAKeeper "
        f"no longer lists its replicas ({_replicas(s)}): an empty disk must not rejoin under them"
        for s in held
    )
    if not replace:
        message = f"log stores {names} down for {int(policy.timeout)}s: waiting for HAKeeper{wait}"
        return Decision(False, "WaitingForHAKeeper", message, warning="StoreLost", recheck_after=soonest)
    message = f"log stores {names} down for {int(policy.timeout)}s: replacing{detail}{wait}"
    return Decision(
        False, "RepairingStores", message, warning="StoreLost", replace=replace, recheck_after=soonest
    )


def _classify(
    stores: Sequence[Store], now: float, timeout: float
) -> tuple[list[Store], list[Store], float | None]:
    """The lost stores, those down but not for long enough, and when the first of
    those would count as lost."""
    lost: list[Store] = []
    waiting: list[Store] = []
    soonest: float | None = None
    for s in sorted(stores, key=lambda s: s.pod):
        if s.down_since is None or not s.store_down or s.orphaned:
            continue
        left = timeout - (now - s.down_since)
        if left <= 0 and s.has_pod:
            lost.append(s)
        else:
            waiting.append(s)
            if s.has_pod:
                soonest = left if soonest is None else min(soonest, left)
    return lost, waiting, soonest


def _names(stores: Sequence[Store]) -> str:
    """The stores' pods, saying which the StatefulSet has yet to make again."""
    return ", ".join(s.pod if s.has_pod else f"{s.pod} (no pod yet)" for s in stores)


def _for_a_human(
    lost: Sequence[Store], marked: Sequence[Store], policy: Policy, soonest: float | None
) -> Decision:
    """Lost stores reported with the commands that replace them; nothing deleted."""
    why = "automatic failover is off (--no-failover)" if not policy.enabled else "failedPodStrategy is Orphan"
    todo = "; ".join(_commands(s, policy.namespace) for s in [*lost, *marked])
    names = ", ".join(sorted(s.pod for s in [*lost, *marked]))
    wait = "".join(
        f" Delete the claims of {s.pod} only once HAKeeper no longer lists its replicas ({_replicas(s)})."
        for s in sorted([*lost, *marked], key=lambda s: s.pod)
        if s.stranded and s.listed
    )
    message = f"log stores {names} lost and not replaced: {why}.{wait} To replace them: {todo}"
    orphan = tuple(s.pod for s in lost) if policy.enabled and policy.strategy == "Orphan" else ()
    warning = "StoreLost" if lost else None
    return Decision(False, "ActionRequired", message, warning=warning, orphan=orphan, recheck_after=soonest)


def _commands(store: Store, namespace: str) -> str:
    claims = " ".join(c.name for c in store.stranded)
    pvc = f"kubectl -n {namespace} delete pvc {claims} --wait=false && " if claims else ""
    return f"{pvc}kubectl -n {namespace} delete pod {store.pod} --grace-period=0 --force"


def _claims(store: Store) -> str:
    return ", ".join(c.name for c in store.stranded)


def _replicas(store: Store) -> str:
    return ", ".join(f"shard {shard} replica {replica}" for shard, replica in store.listed)
