"""Controller wiring (For/Owns/Watches with predicates) and the Actor
framework (finalizers, observedGeneration, conditions, terminal errors,
pause), with fake event sources and a fake writer."""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from mo_operator.kube.controller.actor import ActorReconciler, Context
from mo_operator.kube.controller.controller import (
    Controller,
    ReportedError,
    Request,
    Result,
    generation_changed,
    kept_changed,
)
from mo_operator.kube.controller.outcome import TerminalError, Wait
from mo_operator.kube.controller.status_policy import StatusWindow
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.frozen import freeze

Obj = dict[str, Any]


class FakeSource:
    def __init__(self) -> None:
        self.handlers: list[tuple[Callable[..., None], ...]] = []

    def add_event_handler(self, on_add: Any, on_update: Any, on_delete: Any) -> None:
        self.handlers.append((on_add, on_update, on_delete))

    def add(self, obj: Obj) -> None:
        for h in self.handlers:
            h[0](obj)

    def update(self, old: Obj, new: Obj) -> None:
        for h in self.handlers:
            h[1](old, new)


def obj(name: str, gen: int = 1, ns: str = "default", **meta: Any) -> Obj:
    return {"metadata": {"name": name, "namespace": ns, "generation": gen, **meta}}


async def test_for_owns_and_watches_enqueue_the_right_keys() -> None:
    seen: list[Request] = []

    async def reconcile(req: Request) -> None:
        seen.append(req)

    c = Controller("t", reconcile, max_concurrent=2)
    parents, children, others = FakeSource(), FakeSource(), FakeSource()
    c.for_(parents).owns(children, "example.com/v1", "Parent").watches(
        others, lambda o: [Request("default", o["metadata"]["labels"]["for"])]
    )
    c.start()
    parents.add(obj("p1"))
    parents.update(obj("p1"), obj("p1", labels={"a": "b"}))  # labels changed: passes the default predicate
    children.add(
        obj(
            "c1",
            ownerReferences=[
                {
                    "apiVersion": "example.com/v1",
                    "kind": "Parent",
                    "name": "p2",
                    "controller": True,
                    "uid": "u",
                }
            ],
        )
    )
    children.add(obj("c2", ownerReferences=[{"apiVersion": "v1", "kind": "Other", "name": "x", "uid": "u"}]))
    others.add(obj("o", labels={"for": "p3"}))
    await asyncio.sleep(0.05)
    await c.stop()
    assert sorted({str(r) for r in seen}) == ["default/p1", "default/p2", "default/p3"]


async def test_status_only_updates_do_not_requeue_with_the_generation_predicate() -> None:
    seen: list[Request] = []

    async def reconcile(req: Request) -> None:
        seen.append(req)

    c = Controller("t", reconcile)
    src = FakeSource()
    c.for_(src, generation_changed)
    c.start()
    old = obj("x", 1)
    src.update(old, dict(old, status={"ready": True}))
    await asyncio.sleep(0.05)
    assert seen == []
    src.update(old, obj("x", 2))
    await asyncio.sleep(0.05)
    await c.stop()
    assert seen == [Request("default", "x")]


async def test_errors_back_off_and_requeue_after_is_honoured() -> None:
    calls: list[float] = []
    loop = asyncio.get_running_loop()

    async def reconcile(req: Request) -> Result | None:
        calls.append(loop.time())
        if len(calls) < 3:
            raise RuntimeError("transient")
        if len(calls) == 3:
            return Result(requeue_after=0.1)
        return None

    c = Controller("t", reconcile)
    c.start()
    c.queue.add(Request("", "k"))
    for _ in range(100):
        if len(calls) >= 4:
            break
        await asyncio.sleep(0.02)
    await c.stop()
    assert len(calls) == 4
    assert calls[3] - calls[2] >= 0.09


