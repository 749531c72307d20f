"""Scenario 1: a minimal MatrixOneCluster becomes Ready with its LogSet, TN
set, CN set and proxy, and their workloads, Services and ConfigMaps, every
one owned by its creator and labelled."""

from __future__ import annotations

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, condition, is_ready


async def test_a_minimal_cluster_becomes_ready_with_owned_labelled_children(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}))
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    assert cluster["status"]["phase"] == "Ready"
    assert condition(cluster, "Ready")["reason"] == "AllSetsReady"
    assert cluster["status"]["host"] == f"mo-proxy.{world.namespace}" and cluster["status"]["port"] == 6001
    uid = cluster["metadata"]["uid"]

    children = {
        (res.kind, name): await world.get(res, name)
        for res, name in ((r.LOGSETS, "mo"), (r.DNSETS, "mo"), (r.CNSETS, "mo-tp"), (r.PROXYSETS, "mo"))
    }
    for (kind, name), child in children.items():
        assert child is not None, f"{kind} {name} missing"
        assert is_ready(child), f"{kind} {name} not Ready"
        refs = child["metadata"]["ownerReferences"]
        assert [(ref["kind"], ref["uid"], ref["controller"]) for ref in refs] == [
            ("MatrixOneCluster", uid, True)
        ]
        assert child["metadata"]["labels"][labels.CLUSTER] == "mo"

    # Every built-in object the sets made is owned by one of them and labelled.
    set_uids = {c["metadata"]["uid"]: c for c in children.values() if c}
    for res in (r.STATEFULSETS, r.DEPLOYMENTS, r.SERVICES, r.CONFIGMAPS):
        made = await world.list(res, **{labels.CLUSTER: "mo"})
        assert made, f"no {res.kind} was made"
        for obj in made:
            owners = [ref["uid"] for ref in obj["metadata"].get("ownerReferences") or ()]
            assert any(u in set_uids for u in owners), (
                f"{res.kind} {obj['metadata']['name']} has no set as owner"
            )
            assert obj["metadata"]["labels"][labels.COMPONENT] in ("LogSet", "DNSet", "CNSet", "ProxySet")
    names = {
        (res.kind, o["metadata"]["name"])
        for res in (r.STATEFULSETS, r.DEPLOYMENTS, r.SERVICES)
        for o in await world.list(res)
    }
    assert {
        ("StatefulSet", "mo-log"),
        ("StatefulSet", "mo-dn"),
        ("Deployment", "mo-proxy"),
        ("Service", "mo-log-discovery"),
        ("Service", "mo-log-headless"),
        ("Service", "mo-dn-headless"),
        ("Service", "mo-tp-cn"),
        ("Service", "mo-tp-cn-headless"),
        ("Service", "mo-proxy"),
    } <= names

    # Pods: the right number of each, all ready, each naming the exact ConfigMap it runs.
    pods = await world.pods(**{labels.CLUSTER: "mo"})
    by_component: dict[str, int] = {}
    for pod in pods:
        component = pod["metadata"]["labels"][labels.COMPONENT]
        by_component[component] = by_component.get(component, 0) + 1
        config = next(v["configMap"]["name"] for v in pod["spec"]["volumes"] if v["name"] == "config")
        assert await world.get(r.CONFIGMAPS, config) is not None
    assert by_component == {"LogSet": 3, "DNSet": 1, "CNSet": 2, "ProxySet": 1}
    secret = await world.get(r.SECRETS, "mo-credential")
    assert secret is not None and set(secret["data"]) == {"username", "password"}


async def test_a_resync_of_a_settled_cluster_writes_nothing(world: World, operator: OperatorRunner) -> None:
    """Level-based reconcile: every object re-reconciled from the cache, zero API writes."""
    await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    op, client = operator.operator, operator.client
    assert op is not None and client is not None
    await operator.quiet()
    before = sum(client.writes.values())
    assert op.resync() == 6  # the cluster, its four sets and the BucketClaim of its S3 path
    await op.wait_idle()
    assert sum(client.writes.values()) == before, dict(client.writes)
