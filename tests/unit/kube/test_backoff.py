"""Exponential backoff with jitter (apimachinery wait.Backoff: initial
duration, factor, cap), where jitter shortens delays so they stay within the cap."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mo_operator.kube.flowcontrol.backoff import Backoff


def test_delays_grow_by_the_factor_up_to_the_cap_and_reset() -> None:
    b = Backoff(initial=1.0, cap=10.0, factor=2.0)
    assert [b.next() for _ in range(6)] == [1.0, 2.0, 4.0, 8.0, 10.0, 10.0]
    assert b.attempts == 6
    b.reset()
    assert b.attempts == 0
    assert b.next() == 1.0


def test_factor_one_is_a_constant_delay() -> None:
    b = Backoff(initial=0.5, cap=0.5, factor=1.0)
    assert {b.next() for _ in range(5)} == {0.5}


def test_jitter_shortens_by_at_most_the_fraction_and_spreads_at_the_cap() -> None:
    b = Backoff(initial=1.0, cap=8.0, factor=2.0, jitter=0.5, rng=random.Random(3))
    undelayed = [1.0, 2.0, 4.0, 8.0] + [8.0] * 20
    delays = [b.next() for _ in undelayed]
    for delay, full in zip(delays, undelayed, strict=True):
        assert full * 0.5 <= delay <= full
    at_cap = delays[4:]
    assert len(set(at_cap)) > 1  # clients at the cap do not retry in lock-step


@pytest.mark.parametrize(
    "args",
    [
        {"initial": 0.0, "cap": 1.0},
        {"initial": 2.0, "cap": 1.0},
        {"initial": 1.0, "cap": 2.0, "factor": 0.5},
        {"initial": 1.0, "cap": 2.0, "jitter": 1.5},
    ],
)
def test_invalid_settings_are_refused(args: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Backoff(**args)
