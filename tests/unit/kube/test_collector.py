"""The collector pause around decoding and freezing list pages: no cyclic
collection runs inside the block, and the collector comes back as it was."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Iterator

import pytest

from mo_operator.kube.client.rest import decode_body
from mo_operator.kube.memory.collector import collector_paused, long_lived_frozen

PAGE = json.dumps(
    {"items": [{"metadata": {"name": f"pod-{i}", "labels": {"a": "b"}}} for i in range(20_000)]}
)


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """Generations of the collections that started while the test ran."""
    seen: list[int] = []

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(callback)
    try:
        yield seen
    finally:
        gc.callbacks.remove(callback)


def test_decoding_a_page_runs_no_collection(collections: list[int]) -> None:
    assert gc.isenabled()
    body = PAGE.encode()
    decoded = decode_body(body)
    during = len(collections)
    assert len(decoded["items"]) == 20_000
    assert gc.isenabled()
    assert during <= 1  # at most the one the first allocation after the pause may start
    collections.clear()
    json.loads(PAGE)  # the same objects with the collector on: many collections
    assert len(collections) > 5


def test_an_outer_pause_or_a_disabled_collector_stays_off() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_empty_body_decodes_to_none() -> None:
    assert decode_body(b"") is None


class _Node:
    """A tracked object that can be part of a cycle."""

    other: _Node | None = None


def _cycle() -> weakref.ref[_Node]:
    """A cycle of two objects nothing else holds once this returns; a weak
    reference to one of them says whether a collection freed it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    return weakref.ref(a)


def test_the_survivors_of_a_full_collection_are_frozen_and_young_cycles_still_go() -> None:
    clock = [0.0]
    with long_lived_frozen(refresh_seconds=60, clock=lambda: clock[0]):
        cached = [{"name": i} for i in range(1000)]
        gc.collect()
        frozen = gc.get_freeze_count()
        assert frozen >= len(cached), "what survived the full collection is set aside"
        young = _cycle()
        gc.collect()
        assert young() is None, "a cycle made since is still found"
        assert gc.get_freeze_count() >= frozen
    assert gc.get_freeze_count() == 0, "handed back when the block ends"
    assert not [c for c in gc.callbacks if "Freezer" in type(c).__name__]
    del cached


def test_after_the_refresh_time_one_full_collection_looks_at_everything_again() -> None:
    clock = [0.0]
    with long_lived_frozen(refresh_seconds=60, clock=lambda: clock[0]):
        cycle = _cycle()
        node = cycle()
        gc.collect()
        assert gc.get_freeze_count() > 0
        del node  # released while frozen: no collection looks at it
        gc.collect()
        assert cycle() is not None
        clock[0] = 61.0
        gc.collect()  # the refresh is due: the frozen objects are handed back
        assert gc.get_freeze_count() == 0
        gc.collect()
        assert cycle() is None, "the released cycle is found"
        assert gc.get_freeze_count() > 0, "and the survivors are frozen again"


def test_two_operators_in_one_process_share_one_freezer() -> None:
    with long_lived_frozen(), long_lived_frozen():
        gc.collect()
        assert gc.get_freeze_count() > 0
        assert len([c for c in gc.callbacks if "Freezer" in type(c).__name__]) == 1
    assert gc.get_freeze_count() == 0
