"""The HAKeeper bootstrap decision: which log stores start the HAKeeper, with which IDs.

The decision is made once per LogSet and recorded on it (annotation
``logset.matrixorigin.io/bootstrap``, same JSON as upstream) because it must never
change afterwards: a HAKeeper bootstrapped with one membership cannot be re-bootstrapped
with another. The first N ordinals become the initial members, with replica IDs from
131072 on (upstream's range, kept so a migrated LogSet reads the same decision).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from mo_operator.matrixone.identity import log_store_uuid

REPLICA_ID_START = 131072
REPLICA_ID_END = 262144


class BootstrapError(ValueError):
    """A bootstrap decision that cannot be made or read."""


@dataclass(frozen=True)
class BootstrapReplica:
    """One initial HAKeeper member: the log pod ordinal and its raft replica ID."""

    ordinal: int
    replica_id: int


def default_log_shard_replicas(replicas: int) -> int:
    """``initialConfig.logShardReplicas`` default: 3 when there are 3 log stores or more, else 1."""
    return 3 if replicas >= 3 else 1


def plan_bootstrap(log_shard_replicas: int) -> tuple[BootstrapReplica, ...]:
    """The decision for a new LogSet: ordinals ``0..n-1`` with consecutive replica IDs."""
    if log_shard_replicas < 1:
        raise BootstrapError(f"logShardReplicas must be at least 1, got {log_shard_replicas}")
    if REPLICA_ID_START + log_shard_replicas - 1 > REPLICA_ID_END:
        raise BootstrapError(f"logShardReplicas {log_shard_replicas} exceeds the replica ID range")
    return tuple(BootstrapReplica(i, REPLICA_ID_START + i) for i in range(log_shard_replicas))


def encode_annotation(replicas: Sequence[BootstrapReplica]) -> str:
    """The annotation value: ``[{"ordinal":0,"replicaId":131072},…]`` (compact, as Go writes it)."""
    return json.dumps(
        [{"ordinal": r.ordinal, "replicaId": r.replica_id} for r in replicas], separators=(",", ":")
    )


def decode_annotation(value: str) -> tuple[BootstrapReplica, ...]:
    """Read a recorded decision; raises BootstrapError if it is not one."""
    try:
        items = json.loads(value)
        replicas = tuple(BootstrapReplica(int(i["ordinal"]), int(i["replicaId"])) for i in items)
    except (ValueError, TypeError, KeyError) as e:
        raise BootstrapError(f"invalid bootstrap annotation {value!r}: {e}") from e
    if not replicas:
        raise BootstrapError("bootstrap annotation lists no replicas")
    return replicas


def init_hakeeper_members(replicas: Sequence[BootstrapReplica]) -> list[str]:
    """``BootstrapConfig.init-hakeeper-members``: ``"<replicaId>:<log store UUID>"`` each."""
    return [f"{r.replica_id}:{log_store_uuid(r.ordinal)}" for r in replicas]
