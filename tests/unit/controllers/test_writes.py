"""Which planned writes count as writing a set's workload: those that may reshape
its pods, so it is not up to date while they run; that a plan does not apply
again what it just applied while the cache has not shown it yet; and which of
its writes go out together."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.unseen import Applied, Unseen
from mo_operator.controllers.framework.writes import (
    CREATE_LIMIT,
    Apply,
    Call,
    Create,
    Delete,
    Patch,
    Writes,
    applies,
)
from mo_operator.kube.meta.errors import Conflict

from .controller_fakes import RecordingClient, run


def _obj(kind: str) -> dict[str, Any]:
    api = {"StatefulSet": "apps/v1", "Deployment": "apps/v1"}.get(kind, "v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "x", "namespace": "ns"}}


def _plan() -> Writes:
    return Writes(cast(Any, RecordingClient()))


def test_configmaps_services_and_pod_marks_leave_the_workload_alone() -> None:
    plan = _plan()
    plan.apply(_obj("ConfigMap"), r.CONFIGMAPS)
    plan.apply(_obj("Service"), r.SERVICES)
    plan.delete(r.CONFIGMAPS, "ns", "old")
    plan.patch(r.PODS, "ns", "x-0", {"metadata": {"annotations": {"a": "b"}}})
    plan.call("ask MatrixOne", lambda: _nothing())
    assert plan and not plan.writes_workload


def test_a_statefulset_deployment_or_pod_write_is_a_workload_write() -> None:
    for write in (
        lambda p: p.apply(_obj("StatefulSet"), r.STATEFULSETS),
        lambda p: p.apply(_obj("Deployment"), r.DEPLOYMENTS),
        lambda p: p.create(_obj("Pod"), r.PODS),
        lambda p: p.delete(r.PODS, "ns", "x-0"),
        lambda p: p.patch(r.STATEFULSETS, "ns", "x", {"spec": {"replicas": 2}}),
    ):
        plan = _plan()
        write(plan)
        assert plan.writes_workload


async def _nothing() -> None:
    return None


async def _execute(plan: Writes) -> None:
    await plan(cast(Any, SimpleNamespace(log=logging.getLogger("test"))))


def test_an_apply_whose_event_never_came_is_made_again_after_the_ttl() -> None:
    now = [0.0]
    unseen = Unseen(ttl=5.0, clock=lambda: now[0])
    key, want = ("StatefulSet", "ns", "x"), {**_owned_by("a"), "spec": {"replicas": 2}}
    unseen.note(key, want, None)
    assert applies([(r.STATEFULSETS, want)], lambda _res, _name: None, unseen.of_owner("a")) == []
    moved_on = {**want, "metadata": {**want["metadata"], "resourceVersion": "7"}, "spec": {"replicas": 1}}
    assert applies([(r.STATEFULSETS, want)], lambda _res, _name: moved_on, unseen.of_owner("a")), (
        "the cache moved on"
    )
    now[0] = 6.0
    assert applies([(r.STATEFULSETS, want)], lambda _res, _name: None, unseen.of_owner("a")), "past its ttl"


def _owned_by(uid: str, name: str = "x") -> dict[str, Any]:
    owner = {"uid": uid, "controller": True}
    return {"kind": "StatefulSet", "metadata": {"name": name, "namespace": "ns", "ownerReferences": [owner]}}


def test_the_book_answers_per_owner_and_drops_what_is_older_than_its_ttl() -> None:
    now = [0.0]
    unseen = Unseen(ttl=5.0, clock=lambda: now[0])
    mine, theirs = ("StatefulSet", "ns", "x"), ("StatefulSet", "ns", "y")
    unseen.note(mine, _owned_by("a"), None)
    unseen.note(theirs, _owned_by("b", "y"), "3")
    assert unseen.of_owner("a") == {mine: Applied(_owned_by("a"), None)}
    assert unseen.of_owner("b") == {theirs: Applied(_owned_by("b", "y"), "3")}
    now[0] = 6.0
    assert unseen.of_owner("a") == {}, "past its ttl an apply says nothing"
    unseen.note(("Service", "ns", "z"), _owned_by("c", "z"), None)
    assert unseen.of_owner("b") == {} and unseen.of_owner("c") != {}, "the stale ones were dropped"


async def test_a_pure_apply_is_left_out_while_ours_is_on_its_way_and_noted_once_sent() -> None:
    want, res = _owned_by("a"), r.STATEFULSETS
    key = ("StatefulSet", "ns", "x")
    on_its_way = {key: Applied(want, None)}
    assert applies([(res, want)], lambda _res, _name: None, on_its_way) == []
    assert (
        applies([(res, want)], lambda _res, _name: {"metadata": {"resourceVersion": "9"}}, on_its_way) != []
    )
    [intent] = applies([(res, want)], lambda _res, _name: None, {})
    book = Unseen(clock=lambda: 0.0)
    plan = _plan()
    plan.intend(intent, book)
    assert plan and book.of_owner("a") == {}, "noted only once sent"
    await run(plan)
    assert book.of_owner("a") == {key: Applied(want, None)}


class GatedClient:
    """Applies that finish only when the test opens their gate, recording the order
    in which they start and end; ``fail`` names an object whose apply raises."""

    def __init__(self, fail: str | None = None) -> None:
        self.gates: dict[str, asyncio.Event] = {}
        self.log: list[str] = []
        self.fail = fail

    async def apply(self, obj: Mapping[str, Any], *, resource: Any, force: bool = False) -> Any:
        name = obj["metadata"]["name"]
        self.log.append(f"start {name}")
        if name == self.fail:
            raise Conflict("refused")
        try:
            await self.gates.setdefault(name, asyncio.Event()).wait()
        except asyncio.CancelledError:
            self.log.append(f"cancelled {name}")
            raise
        self.log.append(f"end {name}")
        return dict(obj)


def _named(kind: str, name: str) -> dict[str, Any]:
    return {**_obj(kind), "metadata": {"name": name, "namespace": "ns"}}


async def _until(condition: Callable[[], bool]) -> None:
    """Until ``condition`` holds, letting the plan's tasks run (no time passes)."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("the plan did not get there")


