"""Resizing a PersistentVolumeClaim as kube-apiserver 1.28 allows it: only a bound
claim's storage request may change (``ValidatePersistentVolumeClaimUpdate``), never
downwards, and upwards only when its StorageClass says ``allowVolumeExpansion: true``
(the PersistentVolumeClaimResize admission plugin, plugin/pkg/admission/storage/
persistentvolume/resize)."""

from __future__ import annotations

from typing import Any

from .conftest import Raw

NS = "/api/v1/namespaces/default"
MERGE = "application/merge-patch+json"


async def _class(raw: Raw, name: str, expands: bool) -> None:
    body = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": "example.com/none",
        "allowVolumeExpansion": expands,
    }
    code, _ = await raw.post("/apis/storage.k8s.io/v1/storageclasses", body)
    assert code == 201


async def _claim(raw: Raw, name: str, cls: str, *, bound: bool) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": name},
        "spec": {
            "storageClassName": cls,
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        },
    }
    code, _ = await raw.post(f"{NS}/persistentvolumeclaims", body)
    assert code == 201
    if bound:
        status = {"status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}
        code, _ = await raw.patch(f"{NS}/persistentvolumeclaims/{name}/status", status, MERGE)
        assert code == 200


async def _resize(raw: Raw, name: str, size: str) -> tuple[int, Any]:
    patch = {"spec": {"resources": {"requests": {"storage": size}}}}
    return await raw.patch(f"{NS}/persistentvolumeclaims/{name}", patch, MERGE)


async def test_a_bound_claim_of_an_expandable_class_grows_and_never_shrinks(raw: Raw) -> None:
    await _class(raw, "grows", True)
    await _claim(raw, "data", "grows", bound=True)
    code, body = await _resize(raw, "data", "2Gi")
    assert code == 200 and body["spec"]["resources"]["requests"]["storage"] == "2Gi"
    code, body = await _resize(raw, "data", "1Gi")
    assert code == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.resources.requests.storage", "Forbidden: field can not be less than previous value")
    ]


async def test_a_class_that_cannot_expand_is_refused_by_admission(raw: Raw) -> None:
    await _class(raw, "fixed", False)
    await _claim(raw, "data", "fixed", bound=True)
    code, body = await _resize(raw, "data", "2Gi")
    assert code == 403 and body["reason"] == "Forbidden"
    assert body["message"] == (
        'persistentvolumeclaims "data" is forbidden: only dynamically provisioned pvc can be resized '
        "and the storageclass that provisions the pvc must support resize"
    )


async def test_an_unbound_claim_keeps_its_request(raw: Raw) -> None:
    await _class(raw, "grows", True)
    await _claim(raw, "data", "grows", bound=False)
    code, body = await _resize(raw, "data", "2Gi")
    assert code == 422
    assert [c["field"] for c in body["details"]["causes"]] == ["spec"]
