"""The BucketClaim controller's report and reclaim (controllers/bucketclaim.py), on
hand-built objects and a fake cache and client."""

from __future__ import annotations

import pytest

from mo_operator.api.bucketclaim import BucketClaim
from mo_operator.controllers.bucketclaim import cleanup_job
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.env import Settings
from mo_operator.controllers.steps import bucketclaims as bc
from mo_operator.matrixone import buckets, labels

from .bucketclaim_fakes import NS, OLD_FINALIZER, OUR_FINALIZER, Obj, World, claim, logset


@pytest.fixture
def world() -> World:
    return World()


async def test_a_bound_claim_reports_its_logset_and_writes_nothing(world: World) -> None:
    world.caches.add(r.LOGSETS, logset())
    ctx = world.context(claim())
    assert await world.actor.observe(ctx) is None
    assert ctx.status["state"] == "InUse" and ctx.status["bindTo"] == "ns/mo"
    assert ctx.status["conditions"][0]["reason"] == "Bound"
    assert _recyclable(ctx.status) == ("False", "InUse"), "upstream's condition, for its scripts"


def _recyclable(status: Obj) -> tuple[str, str]:
    [found] = [c for c in status["conditions"] if c["type"] == "recyclable"]
    return found["status"], found["reason"]


async def test_a_released_claim_is_recyclable(world: World) -> None:
    ctx = world.context(claim(bound=None))
    assert await world.actor.observe(ctx) is None
    assert ctx.status["state"] == "Released" and _recyclable(ctx.status) == ("True", "Released")


async def test_a_claim_whose_logset_vanished_is_released_and_its_data_kept(world: World) -> None:
    ctx = world.context(claim(policy="Delete", written=True))
    plan = await world.actor.observe(ctx)
    assert plan is not None
    assert ctx.status["state"] == "Released" and ctx.status["bindTo"] == ""
    await plan(ctx)
    assert world.client.calls == [
        ("patch", "BucketClaim", {"metadata": {"resourceVersion": "7", "annotations": {buckets.BIND_TO: ""}}})
    ]
    assert [e[1] for e in world.events.seen] == ["LogSetGone"]


async def test_deleting_a_claim_in_use_waits_and_says_why(world: World) -> None:
    world.caches.add(r.LOGSETS, logset())
    ctx = world.context(claim(deleting=True, policy="Delete", written=True))
    assert await world.actor.finalize(ctx) is False
    assert ctx.status["conditions"][0]["reason"] == "InUse"
    assert _recyclable(ctx.status) == ("False", "InUse")
    assert [c[0] for c in world.client.calls] == ["apply"], "only the status is written"


@pytest.mark.parametrize(
    ("policy", "written"), [("Retain", True), ("Delete", False)], ids=["retained", "never-written"]
)
async def test_a_claim_with_nothing_to_delete_goes_at_once(world: World, policy: str, written: bool) -> None:
    world.pod("mo-log-0", "LogSet")  # would block a cleanup: not even looked at
    ctx = world.context(claim(bound=None, deleting=True, policy=policy, written=written))
    assert await world.actor.finalize(ctx) is True
    assert world.client.calls == []


async def test_the_cleanup_waits_for_every_writer_of_the_cluster_to_stop(world: World) -> None:
    world.pod("mo-log-0", "LogSet")
    world.pod("mo-tp-cn-1", "CNSet")
    world.pod("mo-proxy-1", "ProxySet")  # writes nothing
    world.pod("other-log-0", "LogSet", cluster="other")  # another cluster
    world.pod("job-x-abc", "BucketClaim")  # the cleanup itself
    ctx = world.context(claim(bound=None, deleting=True, policy="Delete", written=True))
    assert await world.actor.finalize(ctx) is False
    ready = ctx.status["conditions"][0]
    assert ready["reason"] == "WaitingForPods"
    assert ready["message"].endswith("mo-log-0, mo-tp-cn-1"), ready["message"]
    assert not [c for c in world.client.calls if c[0] == "create"]


async def test_with_no_writer_left_the_cleanup_job_starts(world: World) -> None:
    world.pod("other-log-0", "LogSet", cluster="other")
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    ctx = world.context(c)
    assert await world.actor.finalize(ctx) is False
    created = [x for x in world.client.calls if x[0] == "create"]
    assert [x[2]["metadata"]["name"] for x in created] == ["job-bucket-uid-mo"]
    assert ctx.status["conditions"][0]["reason"] == "DeletingData"
    assert ("Normal", "DeletingData") in [e[:2] for e in world.events.seen]


async def test_the_cleanup_job_runs_the_image_the_operator_was_given(world: World) -> None:
    world.env.settings = Settings(cleanup_image="mirror.example/aws-cli:2")
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    assert await world.actor.finalize(world.context(c)) is False
    (job,) = [x[2] for x in world.client.calls if x[0] == "create"]
    assert [ct["image"] for ct in job["spec"]["template"]["spec"]["containers"]] == [
        "mirror.example/aws-cli:2"
    ]


def _job(c: Obj, condition: str | None, reason: str = "") -> Obj:
    job = cleanup_job(c, admit(BucketClaim, c).spec)
    if condition:
        job["status"] = {"conditions": [{"type": condition, "status": "True", "reason": reason}]}
    return job


async def test_a_finished_cleanup_lets_the_claim_go(world: World) -> None:
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    world.caches.add(r.JOBS, _job(c, "Complete"))
    assert await world.actor.finalize(world.context(c)) is True
    assert ("Normal", "DataDeleted") in [e[:2] for e in world.events.seen]


