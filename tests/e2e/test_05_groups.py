"""Scenario 5: a heterogeneous CN group is added and removed; a standalone
CNSet joins an existing cluster, by LogSet reference and by HAKeeper address
(as a CNSet whose log service lives elsewhere does)."""

from __future__ import annotations

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .harness import GROUP_VERSION, OperatorRunner, World, eventually

AP = {
    "name": "ap",
    "replicas": 1,
    "image": "matrixorigin/matrixone:2.0.1",
    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
    "cnLabels": [{"key": "role", "values": ["ap"]}],
    "config": '[cn.txn]\nmode = "optimistic"\n',
    "scalingConfig": {"minDelaySeconds": 0},
}


async def _registered_cns(world: World) -> set[str]:
    mo = world.cluster.mo
    assert mo is not None
    keeper = mo.hakeeper(world.namespace, "mo")
    return set(keeper.stores[Component.CN]) if keeper is not None else set()


async def test_a_heterogeneous_group_comes_and_goes(world: World, operator: OperatorRunner) -> None:
    manifest = world.cluster_manifest("mo")
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")

    manifest["spec"]["cnGroups"].append(
        world.for_cluster({"kind": "CNSet", "spec": dict(AP)})["spec"] | {"name": "ap"}
    )
    await world.apply(manifest)
    cnset = await world.wait_settled(r.CNSETS, "mo-ap")
    assert cnset["metadata"]["labels"][labels.CLUSTER] == "mo"
    pods = await world.pods(**{labels.INSTANCE: "mo-ap"})
    assert [p["spec"]["containers"][0]["image"] for p in pods] == ["matrixorigin/matrixone:2.0.1"]
    assert pods[0]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    mo = world.cluster.mo
    assert mo is not None
    keeper = mo.hakeeper(world.namespace, "mo")
    assert keeper is not None
    uuid = pods[0]["metadata"]["labels"][labels.CN_UUID]
    await eventually(
        lambda: keeper.stores[Component.CN][uuid].labels == {"role": ("ap",)}, message="labels synced"
    )
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    assert cluster["status"]["cnGroups"]["desiredGroups"] == 2

    manifest["spec"]["cnGroups"] = manifest["spec"]["cnGroups"][:1]
    await world.apply(manifest)
    await eventually(lambda: _absent(world, "mo-ap"), message="the removed group's CNSet is deleted")
    await eventually(lambda: _no_pods(world, "mo-ap"), message="its pods are gone")
    await eventually(lambda: _store_gone(world, uuid), message="its store is gone from HAKeeper")
    assert (await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo"))["status"]["cnGroups"]["desiredGroups"] == 1


async def _absent(world: World, name: str) -> bool:
    return await world.get(r.CNSETS, name) is None


async def _no_pods(world: World, instance: str) -> bool:
    return not await world.list(r.PODS, **{labels.INSTANCE: instance})


async def _store_gone(world: World, uuid: str) -> bool:
    return uuid not in await _registered_cns(world)


async def test_standalone_cnsets_join_an_existing_cluster(world: World, operator: OperatorRunner) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    before = await _registered_cns(world)

    by_ref = world.for_cluster(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "CNSet",
            "metadata": {"name": "extra"},
            "spec": {
                "replicas": 1,
                "image": "matrixorigin/matrixone:2.0.0",
                "scalingConfig": {"minDelaySeconds": 0},
            },
            "deps": {"logSet": {"metadata": {"name": "mo"}}},
        }
    )
    storage = (
        '[[fileservice]]\nname = "LOCAL"\nbackend = "DISK"\n'
        '[[fileservice]]\nname = "S3"\nbackend = "S3"\n'
        '[[fileservice]]\nname = "ETL"\nbackend = "DISK-ETL"\n'
    )
    by_address = world.for_cluster(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "CNSet",
            "metadata": {"name": "remote"},
            "spec": {"replicas": 1, "image": "matrixorigin/matrixone:2.0.0", "config": storage},
            "deps": {"externalLogSet": {"haKeeperEndpoint": f"mo-log-discovery.{world.namespace}.svc:32001"}},
        }
    )
    await world.apply(by_ref)
    await world.apply(by_address)
    await world.wait_settled(r.CNSETS, "extra")
    await world.wait_settled(r.CNSETS, "remote")
    joined = await _registered_cns(world) - before
    pods = await world.pods(**{labels.INSTANCE: "extra"}) + await world.pods(**{labels.INSTANCE: "remote"})
    assert {p["metadata"]["labels"][labels.CN_UUID] for p in pods} == joined
    # The cluster does not adopt them: they are not its groups.
    cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo")
    assert cluster is not None and cluster["status"]["cnGroups"]["desiredGroups"] == 1
    assert await world.get(r.CNSETS, "extra") is not None