class FakeWriter:
    def __init__(self, store: dict[str, Obj]) -> None:
        self.store = store
        self.writes: list[tuple[str, Obj]] = []

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        self.writes.append(("patch", patch))
        o = self.store[name]
        assert patch["metadata"].pop("resourceVersion") == o["metadata"]["resourceVersion"]
        fins = patch["metadata"]["finalizers"]
        o["metadata"]["finalizers"] = fins or []
        o["metadata"]["resourceVersion"] = str(int(o["metadata"]["resourceVersion"]) + 1)
        return o

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj:
        self.writes.append(("status", copy.deepcopy(status)))
        self.store[name]["status"] = copy.deepcopy(status)
        return self.store[name]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))


class ScriptedActor:
    def __init__(self) -> None:
        self.pending = 1
        self.finalized = False
        self.bad = False

    async def observe(self, ctx: Context) -> Any:
        if self.bad:
            raise TerminalError("InvalidSpec", "spec.replicas: must be positive")
        if self.pending:

            async def act(c: Context) -> None:
                self.pending -= 1

            return act
        ctx.status["replicas"] = 3
        ctx.set_condition("Ready", True, "AllReady")
        return None

    async def finalize(self, ctx: Context) -> bool:
        self.finalized = True
        return True


def make(store: dict[str, Obj]) -> tuple[ActorReconciler, ScriptedActor, FakeWriter, Recorder]:
    actor, writer, rec = ScriptedActor(), FakeWriter(store), Recorder()
    r = ActorReconciler(
        kind="Thing",
        actor=actor,
        get=lambda req: copy.deepcopy(store.get(req.name)),
        writer=writer,
        recorder=rec,
        finalizer="example.com/thing",
        pause_annotation="example.com/pause",
    )
    return r, actor, writer, rec


async def test_actor_lifecycle_and_zero_writes_when_settled() -> None:
    store = {
        "t": {"metadata": {"name": "t", "namespace": "default", "generation": 4, "resourceVersion": "1"}}
    }
    r, actor, writer, _ = make(store)
    req = Request("default", "t")
    assert await r(req) is None
    assert store["t"]["metadata"]["finalizers"] == ["example.com/thing"], "finalizer first, before observing"
    res = await r(req)
    assert res is not None and res.requeue_after == 2.0
    assert res.later == Wait(2.0, "the plan's writes to take effect"), "the look again says why"
    assert store["t"]["status"]["conditions"][0]["reason"] == "Progressing"
    await r(req)
    status = store["t"]["status"]
    assert status["observedGeneration"] == 4 and status["replicas"] == 3
    assert {c["type"]: c["status"] for c in status["conditions"]} == {"Synced": "True", "Ready": "True"}
    writes = len(writer.writes)
    await r(req)
    await r(req)
    assert len(writer.writes) == writes, "a settled object costs no writes"
    store["t"]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    await r(req)
    assert actor.finalized and store["t"]["metadata"]["finalizers"] == []


async def test_leading_conditions_are_written_first_whatever_order_they_were_set_in() -> None:
    """Synced is set before Ready here; a kind whose clients read conditions[0]
    names the types that must come first, and a status already in that order
    costs no write."""
    store = {
        "t": {"metadata": {"name": "t", "namespace": "default", "generation": 1, "resourceVersion": "1"}}
    }
    r, _, writer, _ = make(store)
    r.leading_conditions = ("Ready", "Synced")
    r.status_window = StatusWindow(window=0)  # the reorder below is written at once
    req = Request("default", "t")
    for _ in range(3):
        await r(req)
    assert [c["type"] for c in store["t"]["status"]["conditions"]] == ["Ready", "Synced"]
    store["t"]["status"]["conditions"].insert(0, store["t"]["status"]["conditions"].pop())  # another writer's
    store["t"]["metadata"]["resourceVersion"] = str(int(store["t"]["metadata"]["resourceVersion"]) + 1)
    await r(req)
    assert [c["type"] for c in store["t"]["status"]["conditions"]] == ["Ready", "Synced"], "put back in order"
    writes = len(writer.writes)
    await r(req)
    assert len(writer.writes) == writes