@pytest.mark.parametrize(
    "finalizers",
    [
        [OUR_FINALIZER, labels.BUCKET_DATA_FINALIZER, "matrixorigin.io/CN-abc1234"],
        [OLD_FINALIZER, OUR_FINALIZER],
        [OLD_FINALIZER, OUR_FINALIZER, labels.BUCKET_DATA_FINALIZER],
    ],
    ids=["go-operator", "earlier-version", "earlier-version-guarded"],
)
async def test_every_other_finalizer_goes_before_ours(world: World, finalizers: list[str]) -> None:
    c = claim(bound=None, deleting=True)
    c["metadata"]["finalizers"] = finalizers
    assert await world.actor.finalize(world.context(c)) is False
    assert world.client.calls == [
        ("patch", "BucketClaim", {"metadata": {"finalizers": [OUR_FINALIZER], "resourceVersion": "7"}})
    ]
    c["metadata"]["finalizers"] = [OUR_FINALIZER]
    assert await world.actor.finalize(world.context(c)) is True, "then ours goes (the framework removes it)"


def test_the_controller_finalizer_is_upstreams() -> None:
    assert labels.finalizer("BucketClaim") == OUR_FINALIZER == "matrixorigin.io/BucketClaim"


async def test_a_failed_cleanup_is_a_condition_and_one_warning(world: World) -> None:
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    world.caches.add(r.JOBS, _job(c, "Failed", "BackoffLimitExceeded"))
    ctx = world.context(c)
    assert await world.actor.finalize(ctx) is False
    ready = ctx.status["conditions"][0]
    assert ready["reason"] == "CleanupFailed" and "BackoffLimitExceeded" in ready["message"]
    assert _recyclable(ctx.status) == ("False", "JobFailure")
    assert "delete Job job-bucket-uid-mo to retry" in ready["message"]
    assert [e[:2] for e in world.events.seen] == [("Warning", "CleanupFailed")]
    c["status"] = ctx.status  # reported: no second warning
    assert await world.actor.finalize(world.context(c)) is False
    assert len(world.events.seen) == 1
    assert not [x for x in world.client.calls if x[0] == "create"], "a failed Job is not retried by itself"


async def test_a_failing_cleanup_is_reported_at_its_first_failed_pod_and_again_when_the_job_gives_up(
    world: World,
) -> None:
    """kube-controller-manager backs a Job's retries off (10 s, 20 s, 40 s): the Job
    itself fails minutes after its first pod did, too late to be the first word."""
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    job = _job(c, None)
    job["metadata"]["uid"] = "uid-job"
    job["status"] = {"failed": 1, "active": 0}
    world.caches.add(r.JOBS, job)
    failed_pod = {
        "metadata": {
            "name": "job-bucket-uid-mo-x1",
            "namespace": NS,
            "labels": dict(job["spec"]["template"]["metadata"]["labels"]),
            "ownerReferences": [
                {"kind": "Job", "name": job["metadata"]["name"], "uid": "uid-job", "controller": True}
            ],
            "creationTimestamp": "2026-11-25T10:00:00Z",
        },
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": 254, "reason": "Error"}}}
            ],
        },
    }
    world.caches.add(r.PODS, failed_pod)
    ctx = world.context(c)
    assert await world.actor.finalize(ctx) is False
    ready = ctx.status["conditions"][0]
    assert ready["reason"] == "CleanupFailed", ready
    assert "job-bucket-uid-mo-x1 failed (Error: exit code 254)" in ready["message"]
    assert "1 of 3 retries used, the Job keeps retrying" in ready["message"]
    assert [e[:2] for e in world.events.seen] == [("Warning", "CleanupFailed")]

    c["status"] = ctx.status  # reported; the Job gives up later: said once more
    gave_up = _job(c, "Failed", "BackoffLimitExceeded")
    gave_up["metadata"]["uid"] = "uid-job"
    world.caches.add(r.JOBS, gave_up)
    ctx = world.context(c)
    assert await world.actor.finalize(ctx) is False
    ready = ctx.status["conditions"][0]
    assert "BackoffLimitExceeded" in ready["message"] and "exit code 254" in ready["message"]
    assert [e[:2] for e in world.events.seen] == [("Warning", "CleanupFailed")] * 2
    c["status"] = ctx.status
    assert await world.actor.finalize(world.context(c)) is False
    assert len(world.events.seen) == 2


def test_a_released_or_deleted_claim_wakes_every_logset_of_its_path(world: World) -> None:
    from mo_operator.kube.controller.controller import Request

    world.caches.add(r.LOGSETS, logset("mo"))
    world.caches.add(r.LOGSETS, logset("waiting", cluster="waiting"))
    other = logset("elsewhere")
    other["spec"]["sharedStorage"]["s3"]["path"] = "bucket/other"
    world.caches.add(r.LOGSETS, other)
    wake = bc.logsets_of_claim(world.caches)  # type: ignore[arg-type]
    assert list(wake(claim())) == [Request(NS, "mo")], "a bound claim matters to its LogSet only"
    assert list(wake(claim(bound=None))) == [Request(NS, "mo"), Request(NS, "waiting")]
    assert list(wake(claim(deleting=True))) == [Request(NS, "mo"), Request(NS, "waiting")]
    world.caches.add(r.BUCKETCLAIMS, claim())
    world.caches.add(r.BUCKETCLAIMS, claim("bucket-released", bound=None))
    assert list(bc.claims_of_logset(world.caches)(logset("mo"))) == [Request(NS, "bucket-uid-mo")]  # type: ignore[arg-type]
