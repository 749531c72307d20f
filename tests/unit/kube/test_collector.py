"""The collector pause around decoding and freezing list pages: no cyclic
collection runs inside the block, and the collector comes back as it was."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

from mo_operator.kube.collector import collector_paused
from mo_operator.kube.rest import decode_body

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
