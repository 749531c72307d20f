"""The event recorder against a fake sink and a fake clock, checked against
client-go's tools/record (event.go, events_cache.go): the core/v1 Event it
writes, dedupe by count, aggregation of similar events, the per-object spam
filter, and asynchronous, coalescing, retrying writes."""

from __future__ import annotations

import asyncio
import copy
import logging
import re
from typing import Any

import pytest

from mo_operator.kube.flowcontrol.backoff import Backoff
from mo_operator.kube.metrics.metrics import REGISTRY
from mo_operator.kube.recorder.event_correlator import AGGREGATE_PREFIX
from mo_operator.kube.recorder.events import (
    EventNotFound,
    EventRecorder,
    EventRejected,
    object_reference,
)

Obj = dict[str, Any]
T0 = 1_700_000_000.0  # 2023-11-14T22:13:20Z


class FakeClock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class FakeSink:
    """An events API: create refuses existing names, patch refuses missing ones."""

    def __init__(self) -> None:
        self.events: dict[tuple[str, str], Obj] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.failures: list[Exception] = []  # raised by the next calls, in order
        self.gate: asyncio.Event | None = None  # when set up, calls wait for it

    async def _enter(self, verb: str, namespace: str, name: str) -> None:
        if self.gate is not None:
            await self.gate.wait()
        self.calls.append((verb, namespace, name))
        if self.failures:
            raise self.failures.pop(0)

    async def create(self, namespace: str, event: Obj) -> Obj:
        name = event["metadata"]["name"]
        await self._enter("create", namespace, name)
        if (namespace, name) in self.events:
            raise EventRejected("already exists")
        self.events[namespace, name] = copy.deepcopy(event)
        return event

    async def patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        await self._enter("patch", namespace, name)
        if (namespace, name) not in self.events:
            raise EventNotFound(name)
        self.events[namespace, name].update(copy.deepcopy(patch))
        return self.events[namespace, name]

    def only(self) -> Obj:
        assert len(self.events) == 1, self.events
        return next(iter(self.events.values()))

    def messages(self) -> list[str]:
        return sorted(e["message"] for e in self.events.values())


def pod(name: str = "web-0", namespace: str = "prod", uid: str = "u-1") -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid, "resourceVersion": "42"},
        "spec": {"containers": []},
    }


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sink() -> FakeSink:
    return FakeSink()


@pytest.fixture
def recorder(sink: FakeSink, clock: FakeClock) -> EventRecorder:
    return EventRecorder(
        sink, "mo-operator", "mo-operator-7d9f", clock=clock, retry_backoff=lambda: Backoff(0.001, 0.001)
    )


async def test_writes_a_core_v1_event_about_the_object(recorder: EventRecorder, sink: FakeSink) -> None:
    """Shape as client-go's makeEvent/generateEvent: name <ref.name>.<hex>, the
    object reference, source and reporting fields, count 1."""
    recorder.event(pod(), "Warning", "FailedMount", "volume data not ready")
    await recorder.flush()
    event = sink.only()
    assert re.fullmatch(r"web-0\.[0-9a-f]+", event["metadata"]["name"])
    assert event["metadata"]["namespace"] == "prod"
    assert sink.calls == [("create", "prod", event["metadata"]["name"])]
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "web-0",
        "namespace": "prod",
        "uid": "u-1",
        "resourceVersion": "42",
    }
    assert event["source"] == {"component": "mo-operator", "host": "mo-operator-7d9f"}
    assert event["reportingComponent"] == "mo-operator"
    assert event["reportingInstance"] == "mo-operator-7d9f"
    assert (event["type"], event["reason"], event["message"]) == (
        "Warning",
        "FailedMount",
        "volume data not ready",
    )
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2023-11-14T22:13:20Z"
    assert event["count"] == 1


def test_object_reference_accepts_an_object_or_a_reference() -> None:
    ref = {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u"}
    assert object_reference(ref) == ref
    assert object_reference(pod())["resourceVersion"] == "42"


async def test_cluster_scoped_objects_get_events_in_default(recorder: EventRecorder, sink: FakeSink) -> None:
    """client-go makeEvent: an object without namespace has its events in "default"."""
    recorder.event({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}, "Normal", "Seen", "hi")
    await recorder.flush()
    event = sink.only()
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]


