"""The CNSet actor on hand-built caches and a MatrixOne fake: what one reconcile round
writes and asks of MatrixOne, from a new set to a CN drained out of it (sessions
first, then, on MatrixOne 1.2 and later, its lock tables), a cordoned CN and the
load annotations upstream writes on CN pods."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from mo_operator.controllers.cnset.actor import CNSetActor
from mo_operator.controllers.specs.pods import format_time
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .cnset_fakes import (
    LockingAdmin,
    cnset,
    logset,
    round_of,
    running,
    settled,
    uuid_of,
    with_annotations,
)
from .controller_fakes import NOW, FakeCaches, condition, events
from .pool_fakes import pool_env

Obj = dict[str, Any]
DRAINING_SINCE = format_time(NOW - 60)


def _ready(ctx: Any) -> Obj:
    found = condition(ctx, "Ready")
    assert found is not None
    return found


def _writes(calls: list[Any]) -> list[tuple[str, str, str]]:
    return [(c[0], c[1], c[2]) for c in calls]


def _annotations_written(calls: list[Any], pod: str) -> Obj:
    out: Obj = {}
    for verb, kind, name, body in calls:
        if verb == "patch" and kind == "Pod" and name == pod:
            out.update((body.get("metadata") or {}).get("annotations") or {})
    return out


async def test_a_set_waiting_for_its_log_service_reports_every_field_it_will() -> None:
    _, waiting = await round_of(CNSetActor(pool_env(FakeCaches(), LockingAdmin())), cnset(2))
    _, started = await round_of(CNSetActor(pool_env(FakeCaches(logset()), LockingAdmin())), cnset(2))
    assert _ready(waiting)["reason"] == "WaitingForLogSet"
    assert set(waiting.status) == set(started.status)
    assert {c["type"] for c in waiting.status["conditions"]} == {
        c["type"] for c in started.status["conditions"]
    }


async def test_a_new_set_creates_its_config_services_and_pods_and_waits_for_them() -> None:
    actor = CNSetActor(pool_env(FakeCaches(logset()), LockingAdmin()))
    calls, ctx = await round_of(actor, cnset(2))
    writes = _writes(calls)
    assert [(v, n.startswith("tp-cn-config-")) for v, k, n in writes if k == "ConfigMap"] == [("apply", True)]
    assert ("apply", "Service", "tp-cn-headless") in writes and ("apply", "Service", "tp-cn") in writes
    assert [n for v, k, n in writes if (v, k) == ("create", "Pod")] == ["tp-cn-0", "tp-cn-1"]
    pod = next(c[3] for c in calls if c[2] == "tp-cn-0")
    assert labels.CN_DRAINING_FINALIZER in pod["metadata"]["finalizers"]
    assert _ready(ctx)["status"] == "False"


async def test_a_settled_set_makes_no_write_and_changes_nothing_in_matrixone() -> None:
    scene = await settled(2)
    calls, ctx = await round_of(scene.actor(), scene.obj)
    assert calls == [] and scene.admin.changes() == []
    assert _ready(ctx)["reason"] == "AllCNsReady"
    assert [s["state"] for s in ctx.status["stores"]] == ["Up", "Up"]


async def test_each_cn_pod_carries_its_load_as_upstream_writes_it() -> None:
    scene = await settled(2)
    scene.admin.sessions[uuid_of(scene.pods[1])] = 4
    calls, _ = await round_of(scene.actor(), scene.obj)
    assert _writes(calls) == [("patch", "Pod", "tp-cn-1")]
    written = _annotations_written(calls, "tp-cn-1")
    score = json.loads(written[labels.STORE_SCORE])
    assert score == {
        "sessionCount": 4,
        "pipelineCount": 0,
        "replicaCount": 0,
        "startedTime": format_time(NOW - 500),
    }
    assert written[labels.STORE_CONNECTIONS] == "4" and written[labels.POD_DELETION_COST] == "4"


async def test_load_annotations_are_refreshed_at_most_every_30_seconds() -> None:
    scene = await settled(2)
    clock = [NOW]
    actor = scene.actor()
    actor.env = replace(actor.env, clock=lambda: clock[0])
    assert (await round_of(actor, scene.obj))[0] == []
    scene.admin.sessions[uuid_of(scene.pods[1])] = 4
    clock[0] = NOW + 20
    assert (await round_of(actor, scene.obj))[0] == [], "not due yet: sessions move all the time"
    clock[0] = NOW + 31
    calls, _ = await round_of(actor, scene.obj)
    assert _writes(calls) == [("patch", "Pod", "tp-cn-1")]


async def test_scale_in_drains_the_least_busy_cn_instead_of_deleting_it() -> None:
    scene = await settled(3, sessions=[5, 1, 3])
    obj = cnset(2)
    calls, _ = await round_of(scene.actor(), obj)
    victim = "tp-cn-1"
    assert _annotations_written(calls, victim).get(labels.STORE_DRAINING_START) == format_time(NOW)
    assert ("delete", "Pod", victim) not in _writes(calls)
    assert scene.admin.changes() == [("set_cn_work_state", uuid_of(scene.pods[1]), WorkState.DRAINING)]
    readiness = [c[3] for c in calls if c[2] == victim and "status" in c[3]]
    assert readiness[0]["status"]["conditions"][0]["status"] == "False"


def _draining(scene: Any, index: int, **annotations: str) -> list[Obj]:
    """The scene's pods with pod ``index`` draining as ``start_drain`` left it: marked,
    its store Draining in HAKeeper, its readiness gate False."""
    pods = list(scene.pods)
    pods[index] = _marked(pods[index], **annotations)
    pods[index]["status"] = running(pods[index], ready=False)["status"]
    uuid = uuid_of(pods[index])
    scene.admin.stores[uuid] = replace(scene.admin.stores[uuid], work_state=WorkState.DRAINING)
    return pods


def _marked(pod: Obj, **annotations: str) -> Obj:
    return with_annotations(pod, **{labels.STORE_DRAINING_START: DRAINING_SINCE, **annotations})


async def test_a_drain_cut_short_after_its_mark_is_finished_by_the_next_round() -> None:
    scene = await settled(3)
    pods = list(scene.pods)
    pods[2] = _marked(pods[2])
    uuid = uuid_of(pods[2])
    scene.admin.sessions[uuid] = 2
    calls, _ = await round_of(scene.actor(*pods), cnset(2))
    assert scene.admin.changes() == [("set_cn_work_state", uuid, WorkState.DRAINING)]
    [gate] = [c[3]["status"]["conditions"][0] for c in calls if c[2] == "tp-cn-2" and "status" in c[3]]
    assert (gate["status"], gate["reason"]) == ("False", "Draining")
    assert ("delete", "Pod", "tp-cn-2") not in _writes(calls), "its sessions have not moved yet"

    scene.admin.calls.clear()
    pods[2] = running(pods[2], sessions=2, ready=False)
    calls, _ = await round_of(scene.actor(*pods), cnset(2))
    assert calls == [] and scene.admin.changes() == [], "held Draining: nothing more to write"


async def test_a_drained_cn_on_mo_1_2_is_marked_restarting_in_the_lock_service_first() -> None:
    scene = await settled(3)
    pods = _draining(scene, 2)
    uuid = uuid_of(pods[2])
    scene.admin.transactions[uuid] = 3
    calls, ctx = await round_of(scene.actor(*pods), cnset(2))
    assert ("delete", "Pod", "tp-cn-2") not in _writes(calls), "kept while its lock tables move"
    assert ("set_restart_cn", uuid, None) in scene.admin.changes()
    assert _annotations_written(calls, "tp-cn-2")[labels.LOCK_RESTART] == "true"
    [(kind, _, message)] = [e for e in events(ctx) if e[1] == "MigratingLockTables"]
    assert kind == "Normal" and "3 transactions remain" in message


async def test_a_marked_cn_is_not_marked_again_and_goes_once_the_tn_lets_it() -> None:
    scene = await settled(3)
    pods = _draining(scene, 2, **{labels.LOCK_RESTART: "true"})
    uuid = uuid_of(pods[2])
    calls, _ = await round_of(scene.actor(*pods), cnset(2))
    assert calls == [] and scene.admin.changes() == [], "still waiting: nothing to write"

    scene.admin.restartable.add(uuid)
    calls, ctx = await round_of(scene.actor(*pods), cnset(2))
    assert _writes(calls) == [("delete", "Pod", "tp-cn-2")]
    assert [e[1] for e in events(ctx)] == ["LockTablesMigrated"]


async def test_before_mo_1_2_a_drained_cn_goes_without_asking_the_lock_service() -> None:
    scene = await settled(3, version="1.1.3")
    calls, _ = await round_of(scene.actor(*_draining(scene, 2)), cnset(2, version="1.1.3"))
    assert _writes(calls) == [("delete", "Pod", "tp-cn-2")]
    assert not [c for c in scene.admin.calls if "restart" in c[0] or c[0] == "remain_txn_count"]


async def test_a_cn_with_sessions_is_not_asked_about_locks_yet() -> None:
    scene = await settled(3)
    pods = _draining(scene, 2)
    scene.admin.sessions[uuid_of(pods[2])] = 2
    calls, _ = await round_of(scene.actor(*pods), cnset(2))
    assert ("delete", "Pod", "tp-cn-2") not in _writes(calls)
    assert not [c for c in scene.admin.calls if c[0] == "can_restart_cn"]


async def test_matrixone_is_asked_about_a_draining_cn_only_once_its_drain_may_be_over() -> None:
    """The round's read asks what the decision may need: within ``minDelaySeconds``
    nothing can end the drain, so neither the CN's load nor the lock service is asked."""
    scene = await settled(3)
    pods = _draining(scene, 2)  # since NOW - 60
    asked: list[str] = []
    load = scene.admin.cn_load

    async def counted(uuid: str) -> Any:
        asked.append(uuid)
        return await load(uuid)

    scene.admin.cn_load = counted  # type: ignore[method-assign]
    clock = [NOW - 50]
    actor = scene.actor(*pods)
    actor.env = replace(actor.env, clock=lambda: clock[0])
    await round_of(actor, cnset(2))  # every load is due for its annotations
    asked.clear()
    await round_of(actor, cnset(2))
    assert asked == [] and not [c for c in scene.admin.calls if c[0] == "can_restart_cn"]
    clock[0] = NOW - 30
    await round_of(actor, cnset(2))
    assert asked == [uuid_of(pods[2])]
    assert [c[0] for c in scene.admin.calls if c[0] == "can_restart_cn"] == ["can_restart_cn"]


