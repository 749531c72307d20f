"""BucketClaims, the LogSet's side: the claim of its S3 path, its release, and the
cleanup Job a claim runs (controllers/steps/bucketclaims.py, controllers/bucketclaim.py),
on hand-built objects."""

from __future__ import annotations

import hashlib

import pytest

from mo_devkit.simulated.objectstore import ObjectStore, cleanup_commands
from mo_operator.api.bucketclaim import BucketClaim
from mo_operator.controllers.bucketclaim import cleanup_job
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.meta import name_of
from mo_operator.controllers.steps import bucketclaims as bc
from mo_operator.matrixone import buckets, labels

from .bucketclaim_fakes import NS, OLD_FINALIZER, S3, TEMPLATE, Obj, World, claim, logset


@pytest.fixture
def world() -> World:
    return World()


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
    assert made["metadata"]["finalizers"] == [
        "matrixorigin.io/bucket-data-finalizer",
        "matrixorigin.io/BucketClaim",
    ], "upstream's data guard, and the BucketClaim controller's own: no patch to add it"


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
    from mo_operator.controllers.logset import wrote

    assert not wrote({"spec": {}, "status": {}}, None)
    assert wrote({"spec": {}, "status": {"discovery": {"address": "mo-log-discovery.ns.svc"}}}, None)
    assert wrote({"spec": {}}, "hk_data")


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
    job = cleanup_job(c, admit(BucketClaim, c).spec)
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
    pod = {
        "spec": cleanup_job(c, admit(BucketClaim, c).spec)["spec"]["template"]["spec"],
        "status": {"phase": "Succeeded"},
    }
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
