"""``Upgrading`` and ``Scaling`` (controllers/steps/progress.py): True with the progress
while planned work runs, False with a message that no longer moves once it is done, so
that a converged set writes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.steps.progress import scaling, upgrading

Obj = dict[str, Any]


def cond(status: str, reason: str, message: str = "") -> Obj:
    return {"status": status, "reason": reason, "message": message}


@pytest.mark.parametrize(
    ("up_to_date", "was", "expected"),
    [
        (cond("False", "RollingUpdate"), None, (True, "Rolling", "1/3 log stores updated")),
        (
            cond("False", "RolloutStalled"),
            cond("True", "Rolling"),
            (True, "Rolling", "1/3 log stores updated"),
        ),
        (
            cond("False", "RolloutStalled"),
            cond("False", "NoRollout"),
            (False, "NoRollout", "no planned rollout running"),
        ),
        (cond("False", "Applying"), None, (False, "NoRollout", "no planned rollout running")),
        (
            cond("True", "RolloutComplete"),
            cond("True", "Rolling"),
            (False, "UpToDate", "the log stores run the current spec"),
        ),
    ],
)
def test_upgrading_follows_a_roll_not_a_first_start(
    up_to_date: Obj, was: Obj | None, expected: tuple[bool, str, str]
) -> None:
    assert upgrading(up_to_date, was, 1, 3, "log stores") == expected


def test_a_scale_counts_from_where_the_set_stood_until_every_pod_is_there_and_ready() -> None:
    settled = scaling(None, 2, 2, 2, "CNs")
    assert settled == (False, "AtDesiredReplicas", "at the 2 replicas the spec asks for")
    up = scaling(cond("False", *settled[1:]), 3, 2, 2, "CNs")
    assert up == (True, "ScalingUp", "2/3 CNs ready (scaling 2 -> 3)")
    assert scaling(cond("True", *up[1:]), 3, 2, 3, "CNs") == (
        True,
        "ScalingUp",
        "2/3 CNs ready (scaling 2 -> 3)",
    )
    done = scaling(cond("True", *up[1:]), 3, 3, 3, "CNs")
    assert done == (False, "AtDesiredReplicas", "at the 3 replicas the spec asks for")
    assert scaling(cond("False", *done[1:]), 3, 3, 3, "CNs") == done, "stable once done: nothing to write"
    down = scaling(cond("False", *done[1:]), 1, 3, 3, "CNs")
    assert down == (True, "ScalingDown", "1/1 CNs ready (scaling 3 -> 1)")
    assert scaling(cond("True", *down[1:]), 1, 1, 2, "CNs")[0], "not done while a pod is still leaving"
    retarget = scaling(cond("True", *up[1:]), 5, 3, 3, "CNs")
    assert retarget == (True, "ScalingUp", "3/5 CNs ready (scaling 2 -> 5)")


def test_a_pod_lost_at_the_desired_count_is_no_scale() -> None:
    at = cond("False", "AtDesiredReplicas", "at the 3 replicas the spec asks for")
    assert scaling(at, 3, 2, 3, "CNs") == (False, "AtDesiredReplicas", "at the 3 replicas the spec asks for")
    assert scaling(cond("False", "Whatever", "garbled"), 4, 3, 3, "CNs")[0] is False, (
        "without a record of where it stood, a set stands where its spec asks"
    )