async def _let_run() -> None:
    """Some turns of the loop, for a step that must not start to have had its chance."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_configs_and_services_go_out_together_and_the_workload_after_them() -> None:
    client = GatedClient()
    plan = Writes(cast(Any, client))
    plan.apply(_named("ConfigMap", "config"), r.CONFIGMAPS)
    plan.apply(_named("Service", "headless"), r.SERVICES)
    plan.apply(_named("StatefulSet", "sts"), r.STATEFULSETS)
    plan.apply(_named("Service", "metrics"), r.SERVICES)
    running = asyncio.ensure_future(_execute(plan))
    await _until(lambda: len(client.log) == 2)
    assert client.log == ["start config", "start headless"], "both in flight at once"
    client.gates["headless"].set()
    await _until(lambda: len(client.log) == 3)
    await _let_run()
    assert "start sts" not in client.log, "the workload waits for the config it mounts"
    client.gates["config"].set()
    await _until(lambda: "start sts" in client.log)
    await _let_run()
    assert "start metrics" not in client.log, "what follows a workload waits for it"
    client.gates["sts"].set()
    client.gates.setdefault("metrics", asyncio.Event()).set()
    await running
    assert client.log[-2:] == ["start metrics", "end metrics"]


async def test_an_error_in_a_batch_cancels_the_rest_and_stops_the_plan() -> None:
    client = GatedClient(fail="headless")
    plan = Writes(cast(Any, client))
    plan.apply(_named("ConfigMap", "config"), r.CONFIGMAPS)
    plan.apply(_named("Service", "headless"), r.SERVICES)
    plan.apply(_named("StatefulSet", "sts"), r.STATEFULSETS)
    with pytest.raises(Conflict):
        await _execute(plan)
    assert client.log == ["start config", "start headless", "cancelled config"]


async def test_what_is_planned_after_then_goes_after_everything_before_it() -> None:
    client = GatedClient()
    plan = Writes(cast(Any, client))
    plan.apply(_named("ConfigMap", "logset"), r.CONFIGMAPS)
    plan.then()
    plan.apply(_named("ConfigMap", "dnset"), r.CONFIGMAPS)
    plan.apply(_named("ConfigMap", "cnset"), r.CONFIGMAPS)
    running = asyncio.ensure_future(_execute(plan))
    await _until(lambda: len(client.log) == 1)
    await _let_run()
    assert client.log == ["start logset"]
    client.gates["logset"].set()
    await _until(lambda: len(client.log) == 4)
    assert client.log[1:] == ["end logset", "start dnset", "start cnset"], "after it, and together"
    client.gates.setdefault("dnset", asyncio.Event()).set()
    client.gates.setdefault("cnset", asyncio.Event()).set()
    await running


class CountingCreates:
    """Creates that each take one turn of the loop, recording which ran at the same
    time (a batch), and refusing the names in ``refuse``."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.batches: list[list[str]] = []
        self.in_flight: list[str] = []
        self.refuse = refuse

    async def create(self, resource: Any, obj: Mapping[str, Any]) -> Any:
        name = obj["metadata"]["name"]
        if not self.in_flight:
            self.batches.append([])
        self.in_flight.append(name)
        self.batches[-1].append(name)
        await asyncio.sleep(0)
        self.in_flight.remove(name)
        if name in self.refuse:
            raise Conflict(f"{name} refused")
        return dict(obj)


