"""Reserved log store ordinals (upstream's failover, Kruise ``reserveOrdinals``) as a
taken-over LogSet records them, and where its live stores are."""

from __future__ import annotations

import pytest

from mo_operator.matrixone import labels, reserved


def test_the_record_is_a_json_list_as_kruise_writes_the_field() -> None:
    assert reserved.encode({1, 0}) == "[0,1]"
    assert reserved.decode("[0, 1]") == {0, 1}
    assert reserved.decode(reserved.encode({2})) == {2}


@pytest.mark.parametrize("value", ["0", "[-1]", '["0"]', "[true]", "{}", "[0,"])
def test_a_malformed_record_is_refused_with_what_it_holds(value: str) -> None:
    with pytest.raises(reserved.ReservedOrdinalsError, match="list"):
        reserved.decode(value)


def test_the_live_stores_start_past_the_lowest_reserved_ordinals() -> None:
    # upstream failed over store 0: its replacement took ordinal 3, the live stores are 1, 2, 3
    assert reserved.first_live({0}) == 1
    assert reserved.first_live({0, 1}) == 2
    assert reserved.first_live(()) == 0
    assert reserved.hole({0, 1}) is None


def test_a_live_store_below_a_reserved_one_is_a_hole_no_statefulset_keeps() -> None:
    # upstream failed over store 1: the live stores are 0, 2, 3
    why = reserved.hole({1})
    assert why is not None and "[0]" in why and "consecutive" in why
    with pytest.raises(reserved.ReservedOrdinalsError, match="consecutive"):
        reserved.first_live({1})


def test_a_logset_without_the_record_runs_from_ordinal_0() -> None:
    assert reserved.recorded_first_live({}) == 0
    assert reserved.recorded_first_live({labels.LOGSET_RESERVED_ORDINALS: "[0]"}) == 1
    with pytest.raises(reserved.ReservedOrdinalsError):
        reserved.recorded_first_live({labels.LOGSET_RESERVED_ORDINALS: "[2]"})
