"""What runs on each CN, read every round and written on its pod as upstream writes it.

Upstream's CN store controller keeps three pod annotations current, and tools
built around the Go operator read them: ``matrixorigin.io/score`` (JSON
``{"sessionCount", "pipelineCount", "replicaCount", "startedTime"}``, the last
being when the CN's container started, so a restart visibly resets the
counts), ``matrixorigin.io/connections`` (sessions plus pipelines, kept "for
external compatibility") and ``controller.kubernetes.io/pod-deletion-cost``
(sessions: the claim set removes the least busy CN first). The same loads
pick which CNs leave on scale-in.

A pod is written only when a value changed, so a quiet set makes no write; a
CN whose load cannot be read keeps its annotations as they were. Like
upstream, each CN's annotations are refreshed at most every
``STATS_SECONDS`` (a draining CN's sessions move every moment, and writing
each move would only churn the pod), except a pod that has none yet; the
next refresh time is kept in memory, so a restarted operator refreshes at
once. On scale-in every CN's load is read regardless, to pick who leaves.

The round's read asks MatrixOne (``due_loads`` says of which pods, ``refreshed``
moves their next refresh on); ``stats_patches`` decides the writes from the answers.

The refresh times of every CN set live in one mapping, so a set's reconcile
must not forget another's: only times that have passed are dropped (a passed
time means the same as none), which also forgets the pods that are gone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from itertools import takewhile
from typing import Any

from mo_operator.kube.meta.objects import annotations_of, mapping_at, status_of, uid_of
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import CNLoad, HAKeeperState

from ..framework.meta import is_deleting, name_of
from ..framework.writes import Patch
from . import pods as cnpods
from .observed import CNSetView
from .stores import annotate

STATS_SECONDS = 30.0
"""How often a CN's load annotations are refreshed (upstream's ``resyncInterval``)."""


def started_at(pod: Mapping[str, Any]) -> str | None:
    """When the pod's MatrixOne container started running, as the kubelet reports it."""
    for status in status_of(pod).get("containerStatuses") or ():
        if status.get("name") == layout.MAIN_CONTAINER:
            running = mapping_at(status, "state", "running")
            return running.get("startedAt")
    return None


def stats_annotations(load: CNLoad, started: str | None) -> dict[str, str]:
    """The three annotations for ``load`` (upstream's ``StoreScore`` JSON field order)."""
    score: dict[str, Any] = {
        "sessionCount": load.sessions,
        "pipelineCount": load.pipelines,
        "replicaCount": load.replicas,
    }
    if started:
        score["startedTime"] = started
    return {
        labels.STORE_SCORE: json.dumps(score, separators=(",", ":")),
        labels.STORE_CONNECTIONS: str(load.sessions + load.pipelines),
        labels.POD_DELETION_COST: str(load.sessions),
    }


def _forget_passed(due: dict[str, float], now: float) -> None:
    """Drop the refresh times that have passed. Each time is set to the clock plus
    the same period at the end of ``due``, so the passed ones come first and the
    walk stops at the first time still to come."""
    passed = list(takewhile(lambda item: item[1] <= now, due.items()))
    for uid, _ in passed:
        del due[uid]


def due_loads(
    pods: Sequence[Mapping[str, Any]],
    state: HAKeeperState | None,
    due: dict[str, float],
    now: float,
    *,
    read_all: bool,
) -> tuple[list[Mapping[str, Any]], frozenset[str]]:
    """The registered CNs whose load is read (every one with ``read_all``), and the
    names of those whose annotations are due. ``due`` maps a pod's uid to its next
    refresh time, for the pods of every CN set."""
    _forget_passed(due, now)
    if state is None:
        return [], frozenset()
    read: list[Mapping[str, Any]] = []
    refresh: set[str] = set()
    for pod in pods:
        if is_deleting(pod) or state.cn(cnpods.store_uuid(pod)) is None:
            continue
        if now >= due.get(uid_of(pod), 0.0) or labels.STORE_SCORE not in annotations_of(pod):
            refresh.add(name_of(pod))
        elif not read_all:
            continue
        read.append(pod)
    return read, frozenset(refresh)


def refreshed(
    pods: Sequence[Mapping[str, Any]],
    refresh: frozenset[str],
    loads: Mapping[str, object],
    due: dict[str, float],
    now: float,
) -> None:
    """The next refresh of each due pod whose load was read, at the end of ``due``."""
    if not refresh:
        return
    for pod in pods:
        if name_of(pod) in refresh and isinstance(loads.get(name_of(pod)), CNLoad):
            uid = uid_of(pod)
            due.pop(uid, None)  # to the end: the mapping stays in order of time
            due[uid] = now + STATS_SECONDS


def stats_patches(view: CNSetView) -> list[Patch]:
    """The load annotations of the due CNs whose load changed."""
    out: list[Patch] = []
    if not view.refresh:
        return out
    for pod in view.pods:
        load = view.loads.get(name_of(pod))
        if name_of(pod) not in view.refresh or not isinstance(load, CNLoad):
            continue
        have = annotations_of(pod)
        want = stats_annotations(load, started_at(pod))
        if any(have.get(k) != v for k, v in want.items()):
            out.append(annotate(pod, want, f"record the load of CN {name_of(pod)}"))
    return out


def sessions(view: CNSetView) -> dict[str, int]:
    """The sessions per pod name of the CNs whose load the refresh read."""
    return {
        name: load.sessions
        for name in view.sessions_known
        if isinstance(load := view.loads.get(name), CNLoad)
    }