async def test_identical_events_increment_count_with_a_patch(
    recorder: EventRecorder, sink: FakeSink, clock: FakeClock
) -> None:
    """events_cache.go eventObserve: same source, object, type, reason and message
    updates the existing Event's count and lastTimestamp."""
    for i in range(3):
        recorder.event(pod(), "Normal", "Scaled", "replicas 3")
        await recorder.flush()
        clock.now += 60 * (i + 1)
    event = sink.only()
    assert [verb for verb, _, _ in sink.calls] == ["create", "patch", "patch"]
    assert event["count"] == 3
    assert event["firstTimestamp"] == "2023-11-14T22:13:20Z"
    assert event["lastTimestamp"] == "2023-11-14T22:16:20Z"


async def test_different_messages_are_different_events(recorder: EventRecorder, sink: FakeSink) -> None:
    recorder.event(pod(), "Normal", "Scaled", "replicas 3")
    recorder.event(pod(), "Normal", "Scaled", "replicas 4")
    recorder.event(pod(name="web-1", uid="u-2"), "Normal", "Scaled", "replicas 3")
    await recorder.flush()
    assert len(sink.events) == 3
    assert {e["count"] for e in sink.events.values()} == {1}


async def test_similar_events_are_aggregated(
    recorder: EventRecorder, sink: FakeSink, clock: FakeClock
) -> None:
    """events_cache.go EventAggregate: once 10 distinct messages for the same
    object, type and reason arrive within 10 minutes, they go into one
    "(combined from similar events): " Event whose count grows."""
    for i in range(9):
        recorder.event(pod(), "Warning", "BackOff", f"attempt {i}")
        clock.now += 1
    await recorder.flush()
    assert len(sink.events) == 9
    recorder.event(pod(), "Warning", "BackOff", "attempt 9")
    await recorder.flush()
    combined = [e for e in sink.events.values() if e["message"].startswith(AGGREGATE_PREFIX)]
    assert len(combined) == 1
    assert combined[0]["message"] == AGGREGATE_PREFIX + "attempt 9"
    clock.now += 1
    recorder.event(pod(), "Warning", "BackOff", "attempt 10")
    await recorder.flush()
    assert len(sink.events) == 10
    assert combined[0]["metadata"]["name"] == sink.calls[-1][2]
    updated = sink.events["prod", combined[0]["metadata"]["name"]]
    assert updated["count"] == 2
    assert updated["message"] == AGGREGATE_PREFIX + "attempt 10"
    # Another reason is not similar.
    recorder.event(pod(), "Warning", "Unhealthy", "attempt 11")
    await recorder.flush()
    assert "attempt 11" in sink.messages()


async def test_aggregation_starts_afresh_after_the_interval(
    recorder: EventRecorder, sink: FakeSink, clock: FakeClock
) -> None:
    """events_cache.go: a record older than maxIntervalInSeconds (600 s) is replaced."""
    for i in range(9):
        recorder.event(pod(), "Warning", "BackOff", f"attempt {i}")
    clock.now += 601
    recorder.event(pod(), "Warning", "BackOff", "attempt 9")
    await recorder.flush()
    assert "attempt 9" in sink.messages()
    assert not any(m.startswith(AGGREGATE_PREFIX) for m in sink.messages())


async def test_spam_filter_limits_each_object_to_a_burst_then_one_per_5_minutes(
    recorder: EventRecorder, sink: FakeSink, clock: FakeClock
) -> None:
    """events_cache.go EventSourceObjectSpamFilter: burst 25, refill 1/300 qps,
    per source, object and type."""
    for i in range(30):
        recorder.event(pod(), "Normal", f"Reason{i}", "m")
    await recorder.flush()
    assert len(sink.events) == 25
    recorder.event(pod(name="web-1", uid="u-2"), "Normal", "Reason0", "m")  # another object
    recorder.event(pod(), "Warning", "Reason0", "m")  # another type
    await recorder.flush()
    assert len(sink.events) == 27
    clock.now += 299
    recorder.event(pod(), "Normal", "Late", "m")
    await recorder.flush()
    assert len(sink.events) == 27
    clock.now += 2
    recorder.event(pod(), "Normal", "Later", "m")
    recorder.event(pod(), "Normal", "TooSoon", "m")
    await recorder.flush()
    assert len(sink.events) == 28
    assert "Later" in {e["reason"] for e in sink.events.values()}


