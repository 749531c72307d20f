"""Growing volumes of a running cluster (issue 14): the log volume and the TN and CN
cache volumes grow online (claims patched, StatefulSets replaced without touching a pod),
the sets catch up with their spec and take later changes; a StorageClass that
cannot expand is reported (condition and Warning Event) and wedges nothing."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import pytest
from lightkube.resources.core_v1 import Event

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.steps import volumes
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import labels

from .harness import SIMULATED_STORAGE_CLASS, OperatorRunner, World, condition, eventually

Obj = dict[str, Any]
EVENTS = Resource.of(Event)
LOG_CLAIMS = [f"mo-data-mo-log-{i}" for i in range(3)]
TN_CLAIMS = ["mo-data-mo-dn-0"]
CN_CLAIMS = [f"mo-data-mo-tp-cn-{i}" for i in range(2)]


def _pods_by_uid(pods: list[Obj]) -> dict[str, str]:
    return {p["metadata"]["name"]: p["metadata"]["uid"] for p in pods}


async def _stateful_pods(world: World) -> dict[str, str]:
    """Log and TN pods by name, and the CN pods there were at the start."""
    log = await world.pods(**{labels.INSTANCE: "mo", labels.COMPONENT: "LogSet"})
    tn = await world.pods(**{labels.INSTANCE: "mo", labels.COMPONENT: "DNSet"})
    cn = await world.pods(**{labels.INSTANCE: "mo-tp"})
    return _pods_by_uid(log + tn + [p for p in cn if p["metadata"]["name"] in ("mo-tp-cn-0", "mo-tp-cn-1")])


async def _claims_at(world: World, names: list[str], size: str) -> bool:
    for name in names:
        claim = await world.get(r.PVCS, name)
        if claim is None:
            return False
        if volumes.request_of(claim) != size or volumes.capacity_of(claim) != size:
            return False
    return True


async def _template_size(world: World, sts: str) -> str:
    found = await world.get(r.STATEFULSETS, sts)
    assert found is not None
    return volumes.request_of(found["spec"]["volumeClaimTemplates"][0])


def _caught_up(obj: Mapping[str, Any] | None) -> bool:
    status = (obj or {}).get("status") or {}
    return int(status.get("observedGeneration") or 0) >= int(
        (obj or {}).get("metadata", {}).get("generation") or 1
    )


@pytest.mark.timeout(240)
async def test_log_tn_and_cn_volumes_grow_online_and_later_changes_still_apply(
    world: World, operator: OperatorRunner
) -> None:
    cn = {
        "name": "tp",
        "replicas": 2,
        "scalingConfig": {"minDelaySeconds": 0},
        "cacheVolume": {"size": "1Gi"},
    }
    manifest = world.cluster_manifest("mo", tn={"replicas": 1, "cacheVolume": {"size": "1Gi"}}, cnGroups=[cn])
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    before = await _stateful_pods(world)
    assert len(before) == 6

    patch = [
        {"op": "replace", "path": "/spec/logService/volume/size", "value": "2Gi"},
        {"op": "replace", "path": "/spec/tn/cacheVolume/size", "value": "2Gi"},
        {"op": "replace", "path": "/spec/cnGroups/0/cacheVolume/size", "value": "2Gi"},
    ]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))
    await eventually(
        lambda: _claims_at(world, LOG_CLAIMS + TN_CLAIMS + CN_CLAIMS, "2Gi"),
        timeout=90,
        message="every claim asks and holds 2Gi",
    )
    for kind, name in ((r.LOGSETS, "mo"), (r.DNSETS, "mo"), (r.CNSETS, "mo-tp")):

        async def expanded(kind: Resource = kind, name: str = name) -> bool:
            obj = await world.get(kind, name)
            return _caught_up(obj) and condition(obj, volumes.CONDITION).get("status") == "True"

        await eventually(expanded, timeout=60, message=f"{kind.kind} {name} caught up, volumes expanded")
    assert await _template_size(world, "mo-log") == "2Gi"
    assert await _template_size(world, "mo-dn") == "2Gi"
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    assert condition(cluster, volumes.CONDITION).get("status") == "True"
    assert await _stateful_pods(world) == before, "no pod was replaced"

    shrink = [{"op": "replace", "path": "/spec/logService/volume/size", "value": "1Gi"}]
    refused = await world.kubectl(
        "patch", "mo", "mo", "--type", "json", "-p", json.dumps(shrink), check=False
    )
    assert refused.returncode != 0 and "spec.logService.volume.size" in refused.stderr, refused.stderr

    scale = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": 3}]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(scale))

    async def three_cns() -> bool:
        return len(await world.pods(**{labels.INSTANCE: "mo-tp"})) == 3

    await eventually(three_cns, timeout=60, message="a later change (CN replicas) still applies")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    assert await _stateful_pods(world) == before


@pytest.fixture
async def fixed_class(world: World) -> AsyncIterator[str]:
    """A StorageClass of the simulator's provisioner that does not allow expansion."""
    simulated = await world.client.get(
        r.STORAGECLASSES, SIMULATED_STORAGE_CLASS if world.real else "standard"
    )
    name = f"fixed-{world.namespace}"
    await world.client.create(
        r.STORAGECLASSES,
        {
            "metadata": {"name": name},
            "provisioner": simulated["provisioner"],
            "volumeBindingMode": simulated.get("volumeBindingMode") or "Immediate",
            "reclaimPolicy": "Delete",
            "allowVolumeExpansion": False,
        },
    )
    try:
        yield name
    finally:
        await world.client.delete(r.STORAGECLASSES, name, missing_ok=True)


