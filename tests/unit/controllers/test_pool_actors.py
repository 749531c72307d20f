"""The CNPool, CNClaim and CNClaimSet actors on hand-built caches: what each
observes, and the writes and MatrixOne calls its plan makes."""

from __future__ import annotations

from typing import Any, cast

import pytest

from mo_operator.api.cnpool import CNPool
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.meta import name_of
from mo_operator.controllers.pool import CNClaimActor, CNClaimSetActor, CNPoolActor
from mo_operator.controllers.pool.cnpool import revision_of, set_spec_of
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .controller_fakes import NOW, FakeCaches, RecordingClient, condition, context, events
from .pool_fakes import (
    API,
    ConflictingClient,
    FakeAdmin,
    claim,
    claimset,
    migrating,
    pool,
    pool_env,
    pool_pod,
    store,
    uuid_of,
)

Obj = dict[str, Any]
IDLE, BOUND = labels.POOL_PHASE_IDLE, labels.POOL_PHASE_BOUND


async def observe(actor: Any, obj: Obj) -> tuple[list[Any], Any]:
    ctx = context(obj)
    plan = await actor.observe(ctx)
    if plan is not None:
        await plan(ctx)
    return cast(RecordingClient, actor.env.client).calls, ctx


# --- CNPool ---------------------------------------------------------------------------


def current_set_name(p: Obj) -> str:
    spec = admit(CNPool, p).spec
    return f"pool-{revision_of(set_spec_of('pool', spec), p['spec']['deps'])}"


async def test_a_pool_runs_a_pooling_cnset_sized_for_idle_pods_and_waiting_claims() -> None:
    p = pool(max_idle=2)
    waiting = claim("w", pool="pool", claim_labels={labels.POOL_NAME: "pool"})
    bound = claim("b", pod_name="x")
    actor = CNPoolActor(pool_env(FakeCaches(p, waiting, bound), FakeAdmin()))
    calls, ctx = await observe(actor, p)
    [(verb, kind, name, cnset)] = calls
    assert (verb, kind, name) == ("apply", "CNSet", current_set_name(p))
    spec = cnset["spec"]
    assert spec["replicas"] == 3, "two idle pods and one for the waiting claim"
    assert spec["podManagementPolicy"] == "Pooling" and spec["scalingConfig"]["storeDrainEnabled"] is True
    assert spec["overlay"]["podLabels"] == {"pool": "default", labels.POOL_NAME: "pool"}
    assert "cnLabels" not in spec and cnset["deps"] == p["spec"]["deps"]
    assert cnset["metadata"]["labels"][labels.MANAGED_BY] == "CNPool-pool"
    assert cnset["metadata"]["ownerReferences"][0]["uid"] == "uid-pool"
    assert condition(ctx, "Ready")["reason"] == "Creating"


def pool_set(p: Obj, name: str, replicas: int, ready: bool = True) -> Obj:
    return {
        "apiVersion": API,
        "kind": "CNSet",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": f"uid-{name}",
            "resourceVersion": "1",
            "labels": {labels.MANAGED_BY: "CNPool-pool", labels.OWNER_UID: "uid-pool"},
            "ownerReferences": [{"kind": "CNPool", "name": "pool", "uid": "uid-pool", "controller": True}],
        },
        "spec": {"replicas": replicas, "image": "mo:1.0.0"},
        "deps": p["spec"]["deps"],
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "reason": "Ready" if ready else "PodsNotReady",
                    "message": "pods are ready" if ready else "1 pod is starting",
                    "lastTransitionTime": format_time(NOW),
                }
            ]
        },
    }


