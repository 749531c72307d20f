"""Update rules of built-in kinds that the embedded server enforces like
kube-apiserver's ``ValidatePersistentVolumeClaimUpdate``
(pkg/apis/core/validation/validation.go)."""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.apiserver.builtins import builtin_type
from mo_devkit.localcluster.apiserver.strategy import validate_update

_PVC = builtin_type("v1", "PersistentVolumeClaim")
assert _PVC is not None
PVC = _PVC


def claim(**spec: Any) -> dict[str, Any]:
    base = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
    return {"metadata": {"name": "data", "namespace": "default"}, "spec": {**base, **spec}}


def test_claim_spec_is_immutable_after_creation() -> None:
    causes = validate_update(PVC, claim(), claim(accessModes=["ReadWriteMany"]))
    assert [c["field"] for c in causes] == ["spec"]
    assert "immutable" in causes[0]["message"]


def test_a_claim_without_a_class_may_get_the_default_class_later() -> None:
    """KEP-3333 (GA in 1.28): the PV controller assigns the default
    StorageClass to claims created while none existed."""
    assert validate_update(PVC, claim(), claim(storageClassName="standard")) == []


def test_a_class_once_set_or_set_to_empty_cannot_change() -> None:
    assert validate_update(PVC, claim(storageClassName="a"), claim(storageClassName="b"))
    assert validate_update(PVC, claim(storageClassName=""), claim(storageClassName="standard"))


def bound(obj: dict[str, Any]) -> dict[str, Any]:
    return {**obj, "status": {"phase": "Bound"}}


def test_binding_and_growing_a_bound_claim_are_allowed() -> None:
    assert validate_update(PVC, claim(), claim(volumeName="pv-1")) == []
    old = bound(claim(volumeName="pv-1"))
    bigger = bound(claim(volumeName="pv-1", resources={"requests": {"storage": "2Gi"}}))
    assert validate_update(PVC, old, bigger) == []
    assert validate_update(PVC, claim(volumeName="pv-1"), claim(volumeName="pv-2"))


def test_only_a_bound_claim_may_change_its_request() -> None:
    causes = validate_update(PVC, claim(), claim(resources={"requests": {"storage": "2Gi"}}))
    assert [c["field"] for c in causes] == ["spec"]


def test_a_request_never_shrinks() -> None:
    old = bound(claim(volumeName="pv-1", resources={"requests": {"storage": "2Gi"}}))
    causes = validate_update(PVC, old, bound(claim(volumeName="pv-1")))
    assert [(c["field"], c["message"]) for c in causes] == [
        ("spec.resources.requests.storage", "Forbidden: field can not be less than previous value")
    ]
