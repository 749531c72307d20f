"""A hypothesis state machine checking the work queue against a model of
client-go's queue.go: a FIFO of keys, the dirty set (waiting to be
processed) and the processing set, plus shutdown with and without drain."""

from __future__ import annotations

import asyncio
import uuid

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from mo_operator.kube.controller.workqueue import QueueShutDown, WorkQueue
from mo_operator.kube.metrics.metrics import REGISTRY

KEYS = st.sampled_from(["a", "b", "c", "d"])


class QueueModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.q: WorkQueue[str] = WorkQueue(f"stateful-{uuid.uuid4().hex[:8]}")
        self.fifo: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.shut: str | None = None  # None, "drain" or "now"

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.q.add(key)
        if self.shut or key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.fifo.append(key)

    @rule()
    def get(self) -> None:
        try:
            got: str | type[Exception] = self.q.get_nowait()
        except (asyncio.QueueEmpty, QueueShutDown) as e:
            got = type(e)
        if self.shut == "now":
            expected: str | type[Exception] = QueueShutDown
        elif not self.fifo:
            expected = QueueShutDown if self.shut == "drain" and not self.processing else asyncio.QueueEmpty
        else:
            expected = self.fifo.pop(0)
            self.dirty.discard(expected)
            self.processing.add(expected)
        assert got == expected

    @precondition(lambda self: self.processing)
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.q.done(key)
        self.processing.discard(key)
        if key in self.dirty:
            self.fifo.append(key)

    @rule(key=KEYS)
    def done_of_a_key_not_processing_is_ignored(self, key: str) -> None:
        if key not in self.processing:
            self.q.done(key)

    @rule(drain=st.booleans())
    def shutdown(self, drain: bool) -> None:
        self.q.shutdown(drain=drain)
        self.shut = "drain" if drain else "now"

    @invariant()
    def matches_the_model(self) -> None:
        assert len(self.q) == len(self.fifo)
        assert not set(self.fifo) & self.processing  # a processing key is never also queued
        assert set(self.fifo) <= self.dirty
        assert REGISTRY.get_sample_value("workqueue_depth", {"name": self.q.name}) == len(self.dirty)


TestQueueModel = QueueModel.TestCase
TestQueueModel.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
