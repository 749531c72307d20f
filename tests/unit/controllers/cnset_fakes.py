"""Hand-built objects around a CNSet (its LogSet, its pods as the cluster runs them) and
a MatrixOne admin fake that also plays the TN lock service, for the CNSet actor's tests."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from mo_operator.controllers.cnset.actor import CNSetActor
from mo_operator.controllers.cnset.stats import stats_annotations
from mo_operator.controllers.specs.pods import format_time
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import CNLoad, WorkState

from .controller_fakes import NOW, FakeCaches, RecordingClient, context
from .pool_fakes import API, NS, FakeAdmin, pool_env, store

Obj = dict[str, Any]


class LockingAdmin(FakeAdmin):
    """``FakeAdmin`` plus the TN lock service: CNs in ``restartable`` may stop,
    ``transactions`` counts what still holds locks; every lock call is recorded."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.restartable: set[str] = set()
        self.transactions: dict[str, int] = {}

    async def can_restart_cn(self, uuid: str) -> bool:
        self.calls.append(("can_restart_cn", uuid, None, None))
        return uuid in self.restartable

    async def set_restart_cn(self, uuid: str) -> bool:
        self.calls.append(("set_restart_cn", uuid, None, None))
        return True

    async def remain_txn_count(self, uuid: str) -> int:
        self.calls.append(("remain_txn_count", uuid, None, None))
        return self.transactions.get(uuid, 0)

    def changes(self) -> list[tuple[str, str, WorkState | None]]:
        """The calls that change something (reads left out)."""
        reads = {"can_restart_cn", "remain_txn_count"}
        return [(c[0], c[1], c[2]) for c in self.calls if c[0] not in reads]


def logset() -> Obj:
    return {
        "apiVersion": API,
        "kind": "LogSet",
        "metadata": {"name": "mo", "namespace": NS, "uid": "uid-mo", "resourceVersion": "1"},
        "spec": {"replicas": 3, "sharedStorage": {"s3": {"path": "bucket/mo"}}},
        "status": {
            "discovery": {"address": "mo-log-discovery.ns.svc", "port": 32001},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "AllStoresReady"},
                {"type": "Synced", "status": "True", "reason": "Synced"},
            ],
        },
    }


def cnset(replicas: int = 2, *, version: str = "1.2.3", **spec: Any) -> Obj:
    body: Obj = {
        "replicas": replicas,
        "image": f"matrixorigin/matrixone:{version}",
        "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 15},
        **spec,
    }
    return {
        "apiVersion": API,
        "kind": "CNSet",
        "metadata": {
            "name": "tp",
            "namespace": NS,
            "uid": "uid-tp",
            "generation": 1,
            "resourceVersion": "1",
        },
        "spec": body,
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }


async def round_of(actor: CNSetActor, obj: Mapping[str, Any]) -> tuple[list[Any], Any]:
    """One reconcile: the writes its plan made and its context."""
    ctx = context(obj)
    client: RecordingClient = actor.env.client  # type: ignore[assignment]
    before = len(client.calls)
    plan = await actor.observe(ctx)
    if plan is not None:
        await plan(ctx)
    return client.calls[before:], ctx


def running(pod: Mapping[str, Any], *, sessions: int = 0, ready: bool = True) -> Obj:
    """``pod`` as the API server and kubelet make it (uid, version, running, ready), its
    load of ``sessions`` already recorded by the set."""
    out: Obj = copy.deepcopy(dict(pod))
    meta = out["metadata"]
    meta.update(uid=f"uid-{meta['name']}", resourceVersion="7", creationTimestamp=format_time(NOW - 600))
    started = format_time(NOW - 500)
    meta["annotations"] = {**meta.get("annotations", {}), **stats_annotations(CNLoad(sessions), started)}
    status = "True" if ready else "False"
    out["status"] = {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": status},
            {
                "type": labels.CN_STORE_READINESS,
                "status": status,
                "reason": "Working" if ready else "Draining",
            },
        ],
        "containerStatuses": [{"name": layout.MAIN_CONTAINER, "state": {"running": {"startedAt": started}}}],
    }
    return out


def with_annotations(pod: Mapping[str, Any], **annotations: str) -> Obj:
    out: Obj = copy.deepcopy(dict(pod))
    out["metadata"]["annotations"] = {**out["metadata"]["annotations"], **annotations}
    return out


def uuid_of(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"]["labels"][labels.CN_UUID])


@dataclass
class Scene:
    """A set whose pods run its current template, registered and Working, their loads
    recorded; the shared objects it wrote; and the admin holding their stores."""

    obj: Obj
    pods: list[Obj]
    shared: list[Obj]
    admin: LockingAdmin

    def actor(self, *pods: Obj, now: float = NOW) -> CNSetActor:
        """The actor over this scene, with ``pods`` in place of the scene's own when given."""
        objs = [logset(), *self.shared, *(pods or self.pods)]
        return CNSetActor(replace(pool_env(FakeCaches(*objs), self.admin), clock=lambda: now))


async def settled(replicas: int, *, sessions: Sequence[int] = (), **kw: Any) -> Scene:
    obj = cnset(replicas, **kw)
    calls, _ = await round_of(CNSetActor(pool_env(FakeCaches(logset()), LockingAdmin())), obj)
    created = [c[3] for c in calls if c[0] == "create" and c[1] == "Pod"]
    shared = [{**c[3], "kind": c[1]} for c in calls if c[0] == "apply"]
    load = list(sessions) + [0] * len(created)
    pods = [running(p, sessions=load[i]) for i, p in enumerate(created)]
    admin = LockingAdmin(
        *(store(p, WorkState.WORKING) for p in pods),
        sessions={uuid_of(p): load[i] for i, p in enumerate(pods)},
    )
    return Scene(obj, pods, shared, admin)
