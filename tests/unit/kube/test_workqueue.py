"""Work queue semantics, after client-go's util/workqueue (queue.go,
delaying_queue.go, rate_limiting_queue.go, default_rate_limiters.go):
dedupe through the dirty set, no concurrent processing through the
processing set, delayed and rate-limited adds, shutdown, and the metrics."""

from __future__ import annotations

import asyncio
import random
import uuid

import pytest

from mo_operator.kube.controller.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    QueueShutDown,
    WorkQueue,
    default_controller_rate_limiter,
)
from mo_operator.kube.flowcontrol.ratelimit import TokenBucket
from mo_operator.kube.metrics.metrics import REGISTRY


def new_queue(**kwargs: object) -> WorkQueue[str]:
    return WorkQueue(f"test-{uuid.uuid4().hex[:8]}", **kwargs)  # type: ignore[arg-type]


def metric(name: str, queue: WorkQueue[str]) -> float:
    value = REGISTRY.get_sample_value(name, {"name": queue.name})
    assert value is not None, name
    return value


def drain_nowait(q: WorkQueue[str]) -> list[str]:
    keys = []
    while len(q):
        keys.append(q.get_nowait())
    return keys


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


# ------------------------------------------------------------------ basic queue
def test_a_key_is_queued_once_however_often_added() -> None:
    """client-go queue.go Add: a key already in the dirty set is not queued again."""
    q = new_queue()
    for _ in range(3):
        q.add("a")
    q.add("b")
    q.add("a")
    assert len(q) == 2
    assert drain_nowait(q) == ["a", "b"]
    with pytest.raises(asyncio.QueueEmpty):
        q.get_nowait()


def test_key_added_while_processing_is_handed_out_again_once_after_done() -> None:
    """client-go queue.go: Add of a processing key only marks it dirty; Done re-queues it."""
    q = new_queue()
    q.add("a")
    assert q.get_nowait() == "a"
    for _ in range(5):
        q.add("a")
    assert len(q) == 0  # never handed to a second worker meanwhile
    with pytest.raises(asyncio.QueueEmpty):
        q.get_nowait()
    q.done("a")
    assert drain_nowait(q) == ["a"]
    q.done("a")
    assert len(q) == 0


def test_done_without_change_does_not_requeue_and_unknown_keys_are_ignored() -> None:
    q = new_queue()
    q.add("a")
    q.get_nowait()
    q.done("a")
    q.done("never-seen")
    assert len(q) == 0


async def test_get_waits_for_an_add() -> None:
    q = new_queue()
    getter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not getter.done()
    q.add("a")
    assert await asyncio.wait_for(getter, 1) == "a"


async def test_a_getter_cancelled_after_being_woken_passes_the_key_on() -> None:
    """The asyncio.Queue pattern: a wake-up lost to cancellation must not strand a key."""
    q = new_queue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")  # wakes `first`
    first.cancel()
    assert await asyncio.wait_for(second, 1) == "a"
    with pytest.raises(asyncio.CancelledError):
        await first


# ------------------------------------------------------------------ delayed adds
async def test_add_after_delays_the_key() -> None:
    q = new_queue()
    q.add_after("a", 0.05)
    assert len(q) == 0
    assert await asyncio.wait_for(q.get(), 1) == "a"


async def test_add_after_non_positive_delay_adds_at_once() -> None:
    """delaying_queue.go AddAfter: duration <= 0 means Add."""
    q = new_queue()
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert drain_nowait(q) == ["a", "b"]


async def test_add_after_earlier_ready_time_wins() -> None:
    """delaying_queue.go insert(): an existing entry is only moved earlier, never later."""
    q = new_queue()
    loop = asyncio.get_running_loop()
    start = loop.time()
    q.add_after("a", 30)
    q.add_after("a", 0.02)
    assert await asyncio.wait_for(q.get(), 1) == "a"
    q.done("a")
    q.add_after("b", 0.02)
    q.add_after("b", 30)
    assert await asyncio.wait_for(q.get(), 1) == "b"
    assert loop.time() - start < 5
    # The superseded 30 s entries are gone: nothing comes back.
    q.done("b")
    await asyncio.sleep(0.05)
    assert len(q) == 0


async def test_delayed_keys_come_out_in_ready_time_order() -> None:
    q = new_queue()
    for key, delay in [("slow", 0.06), ("fast", 0.01), ("mid", 0.03)]:
        q.add_after(key, delay)
    got = [await asyncio.wait_for(q.get(), 1) for _ in range(3)]
    assert got == ["fast", "mid", "slow"]