async def test_an_older_template_keeps_its_claimed_pods_marked_outdated_and_goes_when_empty() -> None:
    p = pool(max_idle=1)
    current = current_set_name(p)
    idle_old = pool_pod(0, IDLE, set_name="pool-old", rv="21")
    bound_old = pool_pod(1, BOUND, set_name="pool-old", claimed_by="c", rv="22")
    holder = claim("c", pod_name="pool-old-cn-1")
    caches = FakeCaches(
        p, pool_set(p, "pool-old", 2), pool_set(p, "pool-gone", 0), idle_old, bound_old, holder
    )
    calls, ctx = await observe(CNPoolActor(pool_env(caches, FakeAdmin())), p)
    writes = [(c[0], c[1], c[2]) for c in calls]
    assert ("apply", "CNSet", current) in writes
    outdated = {c[2]: c[3]["metadata"] for c in calls if c[1] == "Pod"}
    assert outdated == {
        "pool-old-cn-0": {"resourceVersion": "21", "labels": {labels.POD_OUTDATED: "y"}},
        "pool-old-cn-1": {"resourceVersion": "22", "labels": {labels.POD_OUTDATED: "y"}},
    }
    assert ("patch", "CNSet", "pool-old") in writes
    assert [c[3] for c in calls if c[2] == "pool-old"] == [{"spec": {"replicas": 1}}]
    assert ("delete", "CNSet", "pool-gone") in writes
    assert condition(ctx, "UpToDate")["reason"] == "OldTemplatesDraining"


async def test_max_pods_holds_claims_back_and_says_so() -> None:
    p = pool(max_idle=1, max_pods=2)
    name = current_set_name(p)
    pods = [pool_pod(i, BOUND, set_name=name, claimed_by=f"c{i}") for i in range(2)]
    holders = [claim(f"c{i}", pod_name=f"{name}-cn-{i}") for i in range(2)]
    waiting = claim("w", pool="pool")
    caches = FakeCaches(p, pool_set(p, name, 2), waiting, *pods, *holders)
    calls, ctx = await observe(CNPoolActor(pool_env(caches, FakeAdmin())), p)
    applied = [c[3] for c in calls if c[0] == "apply"]
    assert all(a["spec"]["replicas"] == 2 for a in applied)
    assert condition(ctx, "Ready")["reason"] == "MaxPodsReached"


async def test_a_claim_whose_pod_is_labelled_already_is_not_counted_as_waiting() -> None:
    p = pool(max_idle=1)
    name = current_set_name(p)
    taken = pool_pod(0, BOUND, set_name=name, claimed_by="w")
    waiting = claim("w", pool="pool")  # its podName not seen yet
    caches = FakeCaches(p, pool_set(p, name, 1), waiting, taken)
    calls, _ = await observe(CNPoolActor(pool_env(caches, FakeAdmin())), p)
    assert [c[3]["spec"]["replicas"] for c in calls if c[0] == "apply"] == [2]


async def test_a_pod_bound_to_a_vanished_claim_goes_back_to_the_pool_draining() -> None:
    """A claim whose finalizer was removed by hand never gave its pod back: the pool
    does, once, under the pod's resourceVersion, and says so."""
    p = pool(max_idle=1)
    name = current_set_name(p)
    orphan = pool_pod(
        0, BOUND, set_name=name, claimed_by="gone", extra_labels={labels.POD_OUTDATED: "y"}, rv="31"
    )
    held = pool_pod(1, BOUND, set_name=name, claimed_by="here", rv="32")
    caches = FakeCaches(p, pool_set(p, name, 2), orphan, held, claim("here", pod_name=name_of(held)))
    calls, ctx = await observe(CNPoolActor(pool_env(caches, FakeAdmin())), p)
    pod_patches = [(c[2], c[3]["metadata"]) for c in calls if c[1] == "Pod"]
    assert len(pod_patches) == 1, "one patch per pod: its outdated label waits for the next pass"
    pod, meta = pod_patches[0]
    assert pod == name_of(orphan) and meta["resourceVersion"] == "31"
    assert meta["labels"][labels.POOL_PHASE] == labels.POOL_PHASE_DRAINING
    assert meta["labels"][labels.POOL_CLAIMED_BY] is None
    assert labels.RECLAIMED_AT in meta["annotations"]
    assert [e[1] for e in events(ctx) if e[0] == "Warning"] == ["OrphanReclaimed"]


