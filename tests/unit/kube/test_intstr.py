"""Counts from ``intstr.IntOrString`` values, as apimachinery scales them."""

from __future__ import annotations

import pytest

from mo_operator.kube.meta.intstr import scaled_value


@pytest.mark.parametrize(
    ("value", "total", "round_up", "expected"),
    [
        (2, 10, True, 2),
        ("25%", 10, True, 3),
        ("25%", 10, False, 2),
        ("0%", 7, True, 0),
        ("100%", 3, False, 3),
        ("33%", 3, True, 1),
        ("33%", 3, False, 0),
        ("3", 10, True, None),
        ("x%", 10, True, None),
        ("-5%", 10, True, None),
    ],
)
def test_a_value_is_a_count_or_a_percentage_of_the_total(
    value: int | str, total: int, round_up: bool, expected: int | None
) -> None:
    assert scaled_value(value, total, round_up=round_up) == expected