async def test_100k_delayed_adds_use_one_timer_and_keep_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A heap with one timer: no task per delayed key, and keys become ready in
    ready-time order. The loop's clock is frozen so ready times are exact."""
    loop = asyncio.get_running_loop()
    now = [loop.time()]
    monkeypatch.setattr(loop, "time", lambda: now[0])
    q = new_queue()
    rng = random.Random(7)
    delays = {f"k{i}": rng.uniform(1.0, 100.0) for i in range(100_000)}
    tasks_before = len(asyncio.all_tasks())
    for key, delay in delays.items():
        q.add_after(key, delay)
    assert len(asyncio.all_tasks()) == tasks_before
    now[0] += 50.0
    for _ in range(5):
        await asyncio.sleep(0)
    first_half = drain_nowait(q)
    now[0] += 51.0
    for _ in range(5):
        await asyncio.sleep(0)
    got = first_half + drain_nowait(q)
    assert 0 < len(first_half) < len(delays)
    assert got == sorted(delays, key=delays.__getitem__)


async def test_100k_keys_are_each_processed_exactly_once_by_many_workers() -> None:
    q = new_queue()
    keys = [f"k{i}" for i in range(100_000)]
    for key in keys:
        q.add(key)
        q.add(key)
    seen: list[str] = []

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            seen.append(key)
            q.done(key)

    q.shutdown(drain=True)
    await asyncio.wait_for(asyncio.gather(*(worker() for _ in range(8))), 60)
    assert sorted(seen) == sorted(keys)


# ----------------------------------------------------------------- rate limits
def test_item_exponential_limiter_doubles_per_key_up_to_the_cap() -> None:
    """default_rate_limiters.go ItemExponentialFailureRateLimiter: base * 2^failures, capped."""
    limiter = ItemExponentialFailureRateLimiter[str](base=0.005, cap=0.04)
    assert [limiter.when("a") for _ in range(6)] == [0.005, 0.01, 0.02, 0.04, 0.04, 0.04]
    assert limiter.when("b") == 0.005  # per key
    assert limiter.num_requeues("a") == 6
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005


def test_item_exponential_limiter_survives_huge_failure_counts() -> None:
    limiter = ItemExponentialFailureRateLimiter[str](base=0.005, cap=1000.0)
    for _ in range(2000):
        delay = limiter.when("a")
    assert delay == 1000.0


def test_bucket_limiter_allows_the_burst_then_spaces_by_qps() -> None:
    """default_rate_limiters.go BucketRateLimiter: the token bucket's reservation delay."""
    clock = FakeClock()
    limiter = BucketRateLimiter[str](TokenBucket(10.0, 100, clock=clock))
    assert [limiter.when(f"k{i}") for i in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)
    assert limiter.num_requeues("x") == 0


def test_max_of_limiter_takes_the_longest_delay_and_counts_in_all() -> None:
    clock = FakeClock()
    per_key = ItemExponentialFailureRateLimiter[str](base=1.0, cap=100.0)
    overall = BucketRateLimiter[str](TokenBucket(1.0, 1, clock=clock))
    limiter = MaxOfRateLimiter(per_key, overall)
    assert limiter.when("a") == 1.0  # per-key 1 s, bucket 0 s
    assert limiter.when("a") == 2.0  # per-key 2 s, bucket 1 s
    assert limiter.when("b") == pytest.approx(2.0)  # per-key 1 s, bucket 2 s
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert per_key.num_requeues("a") == 0


def test_default_controller_rate_limiter_is_configurable() -> None:
    limiter: MaxOfRateLimiter[str] = default_controller_rate_limiter(
        base=0.5, cap=2.0, qps=1000.0, burst=1000
    )
    assert [limiter.when("a") for _ in range(4)] == [0.5, 1.0, 2.0, 2.0]


async def test_add_rate_limited_backs_off_and_forget_resets() -> None:
    """rate_limiting_queue.go AddRateLimited = AddAfter(item, rateLimiter.When(item))."""
    q: WorkQueue[str] = WorkQueue(
        f"test-{uuid.uuid4().hex[:8]}", ItemExponentialFailureRateLimiter[str](base=0.02, cap=1.0)
    )
    q.add_rate_limited("a")
    assert len(q) == 0
    assert q.num_requeues("a") == 1
    assert await asyncio.wait_for(q.get(), 1) == "a"
    q.done("a")
    q.add_rate_limited("a")
    assert q.num_requeues("a") == 2
    q.forget("a")
    assert q.num_requeues("a") == 0
    assert metric("workqueue_retries_total", q) == 2


# -------------------------------------------------------------------- shutdown
async def test_shutdown_without_drain_stops_getters_at_once() -> None:
    q = new_queue()
    waiting = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")
    q.add("b")
    key = await waiting
    q.add_after("c", 0.01)
    q.shutdown(drain=False)
    assert q.shutting_down
    with pytest.raises(QueueShutDown):
        await q.get()
    q.add("d")  # ignored
    q.add_after("e", 0.01)  # ignored
    q.done(key)  # in-flight work may still finish
    await asyncio.sleep(0.03)
    with pytest.raises(QueueShutDown):
        q.get_nowait()