async def test_a_pod_the_vanished_claims_finalizer_gave_back_meanwhile_is_left_alone() -> None:
    p = pool(max_idle=1)
    name = current_set_name(p)
    stale = pool_pod(0, BOUND, set_name=name, claimed_by="gone")  # the cache has not seen the give-back
    client = ConflictingClient({name_of(stale)})
    caches = FakeCaches(p, pool_set(p, name, 1), stale)
    calls, ctx = await observe(CNPoolActor(pool_env(caches, FakeAdmin(), client)), p)
    assert [c[0] for c in calls if c[1] == "Pod"] == ["conflict"]
    assert events(ctx) == [], "no warning for a pod its claim gave back"


async def test_a_deleted_pool_deletes_its_sets_before_it_goes() -> None:
    p = pool()
    actor = CNPoolActor(pool_env(FakeCaches(p, pool_set(p, "pool-old", 1)), FakeAdmin()))
    ctx = context(p)
    assert await actor.finalize(ctx) is False
    assert [(c[0], c[1], c[2], c[3]["uid"]) for c in cast(RecordingClient, actor.env.client).calls] == [
        ("delete", "CNSet", "pool-old", "uid-pool-old")
    ]
    assert await CNPoolActor(pool_env(FakeCaches(p), FakeAdmin())).finalize(context(p)) is True


# --- CNClaim --------------------------------------------------------------------------


def claim_actor(*objs: Obj, admin: FakeAdmin, client: RecordingClient | None = None) -> CNClaimActor:
    return CNClaimActor(pool_env(FakeCaches(*objs), admin, client))


async def test_a_claim_binds_the_first_idle_pod_under_both_resource_versions() -> None:
    c = claim(
        "c", cnLabels=[{"key": "role", "values": ["r"]}], ownerName="team", additionalPodLabels={"x": "y"}
    )
    pods = [pool_pod(1, rv="31"), pool_pod(0, rv="30")]
    admin = FakeAdmin(*(store(p) for p in pods))
    calls, ctx = await observe(claim_actor(c, *pods, admin=admin), c)
    assert [(v, k, n) for v, k, n, _ in calls] == [
        ("patch", "CNClaim", "c"),
        ("patch", "Pod", "pool-abc-cn-0"),
        ("patch", "CNClaim", "c"),
    ]
    assert calls[0][3] == {"metadata": {"resourceVersion": "5"}}, "the claim as seen is current"
    assert calls[1][3] == {
        "metadata": {
            "resourceVersion": "30",
            "labels": {
                "x": "y",
                labels.POOL_PHASE: BOUND,
                labels.POOL_CLAIMED_BY: "c",
                labels.POD_OWNER: "team",
            },
        }
    }
    assert admin.calls == [("set_cn_work_state", uuid_of(pods[1]), WorkState.WORKING, {"role": ("r",)})]
    assert calls[2][3] == {
        "metadata": {"resourceVersion": "5", "labels": {labels.POOL_NAME: "pool"}},
        "spec": {"podName": "pool-abc-cn-0", "nodeName": "node-1", "poolName": "pool"},
    }
    assert ctx.status["phase"] == "Pending" and condition(ctx, "Ready")["reason"] == "Binding"


async def test_a_pod_another_claim_took_meanwhile_sends_the_claim_to_the_next() -> None:
    c = claim("c")
    pods = [pool_pod(0), pool_pod(1)]
    admin = FakeAdmin(*(store(p) for p in pods))
    client = ConflictingClient({"pool-abc-cn-0"})
    calls, _ = await observe(claim_actor(c, *pods, admin=admin, client=client), c)
    assert [(v, n) for v, _, n, _ in calls] == [
        ("patch", "c"),
        ("conflict", "pool-abc-cn-0"),
        ("patch", "pool-abc-cn-1"),
        ("patch", "c"),
    ]
    assert [call[1] for call in admin.calls] == [uuid_of(pods[1])]


