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

The refresh times of every CN set live in one mapping, so a set's reconcile
must not forget another's: only times that have passed are dropped (a passed
time means the same as none), which also forgets the pods that are gone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import takewhile
from typing import Any

from mo_operator.kube.meta.objects import mapping_at, status_of
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import AdminError, CNLoad

from ..framework import resources as r
from ..framework.meta import is_deleting, name_of
from . import pods as cnpods
from .observed import Observed

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


async def sync_stats(seen: Observed, due: dict[str, float], *, read_all: bool) -> dict[str, int]:
    """Read the load of the registered CNs whose refresh is ``due`` (all of them with
    ``read_all``) and record it on their pods when it changed; the sessions per pod
    name read. ``due`` maps a pod's uid to its next refresh time, for the pods of
    every CN set."""
    sessions: dict[str, int] = {}
    _forget_passed(due, seen.now)
    if seen.state is None:
        return sessions
    for pod in seen.pods:
        if is_deleting(pod) or seen.state.cn(cnpods.store_uuid(pod)) is None:
            continue
        uid = str(pod["metadata"].get("uid"))
        have = pod["metadata"].get("annotations") or {}
        refresh = seen.now >= due.get(uid, 0.0) or labels.STORE_SCORE not in have
        if not (refresh or read_all):
            continue
        try:
            load = await seen.admin.cn_load(cnpods.store_uuid(pod))
        except AdminError as e:
            seen.ctx.log.debug("cannot read the load of CN %s: %s", name_of(pod), e)
            continue
        sessions[name_of(pod)] = load.sessions
        if not refresh:
            continue
        due.pop(uid, None)  # to the end: the mapping stays in order of time
        due[uid] = seen.now + STATS_SECONDS
        want = stats_annotations(load, started_at(pod))
        if any(have.get(k) != v for k, v in want.items()):
            seen.plan.patch(
                r.PODS,
                pod["metadata"]["namespace"],
                name_of(pod),
                {"metadata": {"annotations": want}},
                what=f"record the load of CN {name_of(pod)}",
            )
    return sessions
