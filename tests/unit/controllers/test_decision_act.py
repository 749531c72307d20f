"""What ``Decision.act`` hands the framework: the plan keeps each intent as planned
(a MatrixOne call's description, an apply's unseen note), and an Event announcing
a write goes out only once the writes succeeded."""

from __future__ import annotations

from typing import Any, cast

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.decision import Decision, Emit
from mo_operator.controllers.framework.unseen import Unseen, awaits
from mo_operator.controllers.framework.writes import Apply, Call, Delete, Patch, Seen, Then
from mo_operator.kube.meta.errors import Conflict

from .controller_fakes import RecordingClient, context, events

OBJ = {"metadata": {"name": "x", "namespace": "ns", "uid": "u"}}
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"}}
OWNED_CM = {**CM, "metadata": {**CM["metadata"], "ownerReferences": [{"uid": "u", "controller": True}]}}


async def _nothing() -> None:
    return None


def test_a_call_keeps_its_description_in_the_plan() -> None:
    ctx = context(OBJ)
    plan = Decision((Call(_nothing, "drain CN cn-1"),)).act(ctx, cast(Any, RecordingClient()))
    assert plan is not None
    assert [p.what for p in plan.steps] == ["drain CN cn-1"]
    assert plan.description == "drain CN cn-1"


async def test_an_apply_decided_against_a_version_is_noted_once_sent() -> None:
    book = Unseen(clock=lambda: 0.0)
    key = ("ConfigMap", "ns", "c")
    intent = Apply(r.CONFIGMAPS, OWNED_CM, seen=Seen(None))
    plan = Decision((intent,)).act(context(OBJ), cast(Any, RecordingClient()), book)
    assert plan is not None
    assert book.of_owner("u") == {}, "noted once sent, not when planned"
    await plan(context(OBJ))
    assert awaits(book.of_owner("u").get(key), OWNED_CM, None), "the sent apply is awaited, not made again"


async def test_an_event_announcing_the_writes_goes_out_only_after_them() -> None:
    ctx = context(OBJ)
    decision = Decision(
        (Delete(r.PODS, "ns", "p", uid="u-p"),),
        events=(Emit("Normal", "Early", "at once"), Emit("Warning", "Released", "after", after_writes=True)),
    )
    plan = decision.act(ctx, cast(Any, RecordingClient()))
    assert plan is not None
    assert [e[1] for e in events(ctx)] == ["Early"]
    await plan(ctx)
    assert [e[1] for e in events(ctx)] == ["Early", "Released"]


async def test_an_announcing_event_is_not_sent_when_the_writes_fail() -> None:
    ctx = context(OBJ)
    client = RecordingClient()

    async def refuse(*args: Any, **kw: Any) -> None:
        raise Conflict(409, "Conflict", "changed")

    client.delete = refuse  # type: ignore[method-assign]
    decision = Decision(
        (Delete(r.PODS, "ns", "p"),), events=(Emit("Warning", "Released", "x", after_writes=True),)
    )
    plan = decision.act(ctx, cast(Any, client))
    assert plan is not None
    with pytest.raises(Conflict):
        await plan(ctx)
    assert events(ctx) == []


def test_an_announcing_event_with_no_writes_goes_out_at_once() -> None:
    ctx = context(OBJ)
    plan = Decision(events=(Emit("Warning", "Released", "x", after_writes=True),)).act(
        ctx, cast(Any, RecordingClient())
    )
    assert plan is None
    assert [e[1] for e in events(ctx)] == ["Released"]


async def test_a_finalizers_decision_runs_its_writes_and_says_whether_it_is_done() -> None:
    client = RecordingClient()
    ctx = context(OBJ)
    waiting = Decision((Delete(r.PODS, "ns", "p"),))
    assert await waiting.finalize(ctx, cast(Any, client)) is False
    done = Decision((Delete(r.PODS, "ns", "q"),), finalized=True)
    assert await done.finalize(ctx, cast(Any, client)) is True
    assert [call[2] for call in client.calls] == ["p", "q"]


def test_what_follows_then_goes_after_everything_before_it() -> None:
    """Two ConfigMaps go out together, unless the decision puts a ``Then`` between them."""
    other = {**CM, "metadata": {**CM["metadata"], "name": "d"}}
    together = Decision((Apply(r.CONFIGMAPS, CM), Apply(r.CONFIGMAPS, other)))
    apart = Decision((Apply(r.CONFIGMAPS, CM), Then(), Apply(r.CONFIGMAPS, other)))
    joined = together.act(context(OBJ), cast(Any, RecordingClient()))
    split = apart.act(context(OBJ), cast(Any, RecordingClient()))
    assert joined is not None and split is not None
    assert [[p.what for p in batch] for batch in joined.batches()] == [
        ["apply ConfigMap c", "apply ConfigMap d"]
    ]
    assert [[p.what for p in batch] for batch in split.batches()] == [
        ["apply ConfigMap c"],
        ["apply ConfigMap d"],
    ]


def test_a_patch_keeps_its_description_in_the_plan() -> None:
    patch = Patch(r.PODS, "ns", "p", {"metadata": {}}, what="mark p")
    plan = Decision((patch,)).act(context(OBJ), cast(Any, RecordingClient()))
    assert plan is not None and plan.description == "mark p"