async def test_filtered_repeats_still_count(
    recorder: EventRecorder, sink: FakeSink, clock: FakeClock
) -> None:
    """client-go observes (counts) an event before the spam filter, so the next
    write that gets through carries every occurrence."""
    for i in range(24):
        recorder.event(pod(), "Normal", f"Reason{i}", "m")
    recorder.event(pod(), "Normal", "Flapping", "down")  # the 25th token
    for _ in range(4):
        recorder.event(pod(), "Normal", "Flapping", "down")  # filtered
    await recorder.flush()
    flapping = [e for e in sink.events.values() if e["reason"] == "Flapping"]
    assert flapping[0]["count"] == 1
    clock.now += 300
    recorder.event(pod(), "Normal", "Flapping", "down")
    await recorder.flush()
    assert sink.events["prod", flapping[0]["metadata"]["name"]]["count"] == 6


async def test_a_slow_api_never_blocks_and_repeats_coalesce(recorder: EventRecorder, sink: FakeSink) -> None:
    """event() only touches memory; while the sink hangs, repeats become one
    pending write that carries the final count."""
    sink.gate = asyncio.Event()
    for _ in range(20):
        recorder.event(pod(), "Warning", "Failed", "boom")
    await asyncio.sleep(0.01)
    assert sink.events == {}
    sink.gate.set()
    await asyncio.wait_for(recorder.flush(), 1)
    assert sink.only()["count"] == 20
    assert len(sink.calls) <= 2


async def test_an_expired_event_is_created_again_with_its_count(
    recorder: EventRecorder, sink: FakeSink
) -> None:
    """event.go recordEvent: a patch that finds no Event falls back to create."""
    recorder.event(pod(), "Normal", "Scaled", "replicas 3")
    await recorder.flush()
    sink.events.clear()  # the server's event TTL expired it
    recorder.event(pod(), "Normal", "Scaled", "replicas 3")
    await recorder.flush()
    assert [verb for verb, _, _ in sink.calls] == ["create", "patch", "create"]
    assert sink.only()["count"] == 2


async def test_transient_errors_are_retried(recorder: EventRecorder, sink: FakeSink) -> None:
    sink.failures = [ConnectionError("down"), TimeoutError("slow")]
    recorder.event(pod(), "Normal", "Scaled", "replicas 3")
    await asyncio.wait_for(recorder.flush(), 1)
    assert len(sink.calls) == 3
    assert sink.only()["count"] == 1
    assert recorder.dropped == 0


async def test_retries_give_up_after_max_tries_and_later_events_still_flow(
    sink: FakeSink, clock: FakeClock
) -> None:
    """event.go: maxTriesPerEvent (12), then the event is dropped. (One writer, so
    that the first event meets every failure.)"""
    recorder = EventRecorder(
        sink, "c", clock=clock, retry_backoff=lambda: Backoff(0.001, 0.001), max_in_flight=1
    )
    sink.failures = [ConnectionError("down")] * 12
    recorder.event(pod(), "Normal", "First", "m")
    recorder.event(pod(), "Normal", "Second", "m")
    await asyncio.wait_for(recorder.flush(), 2)
    assert recorder.dropped == 1
    assert [e["reason"] for e in sink.events.values()] == ["Second"]


async def test_rejected_events_are_not_retried(recorder: EventRecorder, sink: FakeSink) -> None:
    """event.go recordEvent: a StatusError from the server is final."""
    sink.failures = [EventRejected("namespace terminating")]
    recorder.event(pod(), "Normal", "Scaled", "replicas 3")
    await recorder.flush()
    assert len(sink.calls) == 1
    assert sink.events == {}


async def test_a_full_backlog_drops_new_events(sink: FakeSink, clock: FakeClock) -> None:
    """event.go: at most maxQueuedEvents wait; the rest are dropped, not blocked on."""
    recorder = EventRecorder(sink, "c", clock=clock, max_pending=2)
    sink.gate = asyncio.Event()
    for i in range(5):
        recorder.event(pod(), "Normal", f"Reason{i}", "m")
    assert recorder.dropped == 3
    sink.gate.set()
    await recorder.flush()
    assert len(sink.events) == 2


async def test_names_are_unique_when_the_clock_stands_still(recorder: EventRecorder, sink: FakeSink) -> None:
    for i in range(5):
        recorder.event(pod(), "Normal", "Step", f"step {i}")
    await recorder.flush()
    assert len({name for _, name in sink.events}) == 5


async def test_invalid_input(recorder: EventRecorder, sink: FakeSink) -> None:
    with pytest.raises(ValueError):
        recorder.event(pod(), "Error", "Bad", "m")
    recorder.event({"metadata": {"name": "x"}}, "Normal", "NoKind", "m")  # logged, not written
    await recorder.flush()
    assert sink.calls == []