async def test_when_every_candidate_is_taken_the_bind_fails_and_is_retried() -> None:
    c = claim("c")
    pods = [pool_pod(0), pool_pod(1)]
    admin = FakeAdmin(*(store(p) for p in pods))
    actor = claim_actor(c, *pods, admin=admin, client=ConflictingClient({"pool-abc-cn-0", "pool-abc-cn-1"}))
    ctx = context(c)
    plan = await actor.observe(ctx)
    assert plan is not None
    with pytest.raises(ApiError):
        await plan(ctx)
    assert admin.calls == [], "no store is put to work for a pod the claim did not get"


async def test_a_pod_labelled_for_the_claim_is_adopted_instead_of_taking_another() -> None:
    c = claim("c")
    mine = pool_pod(3, BOUND, claimed_by="c")
    spare = pool_pod(0)
    admin = FakeAdmin(store(mine), store(spare))
    calls, _ = await observe(claim_actor(c, mine, spare, admin=admin), c)
    assert [(v, k, n) for v, k, n, _ in calls] == [("patch", "CNClaim", "c")]
    assert (
        calls[0][3]["spec"]["podName"] == "pool-abc-cn-3"
        and calls[0][3]["metadata"]["resourceVersion"] == "5"
    )
    assert [call[1] for call in admin.calls] == [uuid_of(mine)]


async def test_with_no_idle_pod_a_claim_is_nominated_to_a_matching_pool_and_waits() -> None:
    c = claim("c")
    calls, ctx = await observe(claim_actor(c, pool(), admin=FakeAdmin()), c)
    assert calls == [
        (
            "patch",
            "CNClaim",
            "c",
            {"metadata": {"labels": {labels.POOL_NAME: "pool"}}, "spec": {"poolName": "pool"}},
        )
    ]
    assert ctx.status["phase"] == "Pending" and condition(ctx, "Ready")["reason"] == "WaitingForPod"
    calls, ctx = await observe(claim_actor(c, admin=FakeAdmin()), c)
    assert calls == [] and condition(ctx, "Ready")["reason"] == "NoMatchingPool"


async def test_a_bound_claim_keeps_its_store_working_with_its_labels_and_reports_it() -> None:
    pod = pool_pod(0, BOUND, claimed_by="c")
    c = claim("c", pod_name="pool-abc-cn-0", phase="Pending", cnLabels=[{"key": "role", "values": ["r"]}])
    admin = FakeAdmin(store(pod, WorkState.DRAINING))
    _, ctx = await observe(claim_actor(c, pod, admin=admin), c)
    assert admin.calls == [("set_cn_work_state", uuid_of(pod), WorkState.WORKING, {"role": ("r",)})]
    assert ctx.status["phase"] == "Bound" and condition(ctx, "Ready")["reason"] == "Bound"
    assert (
        ctx.status["store"]["serviceID"] == uuid_of(pod) and ctx.status["store"]["string"] == "pool-abc-cn-0"
    )

    admin = FakeAdmin(store(pod, WorkState.WORKING, {"role": ("r",)}))
    calls, ctx = await observe(claim_actor(c, pod, admin=admin), c)
    assert admin.calls == [] and calls == [], "a settled claim writes nothing"
    assert ctx.status["store"]["workState"] == WorkState.WORKING.value
    assert ctx.status["store"]["labels"] == [{"key": "role", "values": ["r"]}]


