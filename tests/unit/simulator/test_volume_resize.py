"""Online volume expansion as the simulator plays it: the external-resizer marks the
claim Resizing, grows the volume and leaves the file system to the kubelet, which
reports the new capacity once a running pod mounts it; the PV controller never
overwrites a bound claim's capacity (decisions/volumes.py)."""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.core.actions import Patch
from mo_devkit.localcluster.simulator.core.kinds import PV, PVC
from mo_devkit.localcluster.simulator.decisions.volumes import (
    FS_RESIZE_PENDING,
    PROVISIONED_BY,
    RESIZING,
    expand_on_node,
    plan_claim,
    resize,
)

NOW = "2026-01-01T00:00:00Z"
CLASSES = {
    "grows": {"metadata": {"name": "grows"}, "provisioner": "sim", "allowVolumeExpansion": True},
    "fixed": {"metadata": {"name": "fixed"}, "provisioner": "sim"},
}


def claim(request: str = "2Gi", cls: str = "grows", conditions: list[dict[str, Any]] | None = None) -> dict:
    status: dict[str, Any] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    if conditions is not None:
        status["conditions"] = conditions
    return {
        "metadata": {"name": "data", "namespace": "ns", "uid": "u1"},
        "spec": {
            "storageClassName": cls,
            "volumeName": "pv-1",
            "resources": {"requests": {"storage": request}},
        },
        "status": status,
    }


def volume(capacity: str = "1Gi") -> dict:
    return {
        "metadata": {"name": "pv-1", "annotations": {PROVISIONED_BY: "sim"}},
        "spec": {
            "capacity": {"storage": capacity},
            "claimRef": {"namespace": "ns", "name": "data", "uid": "u1"},
            "accessModes": ["ReadWriteOnce"],
        },
        "status": {"phase": "Bound"},
    }


def types(patch: Patch) -> list[str]:
    return [c["type"] for c in patch.patch["status"]["conditions"]]


def test_the_resizer_marks_resizing_then_grows_the_volume_and_waits_for_the_kubelet() -> None:
    first = resize(claim(), volume(), CLASSES, "sim", NOW)
    assert len(first) == 1 and isinstance(first[0], Patch) and types(first[0]) == [RESIZING]
    second = resize(claim(conditions=[{"type": RESIZING, "status": "True"}]), volume(), CLASSES, "sim", NOW)
    assert [(a.kind, a.name) for a in second if isinstance(a, Patch)] == [(PV, "pv-1"), (PVC, "data")]
    grown, pending = second
    assert isinstance(grown, Patch) and grown.patch == {"spec": {"capacity": {"storage": "2Gi"}}}
    assert isinstance(pending, Patch) and types(pending) == [FS_RESIZE_PENDING]


def test_nothing_to_resize_for_a_class_that_cannot_expand_another_provisioner_or_a_grown_volume() -> None:
    assert resize(claim(cls="fixed"), volume(), CLASSES, "sim", NOW) == []
    assert resize(claim(), volume(), CLASSES, "someone-else", NOW) == []
    assert resize(claim(), volume("2Gi"), CLASSES, "sim", NOW) == []


def test_the_kubelet_finishes_only_once_a_running_pod_mounts_the_claim() -> None:
    waiting = claim(conditions=[{"type": FS_RESIZE_PENDING, "status": "True"}])
    assert expand_on_node(waiting, volume("2Gi"), mounted=False) == []
    (done,) = expand_on_node(waiting, volume("2Gi"), mounted=True)
    assert isinstance(done, Patch)
    assert done.patch == {"status": {"capacity": {"storage": "2Gi"}, "conditions": None}}
    assert expand_on_node(claim(), volume("2Gi"), mounted=True) == []  # no resize pending


def test_the_pv_controller_leaves_a_bound_claims_capacity_alone() -> None:
    c = claim(conditions=[{"type": FS_RESIZE_PENDING, "status": "True"}])
    c["metadata"]["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    c["status"]["accessModes"] = ["ReadWriteOnce"]
    assert plan_claim(c, [volume("2Gi")], CLASSES, in_use=True) == []
