"""The pooling side of the CNSet (controllers/cnset/pooling.py): which pods a
Pooling set keeps, creates and removes, and how it moves pods along their pool
phases with MatrixOne in the loop."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.api.base import parse
from mo_operator.api.cnset import CNSetSpec
from mo_operator.controllers.cnset import pooling
from mo_operator.controllers.cnset.observed import CNSetView, Draft
from mo_operator.controllers.cnset.pooling import PoolingDecision, PoolMember, decide_pooling
from mo_operator.controllers.cnset.reads import ask
from mo_operator.controllers.specs.pods import format_time
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .controller_fakes import NOW, FakeCaches, context, events, run, writes
from .pool_fakes import FakeAdmin, pool_env, pool_pod, store, uuid_of

IDLE, BOUND, DRAINING = labels.POOL_PHASE_IDLE, labels.POOL_PHASE_BOUND, labels.POOL_PHASE_DRAINING
UNKNOWN, TERMINATING = labels.POOL_PHASE_UNKNOWN, labels.POOL_PHASE_TERMINATING


def member(i: int, phase: str = IDLE, *, ready: bool = True, deleting: bool = False) -> PoolMember:
    return PoolMember(f"p-cn-{i}", i, phase, ready, deleting)


# --- the decision ---------------------------------------------------------------------


def test_an_empty_set_creates_every_pod_at_once() -> None:
    assert decide_pooling([], 3) == PoolingDecision(create=(0, 1, 2))


def test_pods_in_use_are_kept_even_beyond_replicas() -> None:
    pods = [member(0, BOUND), member(1, DRAINING), member(2, IDLE)]
    d = decide_pooling(pods, 1)
    assert d.retire == ("p-cn-2",) and d.create == ()


def test_scale_in_takes_unregistered_pods_first_then_the_highest_index() -> None:
    pods = [member(0), member(1), member(2), member(3, UNKNOWN, ready=False)]
    assert decide_pooling(pods, 2).retire == ("p-cn-3", "p-cn-2")
    assert decide_pooling(pods, 1).retire == ("p-cn-3", "p-cn-2", "p-cn-1")


def test_terminating_pods_always_go_and_are_replaced() -> None:
    pods = [member(0), member(1, TERMINATING)]
    assert decide_pooling(pods, 2) == PoolingDecision(create=(2,), retire=("p-cn-1",))


def test_pods_to_delete_never_remove_a_pod_in_use() -> None:
    pods = [member(0, BOUND), member(1)]
    d = decide_pooling(pods, 2, {"p-cn-0", "p-cn-1"})
    assert d.retire == ("p-cn-1",) and d.create == (2,)


def test_deleting_pods_hold_their_index() -> None:
    pods = [member(0, deleting=True), member(2)]
    assert decide_pooling(pods, 3).create == (1, 3)


_phase = st.sampled_from([UNKNOWN, IDLE, BOUND, DRAINING, TERMINATING])


@settings(max_examples=300, deadline=None)
@given(
    phases=st.lists(st.tuples(_phase, st.booleans(), st.booleans()), max_size=8), replicas=st.integers(0, 8)
)
def test_the_set_ends_with_its_pods_in_use_and_enough_spares(
    phases: list[tuple[str, bool, bool]], replicas: int
) -> None:
    pods = [
        member(i, phase, ready=ready, deleting=deleting) for i, (phase, ready, deleting) in enumerate(phases)
    ]
    d = decide_pooling(pods, replicas)
    retired = set(d.retire)
    live = [p for p in pods if not p.deleting]
    in_use = [p for p in live if p.phase in (BOUND, DRAINING)]
    assert not retired & {p.name for p in in_use}, "a pod in use is never removed"
    assert all(p.name in retired for p in live if p.phase == TERMINATING)
    staying = [p for p in live if p.name not in retired]
    assert len(staying) + len(d.create) == max(replicas, len(in_use))
    assert not set(d.create) & {p.index for p in pods}, "new pods never take an index in use"


# --- phases and stores ----------------------------------------------------------------

SPEC = parse(CNSetSpec, {"replicas": 1, "scalingConfig": {"minDelaySeconds": 10, "storeDrainTimeout": "5m"}})


OBJ = {"kind": "CNSet", "metadata": {"name": "pool-abc", "namespace": "ns"}}


def view_of(pods: tuple[dict[str, Any], ...], admin: FakeAdmin, state: Any) -> CNSetView:
    return CNSetView(OBJ, SPEC, pods, state, cast(Any, admin), NOW, 300.0)


async def sync(*pods: dict[str, Any], admin: FakeAdmin) -> tuple[bool, list[Any], Any]:
    """One pooling round's store sync: read as the actor reads, decide, run the plan."""
    env = pool_env(FakeCaches(*pods), admin)
    ctx = context(OBJ)
    view = view_of(pods, admin, await admin.hakeeper_state())
    reclaimed = [p for p in pods if pooling.reclaim_asks_load(view, p)]
    loads, locks = await ask(cast(Any, admin), SPEC, (), reclaimed, pooling.reclaim_asks_locks)
    view = replace(view, loads=loads, locks=locks)
    out = Draft()
    unsettled = pooling.sync_pool_stores(view, (), out)
    plan = out.done().act(ctx, env.client)
    return unsettled, await run(plan) if plan is not None else [], ctx


