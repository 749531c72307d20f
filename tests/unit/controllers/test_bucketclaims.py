"""BucketClaims: the LogSet's claim of its S3 path (controllers/common/bucketclaims.py)
and the BucketClaim controller's report and reclaim (controllers/bucketclaim.py), on
hand-built objects and a fake cache and client."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import Any

import pytest

from mo_operator.controllers.bucketclaim import BucketClaimActor, cleanup_job
from mo_operator.controllers.common import bucketclaims as bc
from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.env import Settings
from mo_operator.controllers.common.meta import name_of
from mo_operator.kube.actor import Context
from mo_operator.kube.resource import Resource
from mo_operator.matrixone import buckets, labels
from mo_operator.matrixone.simulated.objectstore import ObjectStore, cleanup_commands

Obj = dict[str, Any]
NS = "ns"
S3: Obj = {"path": "bucket/mo", "s3RetentionPolicy": "Retain"}
TEMPLATE: Obj = {
    "spec": {"nodeSelector": {"pool": "mo"}, "tolerations": [{"key": "t", "operator": "Exists"}]}
}


def logset(name: str = "mo", *, ns: str = NS, cluster: str | None = "mo", discovery: bool = False) -> Obj:
    obj: Obj = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "LogSet",
        "metadata": {"name": name, "namespace": ns, "uid": f"uid-{name}", "labels": {}},
        "spec": {"replicas": 3, "sharedStorage": {"s3": dict(S3)}},
    }
    if cluster:
        obj["metadata"]["labels"][labels.CLUSTER] = cluster
    if discovery:
        obj["status"] = {"discovery": {"address": "x", "port": 32001}}
    return obj


def claim(
    name: str = "bucket-uid-mo",
    *,
    ns: str = NS,
    bound: str | None = f"{NS}/mo",
    created: str = "2024-01-01T00:00:00Z",
    deleting: bool = False,
    policy: str = "Retain",
    written: bool = False,
    cluster: str | None = "mo",
) -> Obj:
    annotations = {buckets.BIND_TO: bound or ""}
    if written:
        annotations[buckets.ANY_INSTANCE_RUNNING] = "true"
    obj_labels = {
        labels.NAMESPACE: ns,
        labels.INSTANCE: "mo",
        labels.COMPONENT: "LogSet",
        buckets.UNIQUE_ID: buckets.unique_id(S3),
    }
    if cluster:
        obj_labels[labels.CLUSTER] = cluster
    obj: Obj = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "BucketClaim",
        "metadata": {
            "name": name,
            "namespace": ns,
            "uid": f"uid-{name}",
            "resourceVersion": "7",
            "creationTimestamp": created,
            "labels": obj_labels,
            "annotations": annotations,
            # a deleted claim as its last round sees it: the data guard already removed
            "finalizers": [OUR_FINALIZER] if deleting else [OUR_FINALIZER, labels.BUCKET_DATA_FINALIZER],
        },
        "spec": {"s3": {**S3, "s3RetentionPolicy": policy}, "logSetSpec": TEMPLATE},
    }
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2024-01-02T00:00:00Z"
    return obj


OUR_FINALIZER = "matrixorigin.io/BucketClaim"
OLD_FINALIZER = "matrixorigin.io/bucketclaim"
"""The finalizer earlier versions of this operator put on claims."""


# --------------------------------------------------------------- the LogSet's side
def decide(ls: Obj, *claims: Obj, written: bool = False) -> bc.ClaimDecision:
    return bc.claim_decision(ls, S3, list(claims), TEMPLATE, written=written)


def test_the_unique_id_is_upstreams_sha1_of_type_endpoint_and_path() -> None:
    s3 = {"type": "minio", "endpoint": "http://minio:9000", "path": "b/p"}
    assert buckets.unique_id(s3) == hashlib.sha1(b"minio-http://minio:9000-b/p").hexdigest()
    assert buckets.unique_id({"path": "b/p"}) == hashlib.sha1(b"--b/p").hexdigest()


def test_a_logset_without_a_claim_creates_one_bound_to_it_and_waits() -> None:
    d = decide(logset())
    assert not d.holds and d.refused is None and d.create is not None
    made = d.create
    assert made["metadata"]["name"] == "bucket-uid-mo" and made["metadata"]["namespace"] == NS
    assert made["metadata"]["annotations"] == {buckets.BIND_TO: "ns/mo"}
    assert made["metadata"]["labels"] == {
        labels.NAMESPACE: NS,
        labels.INSTANCE: "mo",
        labels.COMPONENT: "LogSet",
        labels.CLUSTER: "mo",
        buckets.UNIQUE_ID: buckets.unique_id(S3),
    }
    assert "ownerReferences" not in made["metadata"], "a retained claim must outlive its LogSet"
    assert made["spec"] == {"s3": S3, "logSetSpec": TEMPLATE}
    assert made["metadata"]["finalizers"] == ["matrixorigin.io/bucket-data-finalizer"], (
        "upstream's data guard"
    )


def test_a_logset_holding_its_claim_in_step_writes_nothing() -> None:
    d = decide(logset(), claim())
    assert d.holds and d.patch is None and d.create is None


def test_a_claim_made_before_the_data_guard_gets_it() -> None:
    old = claim()
    old["metadata"]["finalizers"] = [OLD_FINALIZER]
    d = decide(logset(), old)
    assert d.holds and d.patch == {
        "metadata": {"resourceVersion": "7", "finalizers": [OLD_FINALIZER, labels.BUCKET_DATA_FINALIZER]}
    }


def test_the_held_claim_follows_the_policy_and_learns_that_data_was_written() -> None:
    ls = logset(discovery=True)
    ls["spec"]["sharedStorage"]["s3"]["s3RetentionPolicy"] = "Delete"
    s3 = ls["spec"]["sharedStorage"]["s3"]
    d = bc.claim_decision(ls, s3, [claim()], TEMPLATE, written=True)
    assert d.holds
    assert d.patch == {
        "metadata": {"resourceVersion": "7", "annotations": {buckets.ANY_INSTANCE_RUNNING: "true"}},
        "spec": {"s3": {"s3RetentionPolicy": "Delete"}},
    }


def test_a_path_another_logset_holds_is_refused_with_upstreams_words() -> None:
    d = decide(logset("other", cluster="other"), claim())
    assert not d.holds and d.create is None and d.patch is None
    assert d.refused == (bc.REFUSED_IN_USE, "claimed bucket ns/bucket-uid-mo already bind to ns/mo")


def test_a_path_whose_claim_is_being_deleted_is_refused_until_it_goes() -> None:
    d = decide(logset(), claim(bound=None, deleting=True, policy="Delete"))
    assert d.refused is not None and d.refused[0] == bc.REFUSED_DELETING
    assert "state is deleting" in d.refused[1]


def test_a_logset_whose_own_claim_is_deleted_under_it_keeps_running() -> None:
    d = decide(logset(), claim(deleting=True))
    assert d.holds and d.patch is None and d.refused is None


def test_a_released_claim_of_the_namespace_is_bound_again_before_anything_runs() -> None:
    released = claim(bound=None, cluster="old")
    d = decide(logset(), released)
    assert not d.holds and d.claim is released
    assert d.patch is not None
    assert d.patch["metadata"]["resourceVersion"] == "7", "conditional: two LogSets cannot both take it"
    assert d.patch["metadata"]["annotations"] == {buckets.BIND_TO: "ns/mo"}
    assert d.patch["metadata"]["labels"] == {labels.CLUSTER: "mo"}


def test_a_released_claim_of_another_namespace_is_not_taken() -> None:
    d = decide(logset(), claim(ns="elsewhere", bound=None))
    assert d.refused is not None and d.refused[0] == bc.REFUSED_ELSEWHERE


def test_of_two_logsets_that_raced_for_a_path_the_older_claim_wins() -> None:
    older = claim("bucket-a", bound="ns/a", created="2024-01-01T00:00:00Z")
    younger = claim("bucket-b", bound="ns/b", created="2024-01-01T00:00:01Z")
    assert decide(logset("a"), older, younger).holds
    loser = decide(logset("b"), older, younger)
    assert not loser.holds and loser.refused == (
        bc.REFUSED_IN_USE,
        "claimed bucket ns/bucket-a already bind to ns/a",
    )


def test_a_claim_made_by_the_go_operator_counts_by_its_status_and_gets_our_binding() -> None:
    legacy = claim()
    del legacy["metadata"]["annotations"][buckets.BIND_TO]
    legacy["status"] = {"bindTo": "ns/mo", "state": "InUse"}
    d = decide(logset(), legacy)
    assert d.holds and d.patch is not None
    assert d.patch["metadata"]["annotations"] == {buckets.BIND_TO: "ns/mo"}
    legacy["status"]["state"] = "Released"
    assert buckets.binding(legacy) is None


def test_merge_diff_nulls_what_is_gone_and_replaces_lists() -> None:
    have = {"s3": {"path": "b", "region": "x"}, "logSetSpec": {"spec": {"tolerations": [1, 2]}}}
    want = {"s3": {"path": "b"}, "logSetSpec": {"spec": {"tolerations": [1]}}}
    assert bc.merge_diff(have, want) == {"s3": {"region": None}, "logSetSpec": {"spec": {"tolerations": [1]}}}
    assert bc.merge_diff(want, want) is None


def test_the_retention_policy_defaults_to_retain_and_follows_the_other_policy() -> None:
    assert bc.retention_policy({"sharedStorage": {"s3": {"path": "b"}}}) == "Retain"
    assert (
        bc.retention_policy({"pvcRetentionPolicy": "Delete", "sharedStorage": {"s3": {"path": "b"}}})
        == "Delete"
    )
    assert (
        bc.retention_policy(
            {
                "pvcRetentionPolicy": "Delete",
                "sharedStorage": {"s3": {"path": "b", "s3RetentionPolicy": "Retain"}},
            }
        )
        == "Retain"
    )


def test_releasing_unbinds_and_records_the_policy_conditionally() -> None:
    assert bc.release_patch(claim(), "Delete") == {
        "metadata": {"resourceVersion": "7", "annotations": {buckets.BIND_TO: ""}},
        "spec": {"s3": {"s3RetentionPolicy": "Delete"}},
    }
    assert "spec" not in bc.release_patch(claim(), "Retain")


def test_releasing_marks_a_path_the_logset_wrote_to() -> None:
    """A LogSet deleted before it recorded that MatrixOne wrote to its path (the operator
    died in between) says so when it lets the claim go, so a Delete policy still cleans."""
    patch = bc.release_patch(claim(), "Delete", written=True)
    assert patch["metadata"]["annotations"] == {buckets.BIND_TO: "", buckets.ANY_INSTANCE_RUNNING: "true"}
    assert buckets.ANY_INSTANCE_RUNNING not in bc.release_patch(claim(), "Delete")["metadata"]["annotations"]


def test_a_restored_or_bootstrapped_logset_wrote_to_its_path() -> None:
    from mo_operator.controllers.logset import _wrote

    assert not _wrote({"spec": {}, "status": {}})
    assert _wrote({"spec": {}, "status": {"discovery": {"address": "mo-log-discovery.ns.svc"}}})
    assert _wrote({"spec": {"initialConfig": {"restoreFrom": "hk_data"}}})


def test_a_deleted_logset_releases_its_claim_and_finishes_an_interrupted_delete(world: World) -> None:
    ls = logset()
    world.caches.add(r.BUCKETCLAIMS, claim())
    assert [name_of(c) for c in bc.claims_to_release(world.caches, ls, S3, "Retain")] == ["bucket-uid-mo"]  # type: ignore[arg-type]
    world.caches.add(r.BUCKETCLAIMS, claim(bound=None, policy="Delete"))  # released, not yet deleted
    world.caches.add(r.BUCKETCLAIMS, claim("bucket-other", bound="ns/other"))
    assert [name_of(c) for c in bc.claims_to_release(world.caches, ls, S3, "Delete")] == ["bucket-uid-mo"]  # type: ignore[arg-type]
    world.caches.add(r.BUCKETCLAIMS, claim(bound=None, policy="Retain"))
    assert bc.claims_to_release(world.caches, ls, S3, "Delete") == []  # type: ignore[arg-type]


async def test_releasing_under_delete_deletes_the_claim_as_released(world: World) -> None:
    await bc.release(world.client, claim(), "Delete")  # type: ignore[arg-type]
    assert [c[0] for c in world.client.calls] == ["patch", "delete"]
    assert world.client.calls[1][2] == {"name": "bucket-uid-mo", "resource_version": "8", "missing_ok": True}
    world.client.calls.clear()
    await bc.release(world.client, claim(), "Retain")  # type: ignore[arg-type]
    assert [c[0] for c in world.client.calls] == ["patch"]


def test_the_job_template_keeps_only_where_and_as_whom_the_pods_run() -> None:
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"containers": [{"name": "main"}], "nodeSelector": {"n": "1"}, "serviceAccountName": "sa"},
    }
    assert bc.scheduling_template(template) == {
        "spec": {"nodeSelector": {"n": "1"}, "serviceAccountName": "sa"}
    }
    assert bc.scheduling_template({"spec": {"containers": []}}) == {}


# --------------------------------------------------------------- the cleanup Job
def test_the_cleanup_job_deletes_the_path_with_the_claims_credentials() -> None:
    c = claim(policy="Delete", written=True)
    c["spec"]["s3"].update(
        {"endpoint": "minio.ns:9000", "type": "minio", "secretRef": {"name": "s3-creds"}, "region": "eu"}
    )
    job = cleanup_job(c)
    assert job["metadata"]["name"] == "job-bucket-uid-mo"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-bucket-uid-mo"
    assert job["metadata"]["labels"][labels.COMPONENT] == "BucketClaim"
    assert job["spec"]["backoffLimit"] == 3 and job["spec"]["activeDeadlineSeconds"] > 0
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["nodeSelector"] == {"pool": "mo"} and pod["tolerations"] == TEMPLATE["spec"]["tolerations"]
    main = pod["containers"][0]
    assert main["image"] == "amazon/aws-cli" and main["command"] == ["/bin/sh", "-c"]
    script = main["args"][0]
    assert "aws --endpoint-url https://minio.ns:9000 --region eu s3 rm s3://bucket/mo/ --recursive" in script
    assert "s3api head-bucket --bucket bucket" in script
    env = {e["name"]: e for e in main["env"]}
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"] == {
        "name": "s3-creds",
        "key": "AWS_ACCESS_KEY_ID",
    }
    assert env["AWS_REGION"]["value"] == "eu"


def test_the_simulated_object_store_understands_the_cleanup_job() -> None:
    """The simulation parses the Job's command as a shell would: our script must mean
    what we think it means to it, and its trailing slash keeps sibling prefixes."""
    c = claim()
    c["spec"]["s3"]["endpoint"] = "http://minio.ns:9000"
    pod = {"spec": cleanup_job(c)["spec"]["template"]["spec"], "status": {"phase": "Succeeded"}}
    assert cleanup_commands(pod) == [("minio.ns:9000", "s3://bucket/mo/")]
    store = ObjectStore()
    for key in ("bucket/mo/data/log-1", "bucket/mo/etl/x", "bucket/mo2/data/log-1", "other/mo/data/x"):
        store.put("minio.ns:9000", key)
    store.put("aws", "bucket/mo/data/log-1")
    pod["metadata"] = {"uid": "p1"}
    store.observe([], None, None, [pod])  # type: ignore[arg-type]
    assert not store.holds_data("bucket/mo", "https://minio.ns:9000")
    assert store.holds_data("bucket/mo2", "minio.ns:9000") and store.holds_data("other/mo", "minio.ns:9000")
    assert store.holds_data("bucket/mo"), "another service's bucket of the same name is another bucket"
    assert store.remove("aws", "s3://bucket/m") == 1, "without the slash aws-cli takes every key starting so"


# --------------------------------------------------------------- the BucketClaim actor
class FakeCaches:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], Obj] = {}

    def add(self, res: Resource, obj: Obj) -> None:
        meta = obj["metadata"]
        self.objects[(res.kind, meta.get("namespace") or "", meta["name"])] = obj

    def get(self, res: Resource, namespace: str, name: str) -> Obj | None:
        return self.objects.get((res.kind, namespace, name))

    def list(
        self, res: Resource, namespace: str | None = None, match_labels: Mapping[str, str] | None = None
    ) -> list[Obj]:
        return [
            o
            for (kind, ns, _), o in self.objects.items()
            if kind == res.kind
            and (namespace is None or ns == namespace)
            and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in (match_labels or {}).items())
        ]


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    async def create(self, res: Resource, obj: Obj, namespace: str | None = None) -> Obj:
        self.calls.append(("create", res.kind, obj))
        return obj

    async def patch(
        self, res: Resource, name: str, patch: Obj, namespace: str | None = None, **kw: Any
    ) -> Obj:
        self.calls.append(("patch", res.kind, patch))
        return {"metadata": {"name": name, "resourceVersion": "8"}}

    async def apply(self, obj: Obj, **kw: Any) -> Obj:
        self.calls.append(
            ("apply", str(obj["kind"]) + ("/" + kw["subresource"] if kw.get("subresource") else ""), obj)
        )
        return obj

    async def delete(self, res: Resource, name: str, namespace: str | None = None, **kw: Any) -> None:
        self.calls.append(("delete", res.kind, {"name": name, **kw}))


class Events:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.seen.append((type, reason, message))


class World:
    def __init__(self) -> None:
        from mo_operator.controllers.common.env import Env

        self.caches = FakeCaches()
        self.client = FakeClient()
        self.events = Events()
        self.env = Env(self.client, self.caches, None, Settings(poll_seconds=5, busy_poll_seconds=1))  # type: ignore[arg-type]
        self.actor = BucketClaimActor(self.env)

    def context(self, obj: Obj) -> Context:
        log = logging.LoggerAdapter(logging.getLogger("test"), {})
        return Context(obj, "r1", log, self.events, status=dict(obj.get("status") or {}))

    def pod(self, name: str, component: str, cluster: str = "mo", *, ns: str = NS) -> None:
        self.caches.add(
            r.PODS,
            {
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": {labels.CLUSTER: cluster, labels.COMPONENT: component},
                }
            },
        )


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
    job = cleanup_job(c)
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
    from mo_operator.kube.controller import Request

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