async def test_shutdown_with_drain_hands_out_queued_and_requeued_work_then_stops() -> None:
    """Like client-go's ShutDownWithDrain: queued work and work re-queued by Done
    is still processed; new adds and delayed adds are dropped."""
    q = new_queue()
    q.add("a")
    q.add("b")
    assert q.get_nowait() == "a"
    q.add("a")  # dirty while processing
    q.add_after("late", 0.01)
    q.shutdown(drain=True)
    q.add("new")
    assert q.get_nowait() == "b"
    q.done("b")
    waiter = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not waiter.done()  # "a" is in flight and may come back
    q.done("a")
    assert await asyncio.wait_for(waiter, 1) == "a"
    other = asyncio.create_task(q.get())
    await asyncio.sleep(0.03)
    assert not other.done()
    q.done("a")
    with pytest.raises(QueueShutDown):
        await asyncio.wait_for(other, 1)
    with pytest.raises(QueueShutDown):
        await q.get()


# --------------------------------------------------------------------- metrics
async def test_metrics_follow_client_go_semantics() -> None:
    """client-go metrics.go: adds count effective adds, depth the dirty keys,
    latency from add to get, work duration from get to done."""
    q = new_queue()
    q.add("a")
    q.add("a")
    q.add("b")
    assert metric("workqueue_adds_total", q) == 2
    assert metric("workqueue_depth", q) == 2
    q.get_nowait()
    assert metric("workqueue_depth", q) == 1
    assert metric("workqueue_queue_duration_seconds_count", q) == 1
    await asyncio.sleep(0.01)
    assert metric("workqueue_unfinished_work_seconds", q) >= 0.01
    q.done("a")
    assert metric("workqueue_work_duration_seconds_count", q) == 1
    assert metric("workqueue_work_duration_seconds_sum", q) >= 0.01
    assert metric("workqueue_unfinished_work_seconds", q) == 0
    q.add_after("c", 0)
    assert metric("workqueue_retries_total", q) == 1


# ----------------------------------------------------------------- concurrency
@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_many_workers_never_share_a_key_and_miss_no_change(seed: int) -> None:
    """The two promises of the dirty/processing sets under load: a key is never
    processed by two workers at once, and every change made after a processing
    started leads to exactly one more processing (which sees it), never to a
    redundant one."""
    rng = random.Random(seed)
    q = new_queue()
    keys = [f"k{i}" for i in range(15)]
    version = dict.fromkeys(keys, 0)
    seen: dict[str, list[int]] = {k: [] for k in keys}
    in_flight: set[str] = set()
    overlaps: list[str] = []

    async def producer() -> None:
        for _ in range(400):
            key = rng.choice(keys)
            version[key] += 1
            q.add(key)
            await asyncio.sleep(0 if rng.random() < 0.8 else 0.001)

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
            seen[key].append(version[key])
            for _ in range(rng.randint(0, 3)):
                await asyncio.sleep(0)
            in_flight.discard(key)
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(40)]
    await asyncio.gather(*(producer() for _ in range(3)))
    q.shutdown(drain=True)
    await asyncio.wait_for(asyncio.gather(*workers), 30)

    assert overlaps == []
    assert sum(map(len, seen.values())) < sum(version.values())  # dedupe happened
    for key in keys:
        if version[key]:
            assert seen[key][-1] == version[key], key  # the last change was processed
        assert seen[key] == sorted(set(seen[key])), key  # no processing without a new change


async def test_delayed_requeues_under_load_never_overlap_and_all_fire() -> None:
    """add_after under many workers: still one worker per key, and no requeue
    is lost: each key is processed after its last add_after call (which may
    fire early, when an earlier ready time for the key was already pending)."""
    rng = random.Random(11)
    q = new_queue()
    keys = [f"k{i}" for i in range(10)]
    in_flight: set[str] = set()
    overlaps: list[str] = []
    last_processed: dict[str, float] = {}
    last_requeue: dict[str, float] = {}
    loop = asyncio.get_running_loop()

    async def producer() -> None:
        for _ in range(300):
            key = rng.choice(keys)
            last_requeue[key] = loop.time()
            q.add_after(key, rng.uniform(0, 0.005))
            await asyncio.sleep(0)

    async def worker() -> None:
        while True:
            try:
                key = await q.get()
            except QueueShutDown:
                return
            if key in in_flight:
                overlaps.append(key)
            in_flight.add(key)
            last_processed[key] = loop.time()
            await asyncio.sleep(0)
            in_flight.discard(key)
            q.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(20)]
    await asyncio.gather(producer(), producer())
    await asyncio.sleep(0.05)
    q.shutdown(drain=True)
    await asyncio.wait_for(asyncio.gather(*workers), 30)

    assert overlaps == []
    for key, requeued in last_requeue.items():
        assert last_processed[key] >= requeued, key


async def test_busy_while_a_key_is_queued_or_processed_but_not_while_it_waits_out_a_delay() -> None:
    q = new_queue()
    assert not q.busy
    q.add_after("later", 60)
    assert not q.busy, "a delayed key is not work to wait for"
    q.add("a")
    assert q.busy
    key = q.get_nowait()
    assert q.busy, "in flight"
    q.done(key)
    assert not q.busy
    q.shutdown()