def phase_patches(calls: list[Any]) -> list[tuple[str, Any]]:
    return [
        (name, patch["metadata"])
        for verb, kind, name, patch in calls
        if verb == "patch"
        and kind == "Pod"
        and labels.POOL_PHASE in (patch.get("metadata") or {}).get("labels", {})
    ]


def readiness(calls: list[Any]) -> dict[str, tuple[str, str]]:
    out = {}
    for _, _, name, patch in calls:
        for c in (patch.get("status") or {}).get("conditions") or ():
            out[name] = (c["status"], c["reason"])
    return out


async def test_a_registered_new_pod_becomes_idle_under_its_resource_version() -> None:
    pod = pool_pod(0, UNKNOWN, rv="7")
    unsettled, calls, _ = await sync(pod, admin=FakeAdmin(store(pod)))
    assert phase_patches(calls) == [
        ("pool-abc-cn-0", {"resourceVersion": "7", "labels": {labels.POOL_PHASE: IDLE}})
    ]
    assert readiness(calls) == {"pool-abc-cn-0": ("True", "Idle")}
    assert not unsettled


async def test_a_new_pod_whose_store_works_is_taken_out_of_service_before_it_is_idle() -> None:
    pod = pool_pod(0, UNKNOWN)
    admin = FakeAdmin(store(pod, WorkState.WORKING, {"role": ("x",)}))
    unsettled, calls, _ = await sync(pod, admin=admin)
    assert admin.calls == [("set_cn_work_state", uuid_of(pod), WorkState.DRAINING, {})]
    assert phase_patches(calls) == [] and unsettled


async def test_an_unregistered_pod_waits_and_is_not_ready() -> None:
    pod = pool_pod(0, UNKNOWN)
    unsettled, calls, _ = await sync(pod, admin=FakeAdmin())
    assert unsettled and phase_patches(calls) == []
    assert readiness(calls) == {"pool-abc-cn-0": ("False", "NotRegistered")}


async def test_a_bound_pod_is_left_to_its_claim() -> None:
    working = pool_pod(0, BOUND, claimed_by="c")
    binding = pool_pod(1, BOUND, claimed_by="d")
    admin = FakeAdmin(store(working, WorkState.WORKING, {"role": ("c",)}), store(binding))
    _, calls, _ = await sync(working, binding, admin=admin)
    assert admin.calls == [] and phase_patches(calls) == []
    assert readiness(calls) == {"pool-abc-cn-0": ("True", "Bound"), "pool-abc-cn-1": ("False", "Binding")}


def reclaimed(index: int, ago: float, **kw: Any) -> dict[str, Any]:
    annotations = {labels.RECLAIMED_AT: format_time(NOW - ago), **kw.pop("annotations", {})}
    return pool_pod(index, DRAINING, annotations=annotations, rv="9", **kw)


async def test_a_reclaimed_pod_still_working_is_drained_without_labels() -> None:
    pod = reclaimed(0, 1)
    admin = FakeAdmin(store(pod, WorkState.WORKING, {"role": ("x",)}))
    unsettled, calls, _ = await sync(pod, admin=admin)
    assert admin.calls == [("set_cn_work_state", uuid_of(pod), WorkState.DRAINING, {})] and unsettled
    assert phase_patches(calls) == []


async def test_a_drained_reclaimed_pod_returns_to_idle() -> None:
    pod = reclaimed(0, 20)
    unsettled, calls, _ = await sync(pod, admin=FakeAdmin(store(pod)))
    assert phase_patches(calls) == [
        (
            "pool-abc-cn-0",
            {
                "resourceVersion": "9",
                "labels": {labels.POOL_PHASE: IDLE},
                "annotations": {labels.RECLAIMED_AT: None},
            },
        )
    ]
    assert readiness(calls) == {"pool-abc-cn-0": ("True", "Idle")}, "its gate turns with its phase"
    assert not unsettled


