"""Which log stores are down for planned work (controllers/logset/planned.py): the
roll's restarts, a drain's evictions and the evicted store's replacement coming up are
planned; a store that was ready and is not, a crashing replacement, a pod a person or
a node's taint manager deleted are not."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.logset.planned import Evictions, planned
from mo_operator.controllers.specs.statefulsets import REVISION_LABEL

Obj = dict[str, Any]


def pod(
    name: str = "mo-log-1",
    *,
    ready: bool = False,
    deleting: bool = False,
    revision: str = "r1",
    disruption: str | None = None,
    restarts: int = 0,
) -> Obj:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    if disruption is not None:
        conditions.append({"type": "DisruptionTarget", "status": "True", "reason": disruption})
    meta: Obj = {"name": name, "labels": {REVISION_LABEL: revision}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "status": {
            "conditions": conditions,
            "containerStatuses": [{"name": "main", "restartCount": restarts}],
        },
    }


@pytest.mark.parametrize(
    ("case", "the_pod", "roll_to", "evicted_before", "expected"),
    [
        ("the roll deletes it", pod(deleting=True), "r2", (), True),
        ("the roll's replacement starts", pod(revision="r2"), "r2", (), True),
        ("an old-revision pod down while the set rolls", pod(revision="r1"), "r2", (), False),
        ("down with no roll", pod(revision="r2"), None, (), False),
        ("evicted by a drain", pod(deleting=True, disruption="EvictionByEvictionAPI"), None, (), True),
        (
            "deleted by the taint manager",
            pod(deleting=True, disruption="DeletionByTaintManager"),
            None,
            (),
            False,
        ),
        ("an evicted store's replacement coming up", pod(), None, ("mo-log-1",), True),
        ("an evicted store's replacement crashing", pod(restarts=2), None, ("mo-log-1",), False),
        ("another pod than the evicted one", pod("mo-log-2"), None, ("mo-log-1",), False),
        ("a pod a person deleted, coming up", pod(), None, (), False),
    ],
)
def test_planned_work_is_told_from_the_pod(
    case: str, the_pod: Obj, roll_to: str | None, evicted_before: tuple[str, ...], expected: bool
) -> None:
    assert planned(the_pod, roll_to, evicted_before) is expected, case


def test_an_eviction_is_remembered_until_the_pod_of_that_name_is_ready_again() -> None:
    notes, key = Evictions(), ("ns", "mo")
    assert notes.note(key, [pod("mo-log-0", ready=True), pod(ready=True)]) == frozenset()
    evicted = pod(deleting=True, disruption="EvictionByEvictionAPI")
    assert notes.note(key, [pod("mo-log-0", ready=True), evicted]) == {"mo-log-1"}
    assert notes.note(key, [pod("mo-log-0", ready=True)]) == {"mo-log-1"}, (
        "gone, its replacement not made yet"
    )
    assert notes.note(key, [pod("mo-log-0", ready=True), pod()]) == {"mo-log-1"}, "the replacement starts"
    assert notes.note(key, [pod("mo-log-0", ready=True), pod(ready=True)]) == frozenset(), "back"
    assert notes._seen == {}, "nothing kept for a set with no eviction pending"
    notes.note(key, [evicted])
    notes.forget(key)
    assert notes.note(key, []) == frozenset()