async def test_close_writes_pending_events_then_ignores_new_ones(
    recorder: EventRecorder, sink: FakeSink
) -> None:
    recorder.event(pod(), "Normal", "Before", "m")
    await recorder.close()
    recorder.event(pod(), "Normal", "After", "m")
    await asyncio.sleep(0.01)
    assert [e["reason"] for e in sink.events.values()] == ["Before"]


def dropped_total(reason: str) -> float:
    return REGISTRY.get_sample_value("events_dropped_total", {"reason": reason}) or 0.0


async def test_drops_are_counted_by_reason_and_logged_rarely(
    sink: FakeSink, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    """A full backlog used to log one warning per dropped Event; now each drop is
    counted in events_dropped_total{reason} and said at most once a minute."""
    recorder = EventRecorder(sink, "c", clock=clock, max_pending=2)
    sink.gate = asyncio.Event()
    before = dropped_total("backlog_full")
    with caplog.at_level("WARNING", logger="mo_operator.kube.recorder.events"):
        for i in range(50):
            recorder.event(pod(name=f"web-{i}", uid=f"u-{i}"), "Normal", "Scaled", "m")
        assert dropped_total("backlog_full") - before == recorder.dropped == 48
        assert len(caplog.records) == 1, [r.getMessage() for r in caplog.records]
        clock.now += 61
        recorder.event(pod(), "Normal", "OneMore", "m")
        assert len(caplog.records) == 2
        messages = [r.getMessage() for r in caplog.records]
        assert "dropped 1 events" in messages[0] and "backlog_full: 1" in messages[0]
        assert "dropped 48 events" in messages[1] and "backlog_full: 48" in messages[1]
    sink.gate.set()
    await recorder.flush()


async def test_the_spam_filter_counts_what_it_refuses_without_logging(
    recorder: EventRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    before = dropped_total("spam_filter")
    with caplog.at_level("DEBUG", logger="mo_operator.kube.recorder.events"):
        for i in range(30):
            recorder.event(pod(), "Normal", f"Reason{i}", "m")
    await recorder.flush()
    assert dropped_total("spam_filter") - before == 5
    assert recorder.dropped == 0
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


async def test_the_backlog_holds_the_events_of_a_large_converge(sink: FakeSink, clock: FakeClock) -> None:
    """A 50-cluster converge at 50 qps records about 1,600 Events faster than they
    can be written; client-go's backlog of 1,000 dropped hundreds of them."""
    recorder = EventRecorder(sink, "c", clock=clock)
    sink.gate = asyncio.Event()
    for i in range(600):
        for step in ("Created", "Progressing", "Ready"):
            recorder.event(pod(name=f"set-{i}", uid=f"u-{i}"), "Normal", step, f"{step} set-{i}")
    assert recorder.dropped == 0
    sink.gate.set()
    await asyncio.wait_for(recorder.flush(), 10)
    assert len(sink.events) == 1800


class ConcurrentSink(FakeSink):
    """Writes wait for ``release``; records how many were in flight, overall and
    per Event."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()
        self.in_flight: list[str] = []
        self.most = 0
        self.overlapping: list[str] = []

    async def _enter(self, verb: str, namespace: str, name: str) -> None:
        if name in self.in_flight:
            self.overlapping.append(name)
        self.in_flight.append(name)
        self.most = max(self.most, len(self.in_flight))
        try:
            await self.release.wait()
            await super()._enter(verb, namespace, name)
        finally:
            self.in_flight.remove(name)


async def test_writers_run_concurrently_but_never_two_writes_of_one_event(clock: FakeClock) -> None:
    """Round trips overlap (one writer at a time fell hundreds behind), but a patch
    of an Event must not overtake its create: it would find nothing and create it
    a second time. A repeat of an Event not sent yet just raises the pending count."""
    sink = ConcurrentSink()
    recorder = EventRecorder(sink, "c", clock=clock, max_in_flight=4)
    for i in range(8):
        recorder.event(pod(name=f"web-{i}", uid=f"u-{i}"), "Normal", "Scaled", "replicas 3")
    while len(sink.in_flight) < 4:
        await asyncio.sleep(0)
    for i in range(8):
        recorder.event(pod(name=f"web-{i}", uid=f"u-{i}"), "Normal", "Scaled", "replicas 3")
    sink.release.set()
    await asyncio.wait_for(recorder.flush(), 5)
    assert sink.most == 4
    assert sink.overlapping == []
    assert len(sink.events) == 8 and {e["count"] for e in sink.events.values()} == {2}
    assert sorted(verb for verb, _, _ in sink.calls) == ["create"] * 8 + ["patch"] * 4