def test_a_pod_back_from_a_drain_is_kept_over_a_newer_spare_while_its_gate_catches_up() -> None:
    back = pool_pod(0, IDLE, ready=False)  # Ready waits on the gate the drain held False
    back["status"]["conditions"].append({"type": "ContainersReady", "status": "True"})
    newer, broken = pool_pod(3, IDLE), pool_pod(4, IDLE, ready=False)
    assert decide_pooling(pooling.members([back, newer, broken]), 1).retire == (
        "pool-abc-cn-4",
        "pool-abc-cn-3",
    )


async def test_a_reclaimed_pod_waits_for_its_sessions_and_the_minimum_delay() -> None:
    busy = reclaimed(0, 20)
    early = reclaimed(1, 2)
    admin = FakeAdmin(store(busy), store(early), sessions={uuid_of(busy): 3})
    unsettled, calls, ctx = await sync(busy, early, admin=admin)
    assert unsettled and phase_patches(calls) == []
    assert ctx.requeue_after == 8


async def test_outdated_or_delete_on_reclaim_pods_leave_instead_of_idling() -> None:
    outdated = reclaimed(0, 20, extra_labels={labels.POD_OUTDATED: "y"})
    marked = reclaimed(1, 20, annotations={labels.DELETE_ON_RECLAIM: "y"})
    _, calls, _ = await sync(outdated, marked, admin=FakeAdmin(store(outdated), store(marked)))
    assert [(n, m["labels"][labels.POOL_PHASE]) for n, m in phase_patches(calls)] == [
        ("pool-abc-cn-0", TERMINATING),
        ("pool-abc-cn-1", TERMINATING),
    ]


async def test_a_drain_past_its_timeout_removes_the_pod_with_a_warning() -> None:
    pod = reclaimed(0, 301)
    admin = FakeAdmin(store(pod), sessions={uuid_of(pod): 3})
    _, calls, ctx = await sync(pod, admin=admin)
    assert [m["labels"][labels.POOL_PHASE] for _, m in phase_patches(calls)] == [TERMINATING]
    assert [e[:2] for e in events(ctx)] == [("Warning", "DrainTimeout")]


def test_without_hakeeper_nothing_moves() -> None:
    out = Draft()
    assert pooling.sync_pool_stores(view_of((pool_pod(0, UNKNOWN),), FakeAdmin(), None), (), out)
    assert out.done().intents == ()


async def test_retiring_a_spare_pod_labels_it_terminating_before_deleting_it() -> None:
    env = pool_env(FakeCaches(), FakeAdmin())
    plan = writes(env)
    for intent in [*pooling.retire(pool_pod(0, IDLE, rv="4")), *pooling.retire(pool_pod(1, TERMINATING))]:
        plan.intend(intent)
    calls = await run(plan)
    assert [(c[0], c[2]) for c in calls] == [
        ("patch", "pool-abc-cn-0"),
        ("delete", "pool-abc-cn-0"),
        ("delete", "pool-abc-cn-1"),
    ]
    assert calls[0][3]["metadata"] == {"resourceVersion": "4", "labels": {labels.POOL_PHASE: TERMINATING}}
    assert calls[1][3]["uid"] == "uid-pool-abc-cn-0"


def test_new_pods_start_unknown_and_say_they_are_pooled() -> None:
    pod = pooling.as_pool_pod({"metadata": {"name": "x", "labels": {"a": "b"}}})
    assert pod["metadata"]["labels"] == {"a": "b", labels.POOL_PHASE: UNKNOWN}
    assert pod["metadata"]["annotations"] == {labels.POOL_MANAGEMENT_POLICY: labels.POOLING}
    assert pooling.phase_of({"metadata": {"labels": {labels.POOL_PHASE: "Weird"}}}) == UNKNOWN


async def test_an_idle_pod_hakeeper_forgot_is_not_claimable_until_it_registers_again() -> None:
    pod = pool_pod(0, IDLE, rv="3")
    unsettled, calls, _ = await sync(pod, admin=FakeAdmin())
    assert phase_patches(calls) == [
        ("pool-abc-cn-0", {"resourceVersion": "3", "labels": {labels.POOL_PHASE: UNKNOWN}})
    ]
    assert unsettled
