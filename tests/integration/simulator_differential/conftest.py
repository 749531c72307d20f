"""The two sides every differential scenario runs on (see harness.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .harness import REAL_KUBECONFIG, Side, two_sides


@pytest.fixture
async def sides() -> AsyncIterator[tuple[Side, Side]]:
    """(embedded, real), each with a fresh ``simdiff-<random>`` namespace."""
    if REAL_KUBECONFIG is None:
        pytest.skip("no real control plane (KUBEBUILDER_ASSETS)")
    async with two_sides() as pair:
        yield pair