async def test_a_claim_on_an_outdated_pod_reads_outdated_and_one_whose_pod_went_reads_lost_for_good() -> None:
    pod = pool_pod(0, BOUND, claimed_by="c", extra_labels={labels.POD_OUTDATED: "y"})
    c = claim("c", pod_name="pool-abc-cn-0")
    _, ctx = await observe(claim_actor(c, pod, admin=FakeAdmin(store(pod, WorkState.WORKING))), c)
    assert ctx.status["phase"] == "Outdated" and condition(ctx, "Ready")["status"] == "True"
    _, ctx = await observe(claim_actor(c, admin=FakeAdmin()), c)
    assert ctx.status["phase"] == "Lost" and condition(ctx, "Ready")["reason"] == "PodLost"
    lost = claim("c", pod_name="pool-abc-cn-0", phase="Lost")
    calls, ctx = await observe(claim_actor(lost, pool_pod(0, IDLE), admin=FakeAdmin()), lost)
    assert calls == [] and ctx.status["phase"] == "Lost", "a new pod of the same name is not its pod"


async def test_a_second_pod_held_by_a_claim_goes_back_to_the_pool() -> None:
    kept = pool_pod(0, BOUND, claimed_by="c")
    extra = pool_pod(1, BOUND, claimed_by="c", rv="44")
    c = claim("c", pod_name="pool-abc-cn-0")
    admin = FakeAdmin(store(kept, WorkState.WORKING), store(extra, WorkState.WORKING))
    calls, _ = await observe(claim_actor(c, kept, extra, admin=admin), c)
    assert [(v, n) for v, _, n, _ in calls] == [("patch", "pool-abc-cn-1")]
    assert calls[0][3]["metadata"]["resourceVersion"] == "44"
    assert calls[0][3]["metadata"]["labels"][labels.POOL_PHASE] == labels.POOL_PHASE_DRAINING
    assert admin.calls == [("set_cn_work_state", uuid_of(extra), WorkState.DRAINING, {})]


async def test_deleting_a_claim_gives_its_pod_back_draining_without_its_labels() -> None:
    pod = pool_pod(
        0,
        BOUND,
        claimed_by="c",
        rv="50",
        extra_labels={labels.POD_OWNER: "team", labels.CLAIMSET: "cs", "x": "y"},
    )
    c = claim("c", pod_name="pool-abc-cn-0", deleting=True, additionalPodLabels={"x": "y"})
    admin = FakeAdmin(store(pod, WorkState.WORKING, {"role": ("r",)}))
    actor = claim_actor(c, pod, admin=admin)
    ctx = context(c)
    assert await actor.finalize(ctx) is False
    [(verb, _, name, patch)] = cast(RecordingClient, actor.env.client).calls
    assert (verb, name) == ("patch", "pool-abc-cn-0")
    assert patch["metadata"]["resourceVersion"] == "50"
    assert patch["metadata"]["labels"] == {
        "x": None,
        labels.POOL_PHASE: labels.POOL_PHASE_DRAINING,
        labels.POOL_CLAIMED_BY: None,
        labels.CLAIMSET: None,
        labels.POD_OWNER: None,
        labels.POD_LAST_OWNER: "team",
    }
    assert labels.RECLAIMED_AT in patch["metadata"]["annotations"]
    assert admin.calls == [("set_cn_work_state", uuid_of(pod), WorkState.DRAINING, {})]
    assert [e[1] for e in events(ctx)] == ["Reclaimed"]
    reclaimed = pool_pod(0, labels.POOL_PHASE_DRAINING)
    assert await claim_actor(c, reclaimed, admin=FakeAdmin()).finalize(context(c)) is True


async def test_a_pod_another_claim_names_is_not_reclaimed_by_a_deleted_claim() -> None:
    pod = pool_pod(0, BOUND, claimed_by="c")
    other = claim("d", pod_name="pool-abc-cn-0")
    c = claim("c", deleting=True)
    assert await claim_actor(c, other, pod, admin=FakeAdmin()).finalize(context(c)) is True


