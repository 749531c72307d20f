"""StatefulSets of the stateful sets and how far their rolls have got
(controllers/specs/statefulsets.py): ``rollout`` is complete only once the
StatefulSet controller saw the latest spec and every replica is updated and
ready (by its pods or by the controller's counts); ``stall`` names the first pod stuck past the bound, and says why."""

from __future__ import annotations

import functools
from typing import Any, cast

from mo_operator.controllers.framework.writes import Writes
from mo_operator.controllers.specs.pods import format_time
from mo_operator.controllers.specs.statefulsets import (
    REVISION_LABEL,
    Rollout,
    rollback_step,
    rollbacks,
    rollout,
    stall,
    statefulset,
    volume_claim_template,
)
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.errors import ApiError

from .controller_fakes import FakeCaches, RecordingClient, context, events, make_env, writes

Obj = dict[str, Any]
NOW = 1_700_000_000.0
STALL = 120.0
OWNER = {
    "apiVersion": "core.matrixorigin.io/v1alpha1",
    "kind": "LogSet",
    "metadata": {"name": "mo", "namespace": "ns", "uid": "uid-mo"},
}
SELECTOR = {"matrixorigin.io/instance": "mo"}


def sts(status: Obj, *, replicas: int = 3, generation: int = 2) -> Obj:
    return {
        "kind": "StatefulSet",
        "metadata": {"name": "mo-log", "namespace": "ns", "generation": generation},
        "spec": {"replicas": replicas},
        "status": status,
    }


def settled_status(replicas: int = 3, generation: int = 2, revision: str = "r2") -> Obj:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "readyReplicas": replicas,
        "updatedReplicas": replicas,
        "currentRevision": revision,
        "updateRevision": revision,
    }


def pod(
    i: int,
    *,
    ready: bool = True,
    revision: str = "r2",
    since: float = NOW - 1000,
    deleting: bool = False,
    **status: Any,
) -> Obj:
    meta: Obj = {
        "name": f"mo-log-{i}",
        "namespace": "ns",
        "labels": {REVISION_LABEL: revision},
        "creationTimestamp": format_time(NOW - 5000),
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {
        "kind": "Pod",
        "metadata": meta,
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": format_time(since),
                }
            ],
            **status,
        },
    }


def roll(sts_obj: Obj | None, pods: list[Obj]) -> Rollout:
    return rollout(sts_obj, pods, now=NOW, stall_seconds=STALL)