async def test_a_kind_without_a_finalizer_observes_at_once_and_removes_one_it_finds() -> None:
    store = {
        "t": {"metadata": {"name": "t", "namespace": "default", "generation": 1, "resourceVersion": "1"}}
    }
    r, actor, writer, _ = make(store)
    r.adds_finalizer = False
    req = Request("default", "t")
    await r(req)
    assert [kind for kind, _ in writer.writes] == ["status"], "observed in the first round, no finalizer"
    assert not store["t"]["metadata"].get("finalizers")
    store["t"]["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    writes = len(writer.writes)
    assert await r(req) is None
    assert not actor.finalized and len(writer.writes) == writes, "nothing of ours to remove"
    store["t"]["metadata"]["finalizers"] = ["example.com/thing", "other.io/keep"]  # from an older version
    await r(req)
    assert actor.finalized and store["t"]["metadata"]["finalizers"] == ["other.io/keep"]


async def test_finalizing_an_object_the_cache_still_shows_after_it_went_is_done() -> None:
    """Our finalizer was removed and the object went; the cache has not seen it go,
    so the next round finalizes again and the patch answers 404: nothing to retry."""
    stale = {
        "metadata": {
            "name": "t",
            "namespace": "default",
            "resourceVersion": "5",
            "finalizers": ["example.com/thing"],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
        }
    }
    r, actor, writer, _ = make({})
    r.get = lambda req: copy.deepcopy(stale)  # type: ignore[method-assign]

    async def gone(namespace: str, name: str, patch: Obj) -> Obj:
        writer.writes.append(("patch", patch))
        raise ApiError(404, "NotFound", 'things "t" not found')

    writer.merge_patch = gone  # type: ignore[method-assign]
    assert await r(Request("default", "t")) is None
    assert actor.finalized and len(writer.writes) == 1


async def test_a_status_write_answered_not_found_ends_the_round_without_retry() -> None:
    """The object went (its finalizer removed by someone else) between the cache read
    and our status write: the round is over, with no error to retry and no Event."""
    store = {
        "t": {"metadata": {"name": "t", "namespace": "default", "generation": 1, "resourceVersion": "1"}}
    }
    r, actor, writer, rec = make(store)
    r.adds_finalizer = False
    actor.pending = 0

    async def gone(namespace: str, name: str, status: Obj) -> Obj:
        writer.writes.append(("status", status))
        raise ApiError(404, "NotFound", 'things "t" not found')

    writer.patch_status = gone  # type: ignore[method-assign]
    assert await r(Request("default", "t")) is None
    assert [kind for kind, _ in writer.writes] == ["status"] and rec.events == []


async def test_adding_the_finalizer_to_an_object_already_gone_is_no_error() -> None:
    store = {
        "t": {"metadata": {"name": "t", "namespace": "default", "generation": 1, "resourceVersion": "1"}}
    }
    r, actor, writer, _ = make(store)

    async def gone(namespace: str, name: str, patch: Obj) -> Obj:
        writer.writes.append(("patch", patch))
        raise ApiError(404, "NotFound", 'things "t" not found')

    writer.merge_patch = gone  # type: ignore[method-assign]
    assert await r(Request("default", "t")) is None
    assert [kind for kind, _ in writer.writes] == ["patch"] and actor.pending == 1, "not observed"


async def test_terminal_error_sets_a_condition_and_one_event() -> None:
    store = {
        "t": {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "generation": 1,
                "resourceVersion": "1",
                "finalizers": ["example.com/thing"],
            }
        }
    }
    r, actor, _, rec = make(store)
    actor.bad = True
    assert await r(Request("default", "t")) is None
    assert await r(Request("default", "t")) is None
    cond = {c["type"]: c for c in store["t"]["status"]["conditions"]}
    assert cond["Synced"]["status"] == "False" and cond["Synced"]["reason"] == "InvalidSpec"
    assert rec.events == [("Warning", "InvalidSpec", "spec.replicas: must be positive")]