@pytest.mark.timeout(240)
async def test_a_class_that_cannot_expand_is_reported_and_the_rest_still_applies(
    world: World, operator: OperatorRunner, fixed_class: str
) -> None:
    cache = {"size": "1Gi", "storageClassName": fixed_class}
    await world.apply(world.cluster_manifest("mo", tn={"replicas": 1, "cacheVolume": cache}))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)

    patch = [
        {"op": "replace", "path": "/spec/tn/cacheVolume/size", "value": "2Gi"},
        {"op": "add", "path": "/spec/tn/image", "value": "matrixorigin/matrixone:2.0.1"},
    ]
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))

    async def reported() -> bool:
        tn = await world.get(r.DNSETS, "mo")
        found = condition(tn, volumes.CONDITION)
        return found.get("reason") == volumes.BLOCKED and _caught_up(tn)

    await eventually(reported, timeout=60, message="the TN set says its class cannot expand")
    tn = await world.get(r.DNSETS, "mo")
    message = str(condition(tn, volumes.CONDITION).get("message"))
    assert fixed_class in message and TN_CLAIMS[0] in message, message

    async def rolled() -> bool:
        pods = await world.pods(**{labels.INSTANCE: "mo", labels.COMPONENT: "DNSet"})
        return len(pods) == 1 and pods[0]["spec"]["containers"][0]["image"].endswith(":2.0.1")

    await eventually(rolled, timeout=90, message="the image change in the same patch still rolls")
    tn = await world.wait_settled(r.DNSETS, "mo", timeout=60)
    assert condition(tn, volumes.CONDITION).get("reason") == volumes.BLOCKED
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    assert condition(cluster, volumes.CONDITION).get("reason") == volumes.BLOCKED
    assert await _template_size(world, "mo-dn") == "1Gi", "the StatefulSet keeps what its claims hold"
    claim = await world.get(r.PVCS, TN_CLAIMS[0])
    assert claim is not None and volumes.request_of(claim) == "1Gi"

    async def warned() -> list[Obj]:
        events = (await world.client.list(EVENTS, world.namespace)).items
        return [
            e
            for e in events
            if e.get("reason") == volumes.BLOCKED
            and e.get("type") == "Warning"
            and (e.get("involvedObject") or {}).get("kind") == "DNSet"
        ]

    found = await eventually(warned, timeout=30, message="a Warning Event names the class and the claim")
    assert len(found) == 1 and fixed_class in found[0]["message"] and TN_CLAIMS[0] in found[0]["message"]