async def test_a_migrating_claim_binds_its_new_pod_and_keeps_the_old_one_meanwhile() -> None:
    source = pool_pod(0, BOUND, claimed_by="c")
    target = pool_pod(1, rv="61")
    c = migrating(cnLabels=[{"key": "role", "values": ["r"]}])
    admin = FakeAdmin(store(source, WorkState.WORKING, {"role": ("r",)}), store(target))
    calls, ctx = await observe(claim_actor(c, source, target, admin=admin), c)
    assert [(k, n) for _, k, n, _ in calls] == [("CNClaim", "c"), ("Pod", "pool-abc-cn-1"), ("CNClaim", "c")]
    assert calls[1][3]["metadata"]["labels"][labels.POOL_CLAIMED_BY] == "c"
    assert admin.calls == [("set_cn_work_state", uuid_of(target), WorkState.WORKING, {"role": ("r",)})]
    assert ctx.status["phase"] == "Bound", "the claim still works on its source"
    assert condition(ctx, "Ready")["reason"] == "Migrating"


async def test_the_source_drains_once_the_target_worked_for_the_propagation_delay() -> None:
    source = pool_pod(0, BOUND, claimed_by="c", rv="70", extra_labels={"x": "y"})
    target = pool_pod(1, BOUND, claimed_by="c", extra_labels={"x": "y"})
    working = store(target, WorkState.WORKING)
    c = migrating(NOW - 5, additionalPodLabels={"x": "y"})
    admin = FakeAdmin(store(source, WorkState.WORKING), working)
    calls, ctx = await observe(claim_actor(c, source, target, admin=admin), c)
    assert calls == [] and admin.calls == [], "the proxy may not know the target yet"
    assert ctx.requeue_after == pytest.approx(10)
    assert ctx.status["store"]["string"] == "pool-abc-cn-1"

    c = migrating(NOW - 15, additionalPodLabels={"x": "y"})
    calls, ctx = await observe(claim_actor(c, source, target, admin=admin), c)
    [(verb, _, name, patch)] = calls
    assert (verb, name) == ("patch", "pool-abc-cn-0") and patch["metadata"]["resourceVersion"] == "70"
    assert patch["metadata"]["labels"][labels.POOL_PHASE] == labels.POOL_PHASE_DRAINING
    assert (
        patch["metadata"]["labels"]["x"] is None
        and patch["metadata"]["labels"][labels.POOL_CLAIMED_BY] is None
    )
    assert admin.calls == [("set_cn_work_state", uuid_of(source), WorkState.DRAINING, {})]
    assert condition(ctx, "Ready")["reason"] == "Migrating"


async def test_a_draining_source_reports_its_sessions_and_an_idle_one_ends_the_migration() -> None:
    source = pool_pod(0, labels.POOL_PHASE_DRAINING)
    target = pool_pod(1, BOUND, claimed_by="c")
    c = migrating(NOW - 60)
    admin = FakeAdmin(store(source), store(target, WorkState.WORKING), sessions={uuid_of(source): 3})
    calls, ctx = await observe(claim_actor(c, source, target, admin=admin), c)
    assert calls == [] and admin.calls == []
    assert ctx.status["migrate"] == {"source": {"connections": 3, "pipelines": 0, "replicas": 0}}
    assert "3 sessions left" in condition(ctx, "Ready")["message"]

    c["status"]["migrate"] = ctx.status["migrate"]
    idle = pool_pod(0, IDLE)
    calls, ctx = await observe(claim_actor(c, idle, target, admin=admin), c)
    assert calls == [
        ("patch", "CNClaim", "c", {"metadata": {"resourceVersion": "5"}, "spec": {"sourcePod": None}})
    ]
    assert "migrate" not in ctx.status and condition(ctx, "Ready")["reason"] == "Bound"
    assert [e[1] for e in events(ctx)] == ["Migrated"]