def _finalized_thing() -> dict[str, Obj]:
    return {
        "t": {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "generation": 1,
                "resourceVersion": "1",
                "finalizers": ["example.com/thing"],
            }
        }
    }


def _synced(store: dict[str, Obj]) -> Obj:
    return next(c for c in store["t"]["status"]["conditions"] if c["type"] == "Synced")


async def test_a_failing_reconcile_says_so_once_and_is_retried(caplog: pytest.LogCaptureFixture) -> None:
    """Synced=False with the error, one Warning Event and one traceback per distinct
    error; a retry failing the same way adds one log line and nothing else; the
    controller retries it (ReportedError) with backoff; a success clears it."""
    caplog.set_level(logging.DEBUG, logger="mo_operator.kube")
    store = _finalized_thing()
    r, actor, writer, rec = make(store)
    failure: list[Exception] = [ValueError("invalid label value: 'x' * 64")]

    async def failing(ctx: Context) -> None:
        ctx.set_condition("Ready", True, "HalfDone")  # drafted before the failure: not written
        raise failure[0]

    observe, actor.observe = actor.observe, failing  # type: ignore[method-assign,assignment]
    for _ in range(3):
        with pytest.raises(ReportedError) as raised:
            await r(Request("default", "t"))
        assert raised.value.__cause__ is failure[0]
    synced = _synced(store)
    assert (synced["status"], synced["reason"]) == ("False", "ReconcileError")
    assert synced["message"] == "ValueError: invalid label value: 'x' * 64"
    assert [c["type"] for c in store["t"]["status"]["conditions"]] == ["Synced"]
    assert rec.events == [("Warning", "ReconcileError", "ValueError: invalid label value: 'x' * 64")]
    assert len([w for w in writer.writes if w[0] == "status"]) == 1, "the same failure is written once"
    traced = [rec for rec in caplog.records if rec.exc_info]
    assert len(traced) == 1 and traced[0].exc_info is not None and traced[0].exc_info[1] is failure[0]

    failure[0] = ApiError(
        422, "Invalid", 'Service "x.y-cn" is invalid: metadata.name: must be a DNS-1035 label'
    )
    with pytest.raises(ReportedError):
        await r(Request("default", "t"))
    assert (
        _synced(store)["message"]
        == '422 Invalid: Service "x.y-cn" is invalid: metadata.name: must be a DNS-1035 label'
    )
    assert len(rec.events) == 2 and rec.events[-1][1] == "ReconcileError"
    assert len([rec for rec in caplog.records if rec.exc_info]) == 1, "an API error needs no traceback"

    actor.observe = observe  # type: ignore[method-assign]
    actor.pending = 0
    await r(Request("default", "t"))
    assert _synced(store)["status"] == "True"
    failure[0] = ValueError("invalid label value: 'x' * 64")
    actor.observe = failing  # type: ignore[method-assign,assignment]
    with pytest.raises(ReportedError):
        await r(Request("default", "t"))
    assert [e[1] for e in rec.events].count("ReconcileError") == 3, "the same error after a success is news"


async def test_a_failing_write_never_leaves_synced_true() -> None:
    """Synced=True for the generation, then a later correction's write fails: Synced goes
    False with the error, and back to Progressing and True once writes succeed."""
    store = _finalized_thing()
    r, actor, _, _ = make(store)
    actor.pending = 0
    await r(Request("default", "t"))
    assert _synced(store)["status"] == "True"
    broken = [True]

    async def correct(ctx: Context) -> Any:
        async def act(c: Context) -> None:
            if broken[0]:
                raise ApiError(500, "InternalError", "etcdserver: request timed out")

        return act

    actor.observe = correct  # type: ignore[method-assign,assignment]
    with pytest.raises(ReportedError):
        await r(Request("default", "t"))
    assert (_synced(store)["status"], _synced(store)["reason"]) == ("False", "ReconcileError")
    broken[0] = False
    await r(Request("default", "t"))
    assert (_synced(store)["status"], _synced(store)["reason"]) == ("False", "Progressing")


