"""Status coalescing and Event announcing of the Actor framework: a burst of
non-urgent changes becomes one write per window that always carries the last
state, urgent changes are written at once, a settled object costs nothing,
Synced does not flap, and a transition is one Event."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.controller.actor import ActorReconciler, Context
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.controller.status_policy import (
    HELD_AT_BASE,
    MAX_WINDOW_FACTOR,
    StatusWindow,
    announcements,
    urgent,
)

Obj = dict[str, Any]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def cond(ctype: str, status: str, reason: str, message: str = "") -> Obj:
    return {"type": ctype, "status": status, "reason": reason, "message": message}


def status(*conditions: Obj, generation: int = 1, **fields: Any) -> Obj:
    return {"observedGeneration": generation, "conditions": list(conditions), **fields}


# ------------------------------------------------------------------ the rules
def test_what_is_urgent() -> None:
    waiting = status(cond("Ready", "False", "Waiting", "0/1"), replicas=0)
    assert urgent({}, waiting), "the first status"
    assert urgent(waiting, {**waiting, "observedGeneration": 2}), "a spec change answered"
    assert urgent(waiting, status(cond("Ready", "True", "Up"), replicas=0)), "a condition flips"
    assert urgent(waiting, {**waiting, "discovery": {"address": "x"}}), "a field others wait for appears"
    reported = {**waiting, "discovery": {"address": "x"}}
    assert not urgent(waiting, reported, quiet={"discovery"}), "a field that only reports waits"
    assert urgent(reported, waiting, quiet=()), "a field that goes"
    assert urgent(
        waiting, status(cond("Ready", "False", "Waiting"), cond("UpToDate", "False", "Applying"))
    ), "a condition appears"
    assert urgent(waiting, status(cond("Ready", "False", "Stalled"), replicas=0), warnings={"Stalled"})
    assert not urgent(waiting, status(cond("Ready", "False", "Waiting", "1/2"), replicas=1)), (
        "counts and messages can wait"
    )
    assert not urgent(waiting, status(cond("Ready", "False", "Starting"), replicas=0)), "a Normal reason"
    rolling = status(
        cond("Ready", "True", "Up"), cond("UpToDate", "False", "Rolling"), cond("Synced", "False", "P")
    )
    assert urgent(
        rolling,
        status(cond("Ready", "True", "Up"), cond("UpToDate", "True", "Done"), cond("Synced", "False", "P")),
    ), "a roll complete: the next component waits for it"
    assert not urgent(
        rolling,
        status(
            cond("Ready", "True", "Up"), cond("UpToDate", "False", "Rolling"), cond("Synced", "True", "S")
        ),
    ), "Synced settling"
    assert not urgent(
        status(cond("UpToDate", "True", "Done")), status(cond("UpToDate", "False", "Rolling"))
    ), "a roll starting: the new generation already said so"


def test_the_window_spaces_writes_of_one_object_only() -> None:
    clock = Clock()
    window = StatusWindow(2.0, clock, settle=0.0)
    assert window.wait("a", is_urgent=False) == 0.0, "nothing written yet"
    window.wrote("a")
    clock.now += 0.5
    assert window.wait("a", is_urgent=False) == 1.5
    assert window.wait("a", is_urgent=True) == 0.0
    assert window.wait("b", is_urgent=False) == 0.0, "per object"
    clock.now += 1.5
    assert window.wait("a", is_urgent=False) == 0.0
    window.forget("a")
    assert window.wait("a", is_urgent=False) == 0.0


def test_consecutive_non_urgent_writes_stretch_the_window_up_to_a_bound() -> None:
    clock = Clock()
    window = StatusWindow(2.0, clock)
    window.wrote("a", is_urgent=True)
    held = []
    for _ in range(6):
        held.append(window.wait("a", is_urgent=False))
        clock.now += held[-1]
        window.wrote("a", is_urgent=False)
    assert held == [2.0, 4.0, 8.0, 12.0, 12.0, 12.0], "doubling, at most MAX_WINDOW_FACTOR windows"
    assert window.wait("a", is_urgent=True) == 0.0, "what anyone waits for never waits"
    window.wrote("a", is_urgent=True)
    assert window.wait("a", is_urgent=False) == 2.0, "an urgent write starts again from one window"
    window.wrote("a", is_urgent=False)
    window.wrote("a", is_urgent=False)
    clock.now += 100
    window.wrote("a", is_urgent=False)
    assert window.wait("a", is_urgent=False) == 2.0, "after a quiet spell, one window again"


def test_a_crowd_of_objects_holding_changes_stretches_the_settle_time() -> None:
    clock = Clock()
    window = StatusWindow(2.0, clock)
    for key in range(100):
        window.wrote(key)
    clock.now += 10
    assert [window.wait(key, is_urgent=False) for key in range(HELD_AT_BASE)] == [2.0] * HELD_AT_BASE, (
        "a few objects: the base settle time"
    )
    crowd = 3 * HELD_AT_BASE
    held = [window.wait(key, is_urgent=False) for key in range(HELD_AT_BASE, crowd)]
    assert held[-1] == 6.0, "three times the crowd, three times the settle"
    assert window.wait(0, is_urgent=False) == 6.0, "an object already holding waits with the crowd"
    assert window.wait(0, is_urgent=True) == 0.0, "what anyone waits for never waits"
    for key in range(1, crowd):
        window.unchanged(key)
    assert window.wait(0, is_urgent=False) == 2.0, "the crowd gone, the base settle time again"
    for key in range(100):
        window.wait(key, is_urgent=False)
    assert window.wait(0, is_urgent=False) == 2.0 * MAX_WINDOW_FACTOR, "bounded"


def test_one_event_per_transition_and_every_warning() -> None:
    before = status(cond("Ready", "False", "Creating"), cond("UpToDate", "False", "Applying"))
    both_up = status(cond("Ready", "True", "AllReady"), cond("UpToDate", "True", "RolloutComplete"))
    assert [(w, c["reason"]) for w, c in announcements(before, both_up)] == [(False, "AllReady")]
    assert announcements({}, before) == [], "appearing False: said by the status, not an Event"
    assert [c["reason"] for _, c in announcements({}, both_up)] == ["AllReady"]
    troubled = status(cond("Ready", "False", "StoresDown"), cond("UpToDate", "False", "RolloutStalled"))
    found = announcements(before, troubled, warnings={"StoresDown", "RolloutStalled"})
    assert [(w, c["reason"]) for w, c in found] == [(True, "StoresDown"), (True, "RolloutStalled")]
    rolling = status(cond("Ready", "True", "AllReady"), cond("UpToDate", "False", "RollingUpdate"))
    assert [c["reason"] for _, c in announcements(both_up, rolling)] == ["RollingUpdate"], (
        "a Ready object rolls"
    )
    ready_rolled = status(cond("Ready", "False", "Creating"), cond("UpToDate", "True", "RolloutComplete"))
    assert announcements(before, ready_rolled) == [], "on its way to Ready: the Ready Event says it"
    just_ready = status(
        {**cond("Ready", "True", "AllReady"), "lastTransitionTime": "2026-01-01T00:00:00Z"},
        cond("UpToDate", "False", "RollingUpdate"),
    )
    became = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC).timestamp()
    assert announcements(just_ready, both_up, now=became + 1) == [], "the roll finishing as it turns Ready"
    assert [c["reason"] for _, c in announcements(just_ready, both_up, now=became + 60)] == [
        "RolloutComplete"
    ]
    assert (
        announcements(rolling, status(cond("Ready", "True", "AllReady"), cond("UpToDate", "False", "X")))
        == []
    )
    synced = status(cond("Synced", "True", "Synced"))
    assert announcements({}, synced, skip={"Synced"}) == []


def test_a_served_object_announces_every_transition() -> None:
    ready = status(cond("Ready", "True", "AllReady"), cond("UpToDate", "True", "RolloutComplete"))
    restarting = status(cond("Ready", "False", "StoresNotReady"), cond("UpToDate", "False", "RollingUpdate"))
    assert [c["reason"] for _, c in announcements(ready, restarting)] == ["StoresNotReady"]
    assert [c["reason"] for _, c in announcements(ready, restarting, served=True)] == [
        "StoresNotReady",
        "RollingUpdate",
    ]
    assert [c["reason"] for _, c in announcements(restarting, ready, served=True)] == [
        "AllReady",
        "RolloutComplete",
    ]


def test_an_object_has_served_once_ready_and_then_given_a_new_spec() -> None:
    window = StatusWindow(clock=Clock())
    creating = status(cond("Ready", "False", "Creating"))
    assert not window.has_served("a", creating, generation=1)
    just_ready = status(
        {**cond("Ready", "True", "AllReady"), "lastTransitionTime": "2026-01-01T00:00:00Z"}, generation=1
    )
    became = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC).timestamp()
    assert not window.has_served("a", just_ready, generation=1, now=became + 1), "still converging"
    assert window.has_served("a", just_ready, generation=2, now=became + 1), "a new spec: a Day-2 change"
    assert window.has_served("b", just_ready, generation=1, now=became + 60), "Ready for longer than a window"
    window.forget("a")
    assert not window.has_served("a", creating, generation=3), "forgotten with the object"


# --------------------------------------------------------- in the framework
class Server:
    """The object on the server, a cache that sees every write at once, and the writes."""

    def __init__(self) -> None:
        self.obj: Obj = {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "uid": "u1",
                "generation": 1,
                "resourceVersion": "1",
                "finalizers": ["example.com/thing"],
            }
        }
        self.status_writes: list[Obj] = []
        self.events: list[tuple[str, str, str]] = []

    def get(self, req: Request) -> Obj:
        return copy.deepcopy(self.obj)

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        raise AssertionError("the finalizer is in place")

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj:
        self.status_writes.append(copy.deepcopy(status))
        self.obj["status"] = copy.deepcopy(status)
        meta = self.obj["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        return self.obj

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))


class Reporter:
    """Reports ``ready`` and ``message`` as its Ready condition; returns ``action`` if set."""

    def __init__(self) -> None:
        self.ready = False
        self.message = "0/3"
        self.action: Any = None

    async def observe(self, ctx: Context) -> Any:
        ctx.set_condition("Ready", self.ready, "Up" if self.ready else "Starting", self.message)
        return self.action

    async def finalize(self, ctx: Context) -> bool:
        return True


def world(window: float = 2.0) -> tuple[ActorReconciler, Server, Reporter, Clock]:
    server, actor, clock = Server(), Reporter(), Clock()
    reconciler = ActorReconciler(
        kind="Thing",
        actor=actor,
        get=server.get,
        writer=server,
        recorder=server,
        finalizer="example.com/thing",
        pause_annotation="example.com/pause",
        status_window=StatusWindow(window, clock),
    )
    return reconciler, server, actor, clock


def _ready(status: Obj) -> Obj:
    return next(c for c in status["conditions"] if c["type"] == "Ready")


async def test_a_burst_of_changes_is_one_write_per_window_carrying_the_last_state() -> None:
    r, server, actor, clock = world(window=2.0)
    req = Request("default", "t")
    await r(req)
    assert len(server.status_writes) == 1
    for message in ("1/3", "2/3"):
        clock.now += 0.5
        actor.message = message
        result = await r(req)
        assert result is not None and result.requeue_after is not None, "held back: look again later"
        assert result.requeue_after <= 2.0
    assert len(server.status_writes) == 1, "inside the window nothing is written"
    assert r.holding, "not converged: a write is owed"
    clock.now += 1.0
    await r(req)
    assert len(server.status_writes) == 1, "the window closed, but the first change has not stood 2 s"
    clock.now += 0.5  # the requeue comes back
    await r(req)
    assert len(server.status_writes) == 2
    assert not r.holding
    assert _ready(server.status_writes[-1])["message"] == "2/3", "the last state, not an intermediate one"


async def test_a_change_after_a_quiet_spell_waits_for_the_rest_of_its_burst() -> None:
    r, server, actor, clock = world(window=2.0)
    req = Request("default", "t")
    await r(req)
    clock.now += 60.0  # long past the window: a set waiting for its LogSet
    actor.message = "the LogSet is up: 0/3"
    result = await r(req)
    assert result is not None and result.requeue_after == 2.0, "held until it has stood a window"
    assert len(server.status_writes) == 1
    clock.now += 1.0
    actor.ready, actor.message = True, "3/3"
    await r(req)
    assert len(server.status_writes) == 2, "the burst ended in the urgent write, which carries it"
    assert _ready(server.status_writes[-1])["message"] == "3/3"
    assert not r.holding
    clock.now += 60.0
    actor.message = "3/3, one restarted"
    await r(req)
    actor.message = "3/3"
    assert await r(req) is None, "the change went back before it stood: nothing owed"
    assert not r.holding
    clock.now += 0.5
    actor.message = "3/3, again"
    result = await r(req)
    assert result is not None and result.requeue_after == 2.0, "a change seen after that starts anew"


async def test_an_urgent_change_is_written_at_once_inside_the_window() -> None:
    r, server, actor, clock = world(window=10.0)
    req = Request("default", "t")
    await r(req)
    clock.now += 0.1
    actor.ready, actor.message = True, "3/3"
    await r(req)
    assert [_ready(w)["status"] for w in server.status_writes] == ["False", "True"]
    assert [e[1] for e in server.events] == ["Up"]


async def test_a_settled_object_costs_no_write_and_no_requeue() -> None:
    r, server, actor, clock = world(window=2.0)
    req = Request("default", "t")
    actor.ready = True
    await r(req)
    writes = len(server.status_writes)
    for _ in range(5):
        clock.now += 0.1
        assert await r(req) is None, "nothing held back, nothing to look at again"
    assert len(server.status_writes) == writes == 1


async def test_synced_does_not_flap_with_corrections_of_the_same_generation() -> None:
    r, server, actor, _ = world(window=0.0)
    req = Request("default", "t")
    done: list[int] = []

    async def act(ctx: Context) -> None:
        done.append(1)

    actor.action = act
    await r(req)
    actor.action = None
    await r(req)
    assert [c["status"] for w in server.status_writes for c in w["conditions"] if c["type"] == "Synced"] == [
        "False",
        "True",
    ]
    actor.action = act  # a correction of the world, same spec
    await r(req)
    synced = next(c for c in server.obj["status"]["conditions"] if c["type"] == "Synced")
    assert synced["status"] == "True" and len(done) == 2
    server.obj["metadata"]["generation"] = 2  # the user changed the spec
    await r(req)
    synced = next(c for c in server.obj["status"]["conditions"] if c["type"] == "Synced")
    assert (synced["status"], synced["reason"]) == ("False", "Progressing")


async def test_a_cache_older_than_our_write_is_not_mistaken_for_the_server() -> None:
    """A metadata write (rv 2) landed just before our status write (rv 3); the cache
    then shows rv 2, without our status: writing it again would be a wasted write."""
    r, server, _, clock = world(window=2.0)
    req = Request("default", "t")
    seen_by_cache = copy.deepcopy(server.obj)  # rv 1
    r.get = lambda req: copy.deepcopy(seen_by_cache)  # type: ignore[method-assign]
    server.obj["metadata"]["resourceVersion"] = "2"  # someone's metadata write
    await r(req)
    assert server.obj["metadata"]["resourceVersion"] == "3" and len(server.status_writes) == 1
    seen_by_cache["metadata"]["resourceVersion"] = "2"  # the cache caught up with rv 2 only
    clock.now += 0.1
    assert await r(req) is None
    assert len(server.status_writes) == 1, "the server holds ours already"
    seen_by_cache["metadata"]["resourceVersion"] = "5"  # a newer version without it: the truth again
    await r(req)
    assert len(server.status_writes) == 2