async def test_the_drain_timeout_removes_a_cn_whose_locks_never_moved() -> None:
    scene = await settled(3)
    pods = _draining(scene, 2, **{labels.LOCK_RESTART: "true"})
    calls, ctx = await round_of(scene.actor(*pods, now=NOW + 3600), cnset(2))
    assert ("delete", "Pod", "tp-cn-2") in _writes(calls)
    assert "DrainTimeout" in [e[1] for e in events(ctx)]


async def test_a_cordoned_cn_is_held_draining_and_not_ready_but_stays() -> None:
    scene = await settled(2)
    pods = list(scene.pods)
    pods[0] = with_annotations(pods[0], **{labels.STORE_CORDON: "true"})
    calls, ctx = await round_of(scene.actor(*pods), scene.obj)
    assert scene.admin.changes() == [("set_cn_work_state", uuid_of(pods[0]), WorkState.DRAINING)]
    [patch] = [c[3] for c in calls if c[2] == "tp-cn-0"]
    assert patch["status"]["conditions"][0]["reason"] == "Cordoned"
    assert not [c for c in calls if c[0] in ("create", "delete")], "no replacement, no removal"
    assert ctx.status["stores"][0]["state"] == "Draining"


async def test_lifting_the_cordon_puts_the_cn_back_to_work() -> None:
    scene = await settled(2)
    uuid = uuid_of(scene.pods[0])
    await scene.admin.set_cn_work_state(uuid, WorkState.DRAINING)
    scene.admin.calls.clear()
    await round_of(scene.actor(), scene.obj)
    assert scene.admin.changes() == [("set_cn_work_state", uuid, WorkState.WORKING)]