async def test_conflicts_and_throttling_are_only_retried() -> None:
    store = _finalized_thing()
    r, actor, writer, rec = make(store)
    for error in (
        ApiError(409, "Conflict", "the object has been modified"),
        ApiError(429, "TooManyRequests"),
    ):

        async def failing(ctx: Context, error: Exception = error) -> None:
            raise error

        actor.observe = failing  # type: ignore[method-assign,assignment]
        with pytest.raises(ApiError):
            await r(Request("default", "t"))
    assert writer.writes == [] and rec.events == []


async def test_the_controller_backs_off_a_reported_failure_without_logging_it_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="mo_operator.kube")
    calls = 0

    async def reconcile(req: Request) -> None:
        nonlocal calls
        calls += 1
        raise ReportedError("reported") from ValueError("boom")

    c = Controller("t", reconcile)
    c.start()
    c.queue.add(Request("", "k"))
    for _ in range(100):
        if calls >= 3:
            break
        await asyncio.sleep(0.02)
    await c.stop()
    assert calls >= 3, "retried"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], "the reconciler already said it"


async def test_pause_annotation_stops_all_writes() -> None:
    store = {
        "t": {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "generation": 1,
                "resourceVersion": "1",
                "annotations": {"example.com/pause": "true"},
            }
        }
    }
    r, _, writer, _ = make(store)
    await r(Request("default", "t"))
    assert writer.writes == []


async def test_condition_transitions_are_announced_once_as_events() -> None:
    """What an object goes through shows in its Events: each change of a condition's
    status or reason, once (Synced aside), Warning for the reasons said to be trouble."""
    store = {
        "t": {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "generation": 1,
                "resourceVersion": "1",
                "finalizers": ["example.com/thing"],
            }
        }
    }
    r, actor, _, rec = make(store)
    r.warning_reasons = frozenset({"Stalled"})
    actor.pending = 0
    await r(Request("default", "t"))
    await r(Request("default", "t"))  # nothing changed: nothing announced again
    assert rec.events == [("Normal", "AllReady", "Ready is True")]

    async def stalled(ctx: Context) -> None:
        ctx.set_condition("Ready", False, "Stalled", "pod p is not ready")

    actor.observe = stalled  # type: ignore[method-assign,assignment]
    await r(Request("default", "t"))
    assert rec.events[-1] == ("Warning", "Stalled", "pod p is not ready")


class LaggingCache:
    """A server the writer writes to and a cache that sees it only when told (``catch_up``),
    as an informer lags behind the writes a reconcile makes."""

    def __init__(self, obj: Obj) -> None:
        self.server = obj
        self.cache = copy.deepcopy(obj)
        self.status_writes: list[Obj] = []

    def get(self, req: Request) -> Obj:
        return copy.deepcopy(self.cache)

    def catch_up(self) -> None:
        self.cache = copy.deepcopy(self.server)

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        raise AssertionError("the object already has its finalizer")

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj:
        self.status_writes.append(copy.deepcopy(status))
        self.server["status"] = copy.deepcopy(status)
        meta = self.server["metadata"]
        meta["resourceVersion"] = str(int(meta["resourceVersion"]) + 1)
        return copy.deepcopy(self.server)


def _ready(status: Obj) -> Obj:
    return next(c for c in status["conditions"] if c["type"] == "Ready")


def lagging(ready: list[bool]) -> tuple[ActorReconciler, LaggingCache, Recorder]:
    """An actor that reports Ready as ``ready[0]`` says, over a lagging cache."""
    world = LaggingCache(
        {
            "metadata": {
                "name": "t",
                "namespace": "default",
                "uid": "u1",
                "generation": 1,
                "resourceVersion": "7",
                "finalizers": ["example.com/thing"],
            }
        }
    )

    class Reporter:
        async def observe(self, ctx: Context) -> None:
            ctx.set_condition("Ready", ready[0], "Up" if ready[0] else "Down")

        async def finalize(self, ctx: Context) -> bool:
            return True

    rec = Recorder()
    r = ActorReconciler(
        kind="Thing",
        actor=Reporter(),
        get=world.get,
        writer=world,
        recorder=rec,
        finalizer="example.com/thing",
        pause_annotation="example.com/pause",
    )
    return r, world, rec


