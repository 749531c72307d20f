"""A CN pod's readiness gate is written when it says something the pod does not
already: a new CN on its way to work (not registered, then Draining until put to
work) writes no gate at all, its first gate write says Working."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .cnset_fakes import LockingAdmin, round_of, settled, uuid_of
from .pool_fakes import store

Obj = dict[str, Any]


def _without_gate(pod: Obj) -> Obj:
    out = copy.deepcopy(pod)
    out["status"]["conditions"] = [
        c for c in out["status"]["conditions"] if c["type"] != labels.CN_STORE_READINESS
    ]
    return out


def _gate_writes(calls: list[Any]) -> list[tuple[str, str]]:
    return [
        (c["status"], c["reason"])
        for verb, kind, _, body in calls
        if (verb, kind) == ("patch", "Pod")
        for c in (body.get("status") or {}).get("conditions") or ()
        if c["type"] == labels.CN_STORE_READINESS
    ]


async def test_a_cn_not_yet_registered_writes_no_gate() -> None:
    scene = await settled(1)
    scene.admin = LockingAdmin()
    calls, _ = await round_of(scene.actor(_without_gate(scene.pods[0])), scene.obj)
    assert _gate_writes(calls) == []


async def test_a_registered_cn_not_yet_at_work_is_put_to_work_without_a_gate_write() -> None:
    scene = await settled(1)
    pod = _without_gate(scene.pods[0])
    scene.admin = LockingAdmin(store(pod, WorkState.DRAINING))
    calls, _ = await round_of(scene.actor(pod), scene.obj)
    assert _gate_writes(calls) == []
    assert [c[:2] for c in scene.admin.changes()] == [("set_cn_work_state", uuid_of(pod))]


async def test_a_working_cn_gets_its_gate_once() -> None:
    scene = await settled(1)
    pod = _without_gate(scene.pods[0])
    calls, _ = await round_of(scene.actor(pod), scene.obj)
    assert _gate_writes(calls) == [("True", "Working")]


async def test_a_cn_that_was_working_and_left_hakeeper_says_so() -> None:
    scene = await settled(1)
    scene.admin = LockingAdmin()
    calls, _ = await round_of(scene.actor(), scene.obj)
    assert _gate_writes(calls) == [("False", "NotRegistered")]