# ------------------------------------------------------------------ objects
def test_statefulset_rolls_one_pod_at_a_time_in_parallel_pod_management() -> None:
    template = {"metadata": {"labels": SELECTOR}, "spec": {"containers": []}}
    claim = volume_claim_template("mo-data", "10Gi", "fast", SELECTOR)
    obj = statefulset(
        OWNER,
        "mo-log",
        {"a": "b"},
        SELECTOR,
        replicas=3,
        service_name="mo-log-headless",
        template=template,
        volume_claim_templates=[claim],
        pvc_retention="Retain",
    )
    spec = obj["spec"]
    assert obj["apiVersion"] == "apps/v1" and obj["kind"] == "StatefulSet"
    assert obj["metadata"]["name"] == "mo-log" and obj["metadata"]["ownerReferences"][0]["uid"] == "uid-mo"
    assert spec["replicas"] == 3 and spec["serviceName"] == "mo-log-headless"
    assert spec["selector"] == {"matchLabels": SELECTOR}
    assert spec["podManagementPolicy"] == "Parallel"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["template"] == template
    assert spec["volumeClaimTemplates"] == [claim]
    assert claim["spec"] == {
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "10Gi"}},
        "storageClassName": "fast",
    }
    bare = statefulset(OWNER, "mo-dn", {}, SELECTOR, replicas=1, service_name="h", template=template)
    assert "volumeClaimTemplates" not in bare["spec"]  # no empty list
    assert bare["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Delete"
    assert "storageClassName" not in volume_claim_template("mo-data", "1Gi", None, {})["spec"]


# ------------------------------------------------------------------ rollout
def test_no_statefulset_yet() -> None:
    assert roll(None, []) == Rollout(0, 0, 0, False)


def test_pods_of_a_statefulset_being_replaced_still_count_as_ready() -> None:
    assert roll(None, [pod(0), pod(1)]) == Rollout(0, 2, 0, False)


def test_complete_when_observed_and_every_replica_is_updated_and_ready() -> None:
    got = roll(sts(settled_status()), [pod(0), pod(1), pod(2)])
    assert got.complete and got.stalled is None and got.recheck_after is None
    assert (got.replicas, got.ready, got.updated) == (3, 3, 3)
    assert got.summary() == "3/3 ready, 3/3 updated"


def test_not_complete_until_the_controller_observed_the_latest_generation() -> None:
    status = settled_status(generation=1)
    got = roll(sts(status, generation=2), [pod(0), pod(1), pod(2)])
    assert not got.complete


def test_not_complete_while_any_replica_is_not_updated_or_not_ready() -> None:
    for pods in ([pod(0), pod(1), pod(2, ready=False)], [pod(0), pod(1), pod(2, revision="r1")], [pod(0)]):
        for field, value in (("updatedReplicas", 2), ("readyReplicas", 2), ("replicas", 4)):
            status = {**settled_status(), field: value}
            assert not roll(sts(status), pods).complete, field
        rolling = {**settled_status(), "currentRevision": "r1"}
        assert not roll(sts(rolling), pods).complete


def test_complete_once_every_pod_is_updated_and_ready_before_the_controller_counted_them() -> None:
    pods = [pod(0), pod(1), pod(2)]
    lagging = {**settled_status(), "readyReplicas": 2, "updatedReplicas": 2, "currentRevision": "r1"}
    assert roll(sts(lagging), pods).complete
    assert not roll(sts({**lagging, "observedGeneration": 1}), pods).complete


def test_scaled_to_zero_is_complete_without_revisions() -> None:
    status = {"observedGeneration": 2, "replicas": 0, "updateRevision": "r2", "currentRevision": "r1"}
    assert roll(sts(status, replicas=0), []).complete


def test_pod_counts_come_from_the_pods_and_skip_deleting_ones() -> None:
    status = {**settled_status(), "readyReplicas": 1, "updatedReplicas": 1, "currentRevision": "r1"}
    pods = [
        pod(0, revision="r1"),
        pod(1, revision="r1"),
        pod(2, ready=False, since=NOW - 10),
        pod(3, deleting=True),
    ]
    got = roll(sts(status), pods)
    assert (got.ready, got.updated) == (2, 1)
    assert not got.complete
    assert got.summary() == "2/3 ready, 1/3 updated"


# -------------------------------------------------------------------- stall
def test_a_pod_not_ready_past_the_bound_stalls_the_roll_and_says_why() -> None:
    crashing = pod(
        2,
        ready=False,
        revision="r3",
        since=NOW - 300,
        containerStatuses=[
            {
                "name": "main",
                "ready": False,
                "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 2, "message": "InvalidConfig: bad"}},
            }
        ],
    )
    got = roll(sts({**settled_status(), "updateRevision": "r3"}), [pod(0), pod(1), crashing])
    assert (
        got.stalled == f"pod mo-log-2 is not ready since {format_time(NOW - 300)}, over {int(STALL)}s: "
        "CrashLoopBackOff (4 restarts): InvalidConfig: bad"
    )
    assert got.recheck_after is None


def test_a_stall_message_stays_the_same_while_the_pod_stays_stuck() -> None:
    stuck = [pod(1, ready=False, since=NOW - 200)]
    assert stall(stuck, NOW, STALL)[0] == stall(stuck, NOW + 90, STALL)[0]


def test_the_first_stalled_pod_by_name_is_named() -> None:
    pods = [pod(2, ready=False, since=NOW - 500), pod(1, ready=False, since=NOW - 200)]
    reason, recheck = stall(pods, NOW, STALL)
    assert reason is not None and reason.startswith(
        f"pod mo-log-1 is not ready since {format_time(NOW - 200)},"
    )
    assert recheck is None


def test_a_pod_not_ready_for_less_than_the_bound_says_when_to_look_again() -> None:
    pods = [pod(0), pod(1, ready=False, since=NOW - 30), pod(2, ready=False, since=NOW - 100)]
    assert stall(pods, NOW, STALL) == (None, 20.0)
    assert stall([pod(0), pod(1)], NOW, STALL) == (None, None)
    # exactly at the bound counts as stalled
    reason, _ = stall([pod(0, ready=False, since=NOW - STALL)], NOW, STALL)
    assert reason is not None and "over 120s" in reason


def test_a_new_pod_counts_from_its_creation() -> None:
    fresh = pod(0, ready=False)
    fresh["metadata"]["creationTimestamp"] = format_time(NOW - 50)
    fresh["status"]["conditions"] = []
    assert stall([fresh], NOW, STALL) == (None, 70.0)


def test_a_deleting_pod_does_not_stall_the_roll() -> None:
    stuck = pod(2, ready=False, since=NOW - 900, deleting=True)
    got = roll(sts(settled_status()), [pod(0), pod(1), stuck])
    assert got.stalled is None


# ------------------------------------------------------------ forced rollback
def _reverted(generation: int = 3, observed: int = 3) -> Obj:
    """A set rolled onto r3 (broken), then reverted: it rolls to r2 again."""
    status = settled_status(generation=observed) | {"updateRevision": "r2", "currentRevision": "r2"}
    status["updatedReplicas"] = 2
    return sts(status, generation=generation)


def test_a_pod_stuck_on_a_revision_the_set_no_longer_rolls_to_is_to_be_replaced() -> None:
    broken = pod(2, ready=False, revision="r3", since=NOW - STALL - 1)
    broken["metadata"]["uid"] = "uid-2"
    got = roll(_reverted(), [pod(0), pod(1), broken])
    assert got.stuck_outdated == (("mo-log-2", "uid-2"),)


def test_no_forced_rollback_while_waiting_is_normal_or_the_controller_lags() -> None:
    fresh = pod(2, ready=False, revision="r3", since=NOW - STALL + 5)
    assert roll(_reverted(), [pod(0), pod(1), fresh]).stuck_outdated == ()  # not stalled yet
    stalled = pod(2, ready=False, revision="r3", since=NOW - STALL - 1)
    assert roll(_reverted(observed=2), [pod(0), pod(1), stalled]).stuck_outdated == ()  # spec unseen
    current = pod(2, ready=False, revision="r2", since=NOW - STALL - 1)
    assert roll(_reverted(), [pod(0), pod(1), current]).stuck_outdated == ()  # the wanted revision
    ready_old = pod(2, revision="r1")
    assert roll(_reverted(), [pod(0), pod(1), ready_old]).stuck_outdated == ()  # serving: the roll's job
    going = pod(2, ready=False, revision="r3", since=NOW - STALL - 1, deleting=True)
    assert roll(_reverted(), [pod(0), pod(1), going]).stuck_outdated == ()  # already deleted


def rollback(ctx: Context, roll: Rollout, plan: Writes) -> None:
    """Plan the replacement of the pods ``roll`` found stuck, as the set skeleton plans it."""
    for intent in rollbacks(roll, functools.partial(rollback_step, ctx, plan.client)):
        plan.intend(intent)


async def test_a_forced_rollback_deletes_by_uid_and_tells_once_deleted() -> None:
    caches = FakeCaches()
    env = make_env(caches)
    ctx = context(OWNER)
    stuck = Rollout(3, 2, 2, False, stuck_outdated=(("mo-log-2", "uid-2"),))
    plan = writes(env)
    rollback(ctx, stuck, plan)
    assert plan.description == "replace pod mo-log-2, stuck on an outdated revision"
    client = cast(RecordingClient, plan.client)
    client.delete = _returning(client, {"kind": "Pod"})  # type: ignore[method-assign]
    await plan(ctx)
    assert client.calls == [("delete", "Pod", "mo-log-2", {"uid": "uid-2", "missing_ok": True})]
    assert [(t, reason) for t, reason, _ in events(ctx)] == [("Normal", "ForcedRollback")]


async def test_a_forced_rollback_of_a_pod_already_replaced_is_quiet() -> None:
    env = make_env(FakeCaches())
    ctx = context(OWNER)
    plan = writes(env)
    rollback(ctx, Rollout(3, 2, 2, False, stuck_outdated=(("mo-log-2", "uid-2"),)), plan)
    client = cast(RecordingClient, plan.client)

    async def conflict(*args: Any, **kw: Any) -> None:
        raise ApiError(409, "Conflict", "Precondition failed: UID in precondition: uid-2")

    client.delete = conflict  # type: ignore[method-assign]
    await plan(ctx)  # the StatefulSet controller replaced it first: nothing to do, nothing said
    assert events(ctx) == []


def _returning(client: RecordingClient, result: Obj) -> Any:
    async def delete(res: Any, name: str, namespace: str | None = None, **kw: Any) -> Obj:
        client.calls.append(("delete", res.kind, name, kw))
        return result

    return delete