async def test_a_target_held_by_another_claim_leaves_the_claim_on_its_source() -> None:
    source = pool_pod(0, BOUND, claimed_by="c")
    target = pool_pod(1, BOUND, claimed_by="other")
    c = migrating()
    admin = FakeAdmin(store(source, WorkState.WORKING), store(target, WorkState.WORKING))
    calls, ctx = await observe(claim_actor(c, source, target, admin=admin), c)
    assert calls == [] and admin.calls == [], "neither pod is touched"
    assert ctx.status["phase"] == "Bound" and condition(ctx, "Ready")["reason"] == "MigrationBlocked"


async def test_a_lost_claim_is_rescued_by_migrating_it() -> None:
    target = pool_pod(1)
    c = migrating()
    c["status"]["phase"] = "Lost"
    admin = FakeAdmin(store(target))
    calls, _ = await observe(claim_actor(c, target, admin=admin), c)
    assert ("patch", "Pod", "pool-abc-cn-1") in [(v, k, n) for v, k, n, _ in calls]


# --- CNClaimSet -----------------------------------------------------------------------


def member(cs: Obj, index: int, phase: str | None = None, pod: str | None = None) -> Obj:
    return claim(
        f"cs-{index}",
        pod_name=pod,
        phase=phase,
        owner=cs,
        claim_labels={"app": "cs", labels.CLAIMSET: "cs", labels.CLAIM_INSTANCE_ID: str(index)},
    )


async def test_a_claim_set_makes_its_claims_under_deterministic_names_and_replaces_lost_ones() -> None:
    cs = claimset(3)
    lost = member(cs, 0, "Lost", "gone")
    bound = member(cs, 1, "Bound", "p")
    calls, ctx = await observe(CNClaimSetActor(pool_env(FakeCaches(cs, lost, bound), FakeAdmin())), cs)
    assert [(v, n) for v, _, n, _ in calls] == [("delete", "cs-0"), ("create", "cs-2"), ("create", "cs-3")]
    made = calls[1][3]
    assert made["metadata"]["labels"] == {"app": "cs", labels.CLAIMSET: "cs", labels.CLAIM_INSTANCE_ID: "2"}
    assert made["metadata"]["ownerReferences"][0]["uid"] == "uid-cs"
    assert made["spec"]["ownerName"] == "cs"
    assert ctx.status["replicas"] == 1 and ctx.status["readyReplicas"] == 1
    assert ctx.status["labelSelector"] == f"{labels.CLAIMSET}=cs,{labels.POOL_PHASE}=Bound"


async def test_scaling_a_claim_set_in_releases_the_claims_with_the_fewest_sessions() -> None:
    cs = claimset(1)
    pods = [pool_pod(i, BOUND, claimed_by=f"cs-{i}") for i in range(3)]
    claims = [member(cs, i, "Bound", f"pool-abc-cn-{i}") for i in range(3)]
    admin = FakeAdmin(
        *(store(p, WorkState.WORKING) for p in pods), sessions={uuid_of(pods[0]): 2, uuid_of(pods[1]): 9}
    )
    calls, ctx = await observe(CNClaimSetActor(pool_env(FakeCaches(cs, *claims, *pods), admin)), cs)
    assert sorted(n for v, _, n, _ in calls if v == "delete") == ["cs-0", "cs-2"]
    assert ctx.status["replicas"] == 1 and condition(ctx, "Ready")["status"] == "True"


async def test_deleting_a_claim_set_deletes_its_claims_first() -> None:
    cs = claimset(2)
    claims = [member(cs, 0), member(cs, 1)]
    actor = CNClaimSetActor(pool_env(FakeCaches(cs, *claims), FakeAdmin()))
    assert await actor.finalize(context(cs)) is False
    assert sorted(c[2] for c in cast(RecordingClient, actor.env.client).calls) == ["cs-0", "cs-1"]
    assert await CNClaimSetActor(pool_env(FakeCaches(cs), FakeAdmin())).finalize(context(cs)) is True
