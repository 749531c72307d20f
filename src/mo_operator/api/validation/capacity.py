"""Warnings about replica counts that are admitted, as upstream admits them, but do
not do what the number suggests.

- A log service of 0 replicas is upstream's way to stop a cluster (its webhook test
  "should allow scale to zero"): every log store goes at once, and MatrixOne with
  them, until replicas is raised again. The LogSet then reports ``Ready=False``,
  reason ``Stopped``; the warning says so when it is written.
- MatrixOne runs one replica of each TN shard (``initialConfig.dnShards``, 1, and
  exactly one from 2.0 on): TNs beyond that hold no shard. HAKeeper moves the shard
  to one of them when the active TN's store expires (``pkg/hakeeper/checkers/
  tnservice``), so they stand by; they add no capacity.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .errors import child

__all__ = ["capacity_warnings", "quorum_safe"]

Obj = dict[str, Any]

LOG_STOPPED = (
    "0 stops the log service: every log store is deleted and MatrixOne is down until replicas is "
    "raised again (the LogSet reports Ready=False, reason Stopped)"
)


def quorum_safe(replicas: int) -> int:
    """How many of ``replicas`` Raft members may be down while a majority stays up."""
    return max(0, (replicas - 1) // 2)


def _scaled(value: int | str, total: int) -> int:
    """A count, or a percentage of ``total`` rounded up (as the disruption controller reads
    ``maxUnavailable``)."""
    if isinstance(value, int):
        return value
    return -(-int(value.rstrip("%")) * total // 100)


def _log_budget(path: str, log: Obj) -> Iterator[str]:
    """A log service's PodDisruptionBudget that lets a drain break a log shard's quorum."""
    budget = log.get("podDisruptionBudget") or {}
    bound = budget.get("maxUnavailable")
    if budget.get("enabled") is False or bound is None:
        return
    replicas = int(log.get("replicas") or 0)
    shard = int((log.get("initialConfig") or {}).get("logShardReplicas") or 1)
    safe = quorum_safe(min(replicas, shard))
    allowed = _scaled(bound, replicas)
    if allowed > safe:
        yield (
            f"{child(path, 'podDisruptionBudget.maxUnavailable')}: lets a drain evict {allowed} log stores at "
            f"once, more than the {safe} a {shard}-replica log shard can lose and keep its quorum"
        )


def _standby(path: str, replicas: int, shards: int, of: str) -> str:
    spare = replicas - shards
    return (
        f"{child(path, 'replicas')}: MatrixOne runs one TN per TN shard ({shards}, {of}): "
        f"{spare} more TN{'s' if spare > 1 else ''} only stand{'' if spare > 1 else 's'} by, taking over "
        "when the active TN's store expires"
    )


def _found(kind: str, obj: Obj) -> Iterator[str]:
    spec = obj.get("spec") or {}
    if kind == "LogSet":
        if spec.get("replicas") == 0:
            yield f"spec.replicas: {LOG_STOPPED}"
        yield from _log_budget("spec", spec)
    elif kind in ("DNSet", "TNSet") and int(spec.get("replicas") or 0) > 1:
        yield _standby(
            "spec", int(spec["replicas"]), 1, "unless its LogSet's initialConfig.dnShards says more"
        )
    elif kind == "MatrixOneCluster":
        log = spec["logService"]
        if log.get("replicas") == 0:
            yield f"spec.logService.replicas: {LOG_STOPPED}"
        yield from _log_budget("spec.logService", log)
        shards = int((log.get("initialConfig") or {}).get("dnShards") or 1)
        for name in ("tn", "dn"):
            replicas = int((spec.get(name) or {}).get("replicas") or 0)
            if replicas > shards:
                yield _standby(f"spec.{name}", replicas, shards, "spec.logService.initialConfig.dnShards")


def capacity_warnings(kind: str, obj: Obj) -> list[str]:
    """The warnings of a schema-valid, defaulted object."""
    return list(_found(kind, obj))
