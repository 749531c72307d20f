"""A CN set looks again soon for the store of a CN that runs but has not registered
in HAKeeper (nothing else tells it), backing off to the busy poll: a new CN is put
in service within a tenth of a second of registering, never after a whole poll."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.controllers.cnset.registration import FIRST_LOOK, Registration, unregistered
from mo_operator.matrixone.admin import HAKeeperPhase, HAKeeperState, WorkState

from .cnset_fakes import LockingAdmin, round_of, settled
from .pool_fakes import store

Obj = dict[str, Any]
KEY = ("ns", "mo-tp")
BUSY = 1.0


def test_each_look_comes_after_as_long_as_the_pod_has_waited_up_to_the_busy_poll() -> None:
    seen = Registration()
    looks = []
    now = 100.0
    for _ in range(6):
        look = seen.next_look(KEY, ["uid-a"], now, BUSY)
        assert look is not None
        looks.append(round(look, 3))
        now += look
    assert looks == [FIRST_LOOK, FIRST_LOOK, 0.2, 0.4, 0.8, BUSY]


def test_the_soonest_pod_sets_the_look_and_a_registered_one_is_forgotten() -> None:
    seen = Registration()
    assert seen.next_look(KEY, ["uid-a"], 100.0, BUSY) == FIRST_LOOK
    assert seen.next_look(KEY, ["uid-a", "uid-b"], 100.5, BUSY) == FIRST_LOOK
    assert seen.next_look(KEY, ["uid-a"], 100.75, BUSY) == 0.75
    assert seen.next_look(KEY, [], 101.0, BUSY) is None
    assert seen.next_look(KEY, ["uid-a"], 105.0, BUSY) == FIRST_LOOK, "a pod that registered was forgotten"
    assert seen.next_look(("ns", "other"), ["uid-c"], 105.0, BUSY) == FIRST_LOOK, "each set has its own"


async def test_only_a_running_cn_without_a_store_waits_and_only_when_hakeeper_answers() -> None:
    scene = await settled(2)
    up, starting = scene.pods
    pending = copy.deepcopy(starting)
    pending["status"]["phase"] = "Pending"
    state = HAKeeperState(HAKeeperPhase.RUNNING, 1, cn_stores=(store(up, WorkState.WORKING),))
    assert unregistered([up, starting, pending], state) == [starting["metadata"]["uid"]]
    assert unregistered([starting], None) == []


async def test_a_round_that_finds_a_cn_running_unregistered_looks_again_at_once() -> None:
    scene = await settled(1)
    scene.admin = LockingAdmin()
    _, ctx = await round_of(scene.actor(), scene.obj)
    assert ctx.requeue_after == FIRST_LOOK
    registered = await settled(1)
    _, ctx = await round_of(registered.actor(), registered.obj)
    assert ctx.requeue_after is not None and ctx.requeue_after > FIRST_LOOK
