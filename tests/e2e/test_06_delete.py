"""Scenario 6: deleting a cluster. Its children, pods and Services go; the log
service's volumes and the object-storage data follow their policies (kept by
default, deleted when asked); the cluster's finalizer is removed and nothing
is left Terminating; and nothing hangs, neither a cluster that never came up
nor one whose data cleanup keeps failing (that one is reported, and recovers
once its cause is fixed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from mo_devkit.localcluster.simulator.rules import FailureRule, RuleSet
from mo_devkit.simulated.objectstore import ObjectStore
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, condition, eventually

Obj = dict[str, Any]

CHILD_KINDS = (r.LOGSETS, r.DNSETS, r.CNSETS, r.PROXYSETS)
BUILT_IN_KINDS = (r.STATEFULSETS, r.DEPLOYMENTS, r.SERVICES, r.CONFIGMAPS, r.PODS, r.JOBS, r.PVCS)
DELETE_POLICIES = {"pvcRetentionPolicy": "Delete"}


def _objects(world: World) -> ObjectStore:
    assert world.cluster.mo is not None
    return world.cluster.mo.objects


def _log_service(name: str, *, policy: str | None = None, replicas: int = 3) -> Obj:
    s3: Obj = {"path": f"bucket/{name}"}
    spec: Obj = {"replicas": replicas, "volume": {"size": "1Gi"}, "sharedStorage": {"s3": s3}}
    if policy is not None:
        spec["pvcRetentionPolicy"] = policy
        s3["s3RetentionPolicy"] = policy
    return spec


def _terminating(obj: Mapping[str, Any]) -> bool:
    return bool(obj["metadata"].get("deletionTimestamp"))


async def _claim_of(world: World, cluster: str) -> Obj | None:
    found = await world.list(r.BUCKETCLAIMS, **{labels.CLUSTER: cluster})
    assert len(found) <= 1, [c["metadata"]["name"] for c in found]
    return found[0] if found else None


async def _log_pvcs(world: World, cluster: str) -> list[Obj]:
    return await world.list(r.PVCS, **{labels.CLUSTER: cluster, labels.COMPONENT: "LogSet"})


async def _running_cluster(world: World, name: str, **spec: Any) -> Obj:
    """Apply a cluster, wait until it is settled and has written to its path; its claim."""
    manifest = world.cluster_manifest(name, **spec)
    path = manifest["spec"]["logService"]["sharedStorage"]["s3"]["path"]
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, name)
    await eventually(lambda: _objects(world).holds_data(path), message=f"{name} wrote data")
    claim = await eventually(lambda: _claim_of(world, name), message="the cluster's BucketClaim")
    assert claim["status"]["state"] == "InUse"
    assert claim["status"]["bindTo"] == f"{world.namespace}/{name}"
    assert claim["metadata"]["labels"][labels.BUCKET_UNIQUE_ID]
    return claim


async def _gone(world: World, res: Resource, name: str) -> bool:
    return await world.get(res, name) is None


async def _cluster_gone(world: World, name: str) -> bool:
    """The cluster, its sets, their workloads, pods and Services are all gone."""
    if await world.get(r.MATRIXONE_CLUSTERS, name) is not None:
        return False
    for res in (*CHILD_KINDS, r.STATEFULSETS, r.DEPLOYMENTS, r.SERVICES, r.PODS):
        for obj in await world.list(res, **{labels.CLUSTER: name}):
            if obj["metadata"]["labels"].get(labels.COMPONENT) != "BucketClaim":  # the cleanup's own
                return False
    return True


async def _nothing_terminating(world: World) -> bool:
    for res in (r.MATRIXONE_CLUSTERS, *CHILD_KINDS, r.BUCKETCLAIMS, *BUILT_IN_KINDS):
        if any(_terminating(o) for o in await world.list(res)):
            return False
    return True


async def _events(world: World, name: str) -> str:
    out = await world.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "yaml"
    )
    return out.stdout


async def test_by_default_volumes_and_data_survive_the_cluster(
    world: World, operator: OperatorRunner
) -> None:
    claim = await _running_cluster(world, "mo")
    pvcs = await _log_pvcs(world, "mo")
    assert len(pvcs) == 3

    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")

    await eventually(
        lambda: _cluster_gone(world, "mo"), timeout=60, message="the cluster and its children go"
    )
    await eventually(lambda: _nothing_terminating(world), timeout=30, message="nothing left Terminating")
    kept = await _log_pvcs(world, "mo")
    assert sorted(p["metadata"]["name"] for p in kept) == sorted(p["metadata"]["name"] for p in pvcs)
    assert all(p["metadata"]["uid"] in {q["metadata"]["uid"] for q in pvcs} for p in kept)
    released = await eventually(
        lambda: _state(world, claim["metadata"]["name"], "Released"), message="the claim is released"
    )
    assert released["status"]["bindTo"] == ""
    assert condition(released, "Ready")["reason"] == "Released"
    assert _objects(world).holds_data("bucket/mo"), "the data is kept"
    assert await world.list(r.JOBS) == [], "no cleanup ran"


async def _state(world: World, claim: str, state: str) -> Obj | None:
    found = await world.get(r.BUCKETCLAIMS, claim)
    return found if found is not None and (found.get("status") or {}).get("state") == state else None


async def test_delete_policies_remove_the_volumes_and_empty_the_path(
    world: World, operator: OperatorRunner
) -> None:
    claim = await _running_cluster(world, "mo", logService=_log_service("mo", policy="Delete"))
    # a neighbour whose path starts the same: its data must survive the cleanup of bucket/mo
    await _running_cluster(
        world,
        "mo2",
        logService=_log_service("mo2", replicas=1),
        cnGroups=[{"name": "tp", "replicas": 1}],
    )
    assert len(await _log_pvcs(world, "mo")) == 3

    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")

    await eventually(
        lambda: _cluster_gone(world, "mo"), timeout=60, message="the cluster and its children go"
    )
    await eventually(
        lambda: _gone(world, r.BUCKETCLAIMS, claim["metadata"]["name"]),
        timeout=60,
        message="the claim goes once its data is deleted",
    )
    assert not _objects(world).holds_data("bucket/mo"), _objects(world).objects("bucket/mo")
    assert _objects(world).holds_data("bucket/mo2"), "the neighbour's data is untouched"
    await eventually(lambda: _no_pvcs(world, "mo"), message="the log service's volumes go")
    await eventually(lambda: _nothing_terminating(world), timeout=30, message="nothing left Terminating")
    assert "DataDeleted" in await _events(world, claim["metadata"]["name"])
    assert await world.get(r.MATRIXONE_CLUSTERS, "mo2") is not None


async def _no_pvcs(world: World, cluster: str) -> bool:
    return not await _log_pvcs(world, cluster)


async def test_a_cluster_that_never_came_up_is_deleted_at_once(
    world: World, operator: OperatorRunner
) -> None:
    await world.set_simulator_rules(RuleSet(rules=[FailureRule("ImagePullError", image="*:9.9.9-missing")]))
    await world.apply(
        world.cluster_manifest("mo", version="9.9.9-missing", logService=_log_service("mo", policy="Delete"))
    )
    claim = await eventually(lambda: _claim_of(world, "mo"), message="the cluster claims its path")

    async def pulling() -> bool:
        pods = await world.pods(**{labels.CLUSTER: "mo"})
        return len(pods) == 3 and all("ImagePull" in str(p["status"].get("containerStatuses")) for p in pods)

    await eventually(pulling, message="the log pods cannot pull their image")
    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")

    await eventually(
        lambda: _cluster_gone(world, "mo"), timeout=30, message="the cluster and its children go"
    )
    await eventually(
        lambda: _gone(world, r.BUCKETCLAIMS, claim["metadata"]["name"]),
        timeout=30,
        message="its claim goes without a cleanup: nothing was ever written",
    )
    assert await world.list(r.JOBS) == []
    await eventually(lambda: _no_pvcs(world, "mo"), message="the log service's volumes go")
    await eventually(lambda: _nothing_terminating(world), timeout=30, message="nothing left Terminating")


@pytest.mark.timeout(300)  # kube-controller-manager backs the Job's retries off for about 70 s
async def test_a_failing_cleanup_is_reported_and_recovers_once_fixed(
    world: World, operator: OperatorRunner
) -> None:
    claim = await _running_cluster(world, "mo", logService=_log_service("mo", policy="Delete"))
    name = claim["metadata"]["name"]
    broken = RuleSet(rules=[FailureRule("Fail", image="amazon/aws-cli*", exit_code=254)])
    await world.set_simulator_rules(broken)

    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")

    await eventually(
        lambda: _cluster_gone(world, "mo"), timeout=60, message="the cluster and its children go"
    )

    async def failed(final: bool) -> Obj | None:
        found = await world.get(r.BUCKETCLAIMS, name)
        ready = condition(found, "Ready")
        if ready.get("reason") != "CleanupFailed":
            return None
        return found if not final or "BackoffLimitExceeded" in ready["message"] else None

    # The first failed pod is reported at once: the Job controller backs retries
    # off (10 s, 20 s, 40 s on kube-controller-manager) and gives up only later.
    reported = await eventually(
        lambda: failed(final=False), timeout=60, message="the failing cleanup is reported on the claim"
    )
    message = condition(reported, "Ready")["message"]
    assert f"job-{name}" in message and "exit code 254" in message, message
    await eventually(lambda: _has_event(world, name, "CleanupFailed"), message="a Warning Event says so")

    reported = await eventually(
        lambda: failed(final=True), timeout=180, message="the failed Job is reported on the claim"
    )
    assert _terminating(reported) and reported["status"]["state"] == "Deleting"
    message = condition(reported, "Ready")["message"]
    assert f"job-{name}" in message and "BackoffLimitExceeded" in message, message
    assert "exit code 254" in message, message
    assert _objects(world).holds_data("bucket/mo"), "nothing was deleted"
    job = await world.get(r.JOBS, f"job-{name}")
    assert job is not None and job["spec"]["backoffLimit"] == 3

    # fixed (say, the credentials): deleting the failed Job retries the cleanup
    await world.set_simulator_rules(RuleSet())
    await world.kubectl("delete", "job", f"job-{name}", "--wait=false")
    await eventually(
        lambda: _gone(world, r.BUCKETCLAIMS, name), timeout=60, message="the retried cleanup ends"
    )
    assert not _objects(world).holds_data("bucket/mo")
    await eventually(lambda: _nothing_terminating(world), timeout=30, message="nothing left Terminating")


async def _has_event(world: World, name: str, reason: str) -> bool:
    return f"reason: {reason}" in await _events(world, name)


async def test_a_path_is_held_by_one_cluster_at_a_time_and_passed_on_when_released(
    world: World, operator: OperatorRunner
) -> None:
    shared = _log_service("shared", replicas=1)
    small = {"tn": {"replicas": 1}, "cnGroups": [{"name": "tp", "replicas": 1}]}
    claim = await _running_cluster(world, "a", logService=shared, **small)
    second = world.cluster_manifest("b", logService=shared, **small)
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(second), check=False)
    expected = (
        f"claimed bucket {world.namespace}/{claim['metadata']['name']} already bind to {world.namespace}/a"
    )
    assert result.returncode != 0 and expected in result.stderr, result.stderr
    assert await world.get(r.MATRIXONE_CLUSTERS, "b") is None

    await world.kubectl("delete", "matrixonecluster", "a", "--wait=false")

    async def released() -> bool:
        found = await world.get(r.BUCKETCLAIMS, claim["metadata"]["name"])
        return found is not None and found["status"]["state"] == "Released"

    await eventually(released, timeout=60, message="a's claim is released")
    await world.apply(second)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "b", timeout=60)

    async def taken_by_b() -> Mapping[str, Any] | None:
        # The claim's status is its own controller's, written after the LogSet binds it.
        found = await world.get(r.BUCKETCLAIMS, claim["metadata"]["name"])
        return found if found is not None and found["status"]["state"] == "InUse" else None

    taken = await eventually(taken_by_b, timeout=30, message="b's LogSet holds the claim")
    assert taken["status"]["bindTo"] == f"{world.namespace}/b"
    assert taken["metadata"]["labels"][labels.CLUSTER] == "b"
    assert [c["metadata"]["name"] for c in await world.list(r.BUCKETCLAIMS)] == [claim["metadata"]["name"]]
    assert _objects(world).holds_data("bucket/shared")
