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


@pytest.mark.parametrize(
    ("reserved_ordinals", "replicas", "live", "start", "detached"),
    [
        ((), 3, (0, 1, 2), 0, ()),
        ((0,), 3, (1, 2, 3), 1, ()),
        ((0, 1), 3, (2, 3, 4), 2, ()),
        ((1,), 3, (0, 2, 3), 2, (0,)),
        ((2,), 3, (0, 1, 3), 3, (0, 1)),
        ((1, 3), 3, (0, 2, 4), 4, (0, 2)),
        ((1,), 5, (0, 2, 3, 4, 5), 2, (0,)),
        ((1,), 1, (0,), 2, (0,)),
        ((1,), 0, (), 2, ()),
    ],
)
def test_the_live_stores_are_the_lowest_unreserved_ordinals_and_those_below_a_reserved_one_are_detached(
    reserved_ordinals: tuple[int, ...],
    replicas: int,
    live: tuple[int, ...],
    start: int,
    detached: tuple[int, ...],
) -> None:
    found = reserved.numbering(reserved_ordinals, replicas)
    assert (found.live, found.start, found.detached) == (live, start, detached)
    assert found.statefulset_replicas == len(live) - len(detached)
    assert not set(found.live) & set(reserved_ordinals)


def test_a_logset_without_a_record_numbers_its_stores_from_zero() -> None:
    assert reserved.recorded({}, 3) == reserved.numbering((), 3)
    assert reserved.recorded({labels.LOGSET_RESERVED_ORDINALS: "[1]"}, 3).live == (0, 2, 3)
    with pytest.raises(reserved.ReservedOrdinalsError):
        reserved.recorded({labels.LOGSET_RESERVED_ORDINALS: "{}"}, 3)