def _pods(count: int) -> list[dict[str, Any]]:
    return [_named("Pod", f"cn-{i}") for i in range(count)]


async def test_pods_are_created_in_slow_start_batches_at_most_a_limit_per_round() -> None:
    """As the ReplicaSet controller's slowStartBatch: 1, 2, 4, ... at a time; a plan
    takes at most CREATE_LIMIT of them, the next round makes the rest."""
    client = CountingCreates()
    plan = Writes(cast(Any, client))
    for pod in _pods(100):
        plan.create(pod, r.PODS)
    assert plan.member_creates == CREATE_LIMIT and plan.deferred == 100 - CREATE_LIMIT
    await _execute(plan)
    assert [len(b) for b in client.batches] == [1, 2, 4, 8, 16, 32, 1]
    assert [n for b in client.batches for n in b] == [f"cn-{i}" for i in range(CREATE_LIMIT)]


async def test_the_first_refused_create_stops_the_round() -> None:
    """A spec the API server refuses costs one batch of refusals, not a hundred."""
    client = CountingCreates(refuse=frozenset({"cn-4"}))
    plan = Writes(cast(Any, client))
    for pod in _pods(20):
        plan.create(pod, r.PODS)
    with pytest.raises(Conflict):
        await _execute(plan)
    assert [len(b) for b in client.batches] == [1, 2, 4], "nothing after the batch that failed"


async def test_other_creates_are_not_batched_nor_limited() -> None:
    client = CountingCreates()
    plan = Writes(cast(Any, client))
    for i in range(CREATE_LIMIT + 5):
        plan.create(_named("Secret", f"s-{i}"), r.SECRETS)
    assert plan.deferred == 0
    await _execute(plan)
    assert len(client.batches) == 1 and len(client.batches[0]) == CREATE_LIMIT + 5, "they go together"


async def test_a_plan_is_data_read_without_running_it_and_run_as_read() -> None:
    client = RecordingClient()
    plan = Writes(cast(Any, client))
    plan.apply(_obj("ConfigMap"), r.CONFIGMAPS)
    plan.create(_obj("Secret"), r.SECRETS)
    plan.delete(r.PODS, "ns", "x-0", uid="uid-x-0")
    plan.patch(r.PODS, "ns", "x-1", {"metadata": {"labels": {"a": "b"}}}, what="label x-1")
    asked: list[str] = []

    async def ask() -> None:
        asked.append("asked")

    plan.call("ask MatrixOne", ask)
    assert plan.intents[:4] == [
        Apply(r.CONFIGMAPS, _obj("ConfigMap")),
        Create(r.SECRETS, _obj("Secret")),
        Delete(r.PODS, "ns", "x-0", uid="uid-x-0"),
        Patch(r.PODS, "ns", "x-1", {"metadata": {"labels": {"a": "b"}}}),
    ]
    assert isinstance(plan.intents[4], Call)
    assert [p.what for p in plan.steps] == [
        "apply ConfigMap x",
        "create Secret x",
        "delete Pod x-0",
        "label x-1",
        "ask MatrixOne",
    ]
    assert client.calls == [] and asked == [], "deciding wrote nothing"
    await plan(cast(Any, SimpleNamespace(log=logging.getLogger("test"))))
    assert [call[0] for call in client.calls] == ["apply", "create", "delete", "patch"]
    assert asked == ["asked"]
