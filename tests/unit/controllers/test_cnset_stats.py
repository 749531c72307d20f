"""The refresh times of the CNs' load annotations, which every CN set of the operator
keeps in one mapping: a CN's load is read once per period however many sets
reconcile in between, and the mapping holds only times still to come."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from mo_operator.controllers.cnset.reads import ask_loads
from mo_operator.controllers.cnset.stats import STATS_SECONDS, due_loads, refreshed
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import CNLoad, HAKeeperState, WorkState

from .cnset_fakes import running, uuid_of
from .controller_fakes import NOW
from .pool_fakes import NS, FakeAdmin, store

Obj = dict[str, Any]


class CountingAdmin(FakeAdmin):
    """``FakeAdmin`` counting the loads read, by CN."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.reads: Counter[str] = Counter()

    async def cn_load(self, uuid: str) -> CNLoad:
        self.reads[uuid] += 1
        return await super().cn_load(uuid)


def pods_of(cn_set: str, replicas: int) -> list[Obj]:
    """Running pods of ``cn_set`` whose load is already recorded."""
    return [
        running(
            {
                "metadata": {
                    "name": f"{cn_set}-cn-{i}",
                    "namespace": NS,
                    "labels": {labels.CN_UUID: f"uuid-{cn_set}-{i}"},
                }
            }
        )
        for i in range(replicas)
    ]


async def round_at(
    now: float, pods: Sequence[Obj], admin: FakeAdmin, state: HAKeeperState, due: dict[str, float]
) -> None:
    """The loads a CN set's round reads and the refresh times it moves on."""
    read, refresh = due_loads(pods, state, due, now, read_all=False)
    refreshed(pods, refresh, await ask_loads(admin, read), due, now)  # type: ignore[arg-type]


async def test_each_cn_is_read_once_per_period_while_two_sets_take_turns() -> None:
    sets = {"tp": pods_of("tp", 2), "ap": pods_of("ap", 3)}
    every = [p for pods in sets.values() for p in pods]
    admin = CountingAdmin(*(store(p, WorkState.WORKING) for p in every))
    state = await admin.hakeeper_state()
    due: dict[str, float] = {}
    for step in range(12):  # a minute of reconciles, every 5 seconds, the sets in turn
        for pods in sets.values():
            await round_at(NOW + 5 * step, pods, admin, state, due)
    assert admin.reads == {uuid_of(p): 2 for p in every}, "at the start and 30 seconds later"


async def test_only_refresh_times_still_to_come_are_kept() -> None:
    tp, ap = pods_of("tp", 2), pods_of("ap", 1)
    admin = CountingAdmin(*(store(p, WorkState.WORKING) for p in tp + ap))
    state = await admin.hakeeper_state()
    due: dict[str, float] = {}
    await round_at(NOW, tp, admin, state, due)
    await round_at(NOW + 10, ap, admin, state, due)
    assert set(due) == {"uid-tp-cn-0", "uid-tp-cn-1", "uid-ap-cn-0"}
    await round_at(NOW + STATS_SECONDS, ap[:0], admin, state, due)  # ap's pod is gone
    assert set(due) == {"uid-ap-cn-0"}, "tp's times passed; ap's is still to come"
    await round_at(NOW + 10 + STATS_SECONDS, ap[:0], admin, state, due)
    assert due == {}