async def test_a_status_written_but_not_yet_cached_is_neither_written_nor_announced_again() -> None:
    r, world, rec = lagging([True])
    req = Request("default", "t")
    await r(req)
    await r(req)  # the cache still shows no status: ours is on the server already
    assert len(world.status_writes) == 1
    assert [e[1] for e in rec.events] == ["Up"]
    world.catch_up()
    await r(req)
    assert len(world.status_writes) == 1 and len(rec.events) == 1


async def test_going_back_to_the_status_the_stale_cache_shows_is_still_written() -> None:
    """Down, then Up, then Down again before the cache saw Up: the server holds Up, so Down
    must be written although the cache already shows it."""
    ready = [False]
    r, world, rec = lagging(ready)
    req = Request("default", "t")
    await r(req)
    world.catch_up()  # the cache shows Down
    ready[0] = True
    await r(req)
    ready[0] = False
    await r(req)
    conditions = {c["type"]: c for c in world.server["status"]["conditions"]}
    assert conditions["Ready"]["status"] == "False"
    assert [_ready(w)["reason"] for w in world.status_writes] == ["Down", "Up", "Down"]
    assert [e[1] for e in rec.events] == ["Up", "Down"], "first appearing False is no news; each flip is"


async def test_someone_elses_newer_version_is_trusted_over_what_we_wrote() -> None:
    """Once the cache holds a version we did not base our write on, it is the truth again."""
    r, world, _ = lagging([True])
    req = Request("default", "t")
    await r(req)
    world.server["status"] = {}  # someone cleared the status after our write
    world.server["metadata"]["resourceVersion"] = "100"
    world.catch_up()
    await r(req)
    assert len(world.status_writes) == 2
    assert _ready(world.server["status"])["reason"] == "Up"


def test_an_owned_objects_update_wakes_its_owner_only_when_something_kept_changed() -> None:
    """Owned and watched kinds pass only updates of something the cache keeps: a new
    resource version alone (a field the cache dropped changed) wakes no one."""
    c = Controller("t", lambda req: asyncio.sleep(0))
    children = FakeSource()
    c.owns(children, "example.com/v1", "Parent")
    owner = [{"apiVersion": "example.com/v1", "kind": "Parent", "name": "p", "controller": True, "uid": "u"}]
    old = dict(obj("c", ownerReferences=owner, resourceVersion="1"), status={"ready": False})
    children.update(old, {**old, "metadata": {**old["metadata"], "resourceVersion": "2"}})
    assert not c.queue.busy
    children.update(old, {**old, "status": {"ready": True}})
    assert c.queue.busy


@pytest.mark.parametrize(
    ("change", "changed"),
    [
        ({"metadata": {"resourceVersion": "2"}}, False),
        ({}, False),
        ({"metadata": {"labels": {"a": "b"}}}, True),
        ({"metadata": {"resourceVersion": "2", "annotations": {"a": "b"}}}, True),
        ({"status": {"ready": True}}, True),
        ({"spec": {"replicas": 2}}, True),
        ({"data": {"k": "v"}}, True),
    ],
)
def test_kept_changed_ignores_only_the_resource_version(change: Obj, changed: bool) -> None:
    old: Obj = {"metadata": {"name": "x", "resourceVersion": "1"}, "spec": {"replicas": 1}, "status": {}}
    new = copy.deepcopy(old)
    for part, fields in change.items():
        new[part] = {**new.get(part, {}), **fields}
    assert kept_changed(freeze(old), freeze(new)) is changed
    assert kept_changed(old, new) is changed
