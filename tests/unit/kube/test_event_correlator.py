"""The correlator's decisions for any sequence of Events, against a model of
client-go's ``EventCorrelator`` (tools/record/events_cache.go) written from
its rules rather than from our code:

- the spam filter is a token bucket per source, object and type (burst 25,
  one token per 300 s) that a refused Event takes nothing from;
- a group (source, object, type, reason) is combined once it has seen 10
  distinct messages since its last quiet spell of more than 600 s; before
  that, never (which of the older messages client-go forgets is arbitrary,
  so a repeat after that point may go either way);
- each Event written under one key (the message, or the group's combined
  Event) is the same Event: one name, the first timestamp, and a count that
  goes up by one for every occurrence, refused ones included."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.kube.meta.times import format_time
from mo_operator.kube.recorder.event_correlator import (
    AGGREGATE_PREFIX,
    SPAM_BURST,
    SPAM_QPS,
    Correlation,
    EventCorrelator,
)

T0 = 1_700_000_000.0
STEPS = (0.0, 1.0, 30.0, 299.0, 301.0, 601.0)


def make_event(obj: int, type: str, reason: int, message: int, now: float, serial: int) -> dict[str, Any]:
    stamp = format_time(now)
    return {
        "metadata": {"name": f"o{obj}.{serial:x}", "namespace": "ns"},
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "name": f"o{obj}",
            "namespace": "ns",
            "uid": f"u{obj}",
        },
        "source": {"component": "mo-operator", "host": "h"},
        "type": type,
        "reason": f"R{reason}",
        "message": f"m{message}",
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }


@dataclass
class Bucket:
    tokens: float = float(SPAM_BURST)
    last: float = 0.0


@dataclass
class Group:
    seen: set[str] = field(default_factory=set)
    last: float = float("-inf")


@dataclass
class Written:
    name: str
    first: str
    count: int


BURST, MAX_MESSAGES = 5, 4
"""Small limits, so that short sequences reach them; the rules are the same."""

events_strategy = st.lists(
    st.tuples(
        st.integers(0, 1),
        st.sampled_from(("Normal", "Warning")),
        st.integers(0, 1),
        st.integers(0, 6),
        st.sampled_from(STEPS),
        st.integers(1, 8),
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=400, deadline=None)
@given(events_strategy)
def test_decisions_match_client_gos_rules(sequence: list[tuple[int, str, int, int, float, int]]) -> None:
    """Each tuple is an Event and how many times it comes in a row."""
    correlator = EventCorrelator(spam_burst=BURST, aggregate_max_events=MAX_MESSAGES)
    buckets: dict[tuple[int, str], Bucket] = {}
    groups: dict[tuple[int, str, int], Group] = {}
    written: dict[tuple[Any, ...], Written] = {}
    now = T0
    serial = 0
    for obj, type, reason, message, step, repeat in sequence:
        now += step
        for _ in range(repeat):
            serial += 1
            event = make_event(obj, type, reason, message, now, serial)
            result = correlator.correlate(event, now)
            check_spam_filter(result, buckets.setdefault((obj, type), Bucket(last=now)), now, serial)
            check_aggregation(event, groups.setdefault((obj, type, reason), Group()), now, serial)
            check_dedupe(result, event, written, serial)


def check_spam_filter(result: Correlation | None, bucket: Bucket, now: float, serial: int) -> None:
    bucket.tokens = min(float(BURST), bucket.tokens + (now - bucket.last) * SPAM_QPS)
    bucket.last = now
    accepted = bucket.tokens >= 1.0
    if accepted:
        bucket.tokens -= 1.0
    assert (result is not None) == accepted, f"event {serial}: spam filter"


def check_aggregation(event: dict[str, Any], group: Group, now: float, serial: int) -> None:
    text = event["message"].removeprefix(AGGREGATE_PREFIX)
    if now - group.last > 600.0:
        group.seen = set()
    must_combine = text not in group.seen and len(group.seen) >= MAX_MESSAGES - 1
    may_combine = len(group.seen | {text}) >= MAX_MESSAGES
    group.seen.add(text)
    group.last = now
    combined = event["message"].startswith(AGGREGATE_PREFIX)
    if must_combine:
        assert combined, f"event {serial}: the {MAX_MESSAGES}th distinct message is combined"
    if not may_combine:
        assert not combined, f"event {serial}: fewer than {MAX_MESSAGES} distinct messages are not combined"


def check_dedupe(
    result: Correlation | None, event: dict[str, Any], written: dict[tuple[Any, ...], Written], serial: int
) -> None:
    """Every occurrence under one key is the same Event, counted once more."""
    key: tuple[Any, ...] = (
        "combined",
        event["reason"],
        *sorted(event["involvedObject"].items()),
        event["type"],
    )
    if not event["message"].startswith(AGGREGATE_PREFIX):
        key = ("event", event["message"], *key[1:])
    previous = written.get(key)
    if previous is None:
        assert event["count"] == 1
        written[key] = Written(event["metadata"]["name"], event["firstTimestamp"], 1)
    else:
        assert event["metadata"]["name"] == previous.name, f"event {serial}: same Event"
        assert event["firstTimestamp"] == previous.first
        assert event["count"] == previous.count + 1, f"event {serial}: counted"
        previous.count += 1
    if result is not None:
        assert result.update == (previous is not None), f"event {serial}: patch only what exists"


def test_one_object_over_its_burst_is_refused_until_a_token_returns() -> None:
    correlator = EventCorrelator()
    results = [correlator.correlate(make_event(0, "Normal", i, 0, T0, i), T0) for i in range(SPAM_BURST + 1)]
    assert all(r is not None for r in results[:SPAM_BURST]) and results[-1] is None
    assert correlator.correlate(make_event(1, "Normal", 0, 0, T0, 99), T0) is not None, "another object"
    later = T0 + 1 / SPAM_QPS
    assert correlator.correlate(make_event(0, "Normal", 0, 0, later, 100), later) is not None


def test_a_refused_repeat_still_counts() -> None:
    """The next Event that gets through carries every occurrence (eventObserve runs first)."""
    correlator = EventCorrelator(spam_burst=1)
    first = make_event(0, "Warning", 0, 0, T0, 0)
    assert correlator.correlate(first, T0) is not None
    for serial in range(1, 4):
        assert correlator.correlate(make_event(0, "Warning", 0, 0, T0, serial), T0) is None
    later = T0 + 1 / SPAM_QPS
    last = make_event(0, "Warning", 0, 0, later, 9)
    result = correlator.correlate(last, later)
    assert result is not None and result.update
    assert last["count"] == 5 and last["metadata"]["name"] == first["metadata"]["name"]
