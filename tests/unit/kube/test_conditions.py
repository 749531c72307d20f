"""status.conditions helpers, checked against apimachinery's
meta.SetStatusCondition (pkg/api/meta/conditions.go) and metav1.Condition's
validation: lastTransitionTime moves only when status changes."""

from __future__ import annotations

import copy
import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mo_operator.kube.meta.conditions import DEFAULT_REASON, get_condition, is_true, lead_with, set_condition

T1 = "2024-01-01T00:00:00Z"
T2 = "2024-01-01T00:05:00Z"


def ready(status: str, reason: str = "AllUp", message: str = "", generation: int = 1) -> dict[str, object]:
    return {
        "type": "Ready",
        "status": status,
        "reason": reason,
        "message": message,
        "observedGeneration": generation,
    }


def test_a_new_condition_is_appended_with_now_as_transition_time() -> None:
    conds = set_condition([], ready("True"), now=T1)
    assert conds == [
        {
            "type": "Ready",
            "status": "True",
            "observedGeneration": 1,
            "lastTransitionTime": T1,
            "reason": "AllUp",
            "message": "",
        }
    ]


def test_same_status_keeps_the_transition_time_but_updates_the_rest() -> None:
    """conditions.go SetStatusCondition: reason, message and observedGeneration
    are updated; lastTransitionTime only on a status change."""
    first = set_condition([], ready("False", "Starting", "waiting for log set"), now=T1)
    second = set_condition(first, ready("False", "Rolling", "1/3 updated", generation=2), now=T2)
    assert second[0]["lastTransitionTime"] == T1
    assert (second[0]["reason"], second[0]["message"], second[0]["observedGeneration"]) == (
        "Rolling",
        "1/3 updated",
        2,
    )


def test_a_status_change_moves_the_transition_time() -> None:
    first = set_condition([], ready("False"), now=T1)
    assert set_condition(first, ready("True"), now=T2)[0]["lastTransitionTime"] == T2


def test_a_given_transition_time_is_used_on_change() -> None:
    """conditions.go: a non-zero LastTransitionTime on the new condition is kept."""
    conds = set_condition([], {**ready("True"), "lastTransitionTime": T1}, now=T2)
    assert conds[0]["lastTransitionTime"] == T1


def test_inputs_are_not_mutated_and_other_conditions_keep_their_place() -> None:
    synced: dict[str, object] = {
        "type": "Synced",
        "status": "True",
        "reason": "Synced",
        "message": "",
        "lastTransitionTime": T1,
    }
    before: list[dict[str, object]] = [ready("False") | {"lastTransitionTime": T1}, synced]
    snapshot = copy.deepcopy(before)
    new = ready("True")
    new_snapshot = copy.deepcopy(new)
    after = set_condition(before, new, now=T2)
    assert before == snapshot
    assert new == new_snapshot
    assert [c["type"] for c in after] == ["Ready", "Synced"]
    assert after[1] == synced
    assert after[1] is not synced


def test_an_empty_reason_gets_the_default() -> None:
    assert set_condition(None, ready("True", reason=""), now=T1)[0]["reason"] == DEFAULT_REASON


@pytest.mark.parametrize("reason", ["not camel", "lowerFirst", "Has-Dash", "With:Colon", "X" * 1025])
def test_reasons_must_be_camel_case(reason: str) -> None:
    """api-conventions.md: a condition reason is a one-word CamelCase category."""
    with pytest.raises(ValueError, match="CamelCase"):
        set_condition([], ready("True", reason=reason), now=T1)


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "Ready", "status": "true"},
        {"type": "", "status": "True"},
        {"type": "no spaces", "status": "True"},
    ],
)
def test_status_and_type_are_validated(bad: dict[str, object]) -> None:
    """metav1.Condition: status is True/False/Unknown; type matches the schema pattern."""
    with pytest.raises(ValueError):
        set_condition([], bad, now=T1)


def test_long_messages_are_truncated_to_the_schema_limit() -> None:
    """metav1.Condition.message has maxLength 32768."""
    conds = set_condition([], ready("False", message="x" * 40000), now=T1)
    assert len(conds[0]["message"]) == 32768
    assert conds[0]["message"].endswith("...")


def test_now_may_be_an_aware_datetime() -> None:
    now = datetime.datetime(2024, 1, 1, 1, 0, 0, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert set_condition([], ready("True"), now=now)[0]["lastTransitionTime"] == T1
    with pytest.raises(ValueError):
        set_condition([], ready("True"), now=datetime.datetime(2024, 1, 1))


def test_get_condition_and_is_true() -> None:
    conds = set_condition([], ready("True"), now=T1)
    found = get_condition(conds, "Ready")
    assert found is not None and found["status"] == "True"
    found["status"] = "False"
    assert is_true(conds, "Ready")  # get_condition returned a copy
    assert get_condition(conds, "Synced") is None
    assert not is_true(conds, "Synced")
    assert not is_true(set_condition(conds, ready("Unknown"), now=T2), "Ready")
    assert not is_true(None, "Ready")


@given(st.lists(st.sampled_from(["True", "False", "Unknown"]), min_size=1, max_size=20))
def test_transition_time_changes_exactly_when_status_does(statuses: list[str]) -> None:
    conds: list[dict[str, object]] = []
    previous_status = None
    for i, status in enumerate(statuses):
        stamp = f"2024-01-01T00:00:{i:02d}Z"
        previous_time = conds[0]["lastTransitionTime"] if conds else None
        conds = set_condition(conds, ready(status), now=stamp)
        assert len(conds) == 1
        expected = previous_time if status == previous_status else stamp
        assert conds[0]["lastTransitionTime"] == expected
        previous_status = status


def test_lead_with_puts_the_named_types_first_in_their_order_and_keeps_the_rest_in_theirs() -> None:
    conds = [{"type": t, "status": "True"} for t in ("UpToDate", "Ready", "Custom", "recyclable", "Synced")]
    ordered = lead_with(conds, ("recyclable", "Ready", "Absent"))
    assert [c["type"] for c in ordered] == ["recyclable", "Ready", "UpToDate", "Custom", "Synced"]
    assert conds[0]["type"] == "UpToDate", "the input is not reordered"
    assert lead_with([], ("Ready",)) == []
