"""Claims of a StatefulSet's volumeClaimTemplates on the simulator's
StorageClass (pkg/controller/volume/persistentvolume, the scheduler's
VolumeBinding plugin, an external provisioner; docs: concepts/storage/
persistent-volumes): Immediate binds a claim as soon as its volume is
provisioned, WaitForFirstConsumer once the scheduler picked the pod's node
(the volume then follows that node); a deleted claim releases its volume,
which its reclaim policy deletes or retains."""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.simulator.core.kinds import POD, PV, PVC, STATEFULSET
from mo_devkit.localcluster.simulator.core.objects import (
    Obj,
    annotations_of,
    is_deleting,
    name_of,
    spec_of,
    status_of,
    uid_of,
)
from mo_devkit.localcluster.simulator.core.pods import is_running_and_ready, node_name_of

from .harness import REQUIRES_REAL, Event, Side, both, two_sides

pytestmark = REQUIRES_REAL

SELECTED_NODE = "volume.kubernetes.io/selected-node"


def statefulset(side: Side) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": side.place(
                    {
                        "containers": [{"name": "db", "image": "registry.local/db:v1"}],
                        "terminationGracePeriodSeconds": 5,
                    }
                ),
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "storageClassName": side.storage_class,
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                    },
                }
            ],
        },
    }


def volume_of(side: Side, claim: str) -> Obj | None:
    return next((v for v in side.recorder.objects(PV) if spec_of(v)["claimRef"]["name"] == claim), None)


def node_of_volume(volume: Obj) -> str | None:
    terms = ((spec_of(volume).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
    return terms[0]["matchExpressions"][0]["values"][0] if terms else None


def bound(side: Side, ordinal: int) -> dict[str, Any]:
    """What binding left on claim, volume and pod of one ordinal."""
    claim = side.get(PVC, f"data-db-{ordinal}") or {}
    pod = side.get(POD, f"db-{ordinal}") or {}
    volume = volume_of(side, name_of(claim)) or {}
    ref = spec_of(volume).get("claimRef") or {}
    return {
        "claim": (status_of(claim).get("phase"), spec_of(claim).get("volumeName") == name_of(volume)),
        "claim annotations": sorted(annotations_of(claim)),
        "volume": (status_of(volume).get("phase"), spec_of(volume).get("persistentVolumeReclaimPolicy")),
        "volume annotations": sorted(annotations_of(volume)),
        "claimRef": (
            ref.get("namespace") == side.namespace,
            ref.get("name"),
            ref.get("uid") == uid_of(claim),
        ),
        "volume follows the pod's node": node_of_volume(volume) == node_name_of(pod),
        "pod on the selected node": annotations_of(claim).get(SELECTED_NODE) == node_name_of(pod),
        "volume pinned": node_of_volume(volume) is not None,
    }


def step(e: Event) -> str | None:
    """Claim, volume and scheduling of ordinal 0 (each an effect of the one
    before). Not whether a deleted volume lingers: the real server gives
    volumes a pv-protection finalizer, the embedded one does not
    (docs/design.md, known differences)."""
    o = e.obj
    if e.kind == "PersistentVolume" and is_deleting(o):
        return None
    if e.kind == "PersistentVolumeClaim" and name_of(o) == "data-db-0":
        ann = annotations_of(o)
        return (
            f"claim {status_of(o).get('phase')} selected={SELECTED_NODE in ann}"
            f" provisioner={'volume.kubernetes.io/storage-provisioner' in ann}"
            f" volume={bool(spec_of(o).get('volumeName'))}{' deleting' if is_deleting(o) else ''}"
        )
    if e.kind == "PersistentVolume" and spec_of(o)["claimRef"]["name"] == "data-db-0":
        return f"volume {status_of(o).get('phase')}"
    if e.kind == "Pod" and name_of(o) == "db-0" and node_name_of(o) and not node_name_of(e.old or {}):
        return "pod scheduled"
    return None


async def claims(side: Side) -> dict[str, Any]:
    await side.create(STATEFULSET, statefulset(side))
    await side.wait(
        lambda: all(is_running_and_ready(side.get(POD, f"db-{i}") or {}) for i in (0, 1)), "2 pods ready"
    )
    await side.wait(
        lambda: all(bound(side, i)["volume"][0] == bound(side, i)["claim"][0] == "Bound" for i in (0, 1)),
        "both claims and volumes report Bound",
    )
    after_binding = [bound(side, i) for i in (0, 1)]

    await side.patch(STATEFULSET, "db", {"spec": {"replicas": 0}})
    await side.wait(lambda: not side.recorder.objects(POD), "the pods are gone")
    kept = volume_of(side, "data-db-1")
    assert kept is not None
    await side.patch(PV, name_of(kept), {"spec": {"persistentVolumeReclaimPolicy": "Retain"}})
    for i in (0, 1):
        await side.delete(PVC, f"data-db-{i}")
    await side.wait(lambda: volume_of(side, "data-db-0") is None, "the Delete volume is deleted")
    await side.wait(
        lambda: status_of(volume_of(side, "data-db-1") or {}).get("phase") == "Released",
        "the Retain one is Released",
    )
    retained = volume_of(side, "data-db-1") or {}
    return {
        "bound": after_binding,
        "retained": (
            status_of(retained).get("phase"),
            is_deleting(retained),
            spec_of(retained)["claimRef"]["name"],
        ),
        "claims left": sorted(name_of(c) for c in side.recorder.objects(PVC)),
        "timeline": side.recorder.timeline(step),
        "claim phases": side.recorder.history(PVC, lambda c: status_of(c).get("phase"), name="data-db-1"),
    }


@pytest.mark.parametrize("mode", ["Immediate", "WaitForFirstConsumer"])
async def test_claims_bind_schedule_and_release_per_policy(mode: str) -> None:
    """Both modes: claims Pending then Bound to a provisioned volume whose
    claimRef names them; WaitForFirstConsumer pins the volume to the node the
    scheduler chose for the pod. Deleting the claims: the Delete volume goes,
    the Retain one stays Released."""
    async with two_sides(storage_class=f"simdiff-{mode.lower()}", volume_binding_mode=mode) as sides:
        embedded, real = await both(claims, *sides)
    first = real["bound"][0]
    assert first["claim"] == ("Bound", True) and first["claimRef"] == (True, "data-db-0", True)
    assert first["volume pinned"] is (mode == "WaitForFirstConsumer")
    if mode == "WaitForFirstConsumer":
        assert first["volume follows the pod's node"] and first["pod on the selected node"]
    assert real["retained"][:2] == ("Released", False)
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"
