"""Which fields of built-in kinds are quantities, and how they are rewritten.

kube-apiserver decodes requests into Go types, parsing each
``resource.Quantity`` with ``UnmarshalJSON`` and writing it back with
``MarshalJSON`` in canonical form (k8s.io/apimachinery/pkg/api/resource/quantity.go;
https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/:
"1.5 will be serialized as '1500m', 1.5Gi will be serialized as '1536Mi'").
The registry-level behaviour is tested in tests/integration/apiserver/test_quantities.py.
"""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES
from mo_devkit.localcluster.apiserver.encoding import quantities
from mo_devkit.localcluster.apiserver.openapi.document import build_document

QUANTITY_SCHEMA = "io.k8s.apimachinery.pkg.api.resource.Quantity"


def pod(resources: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"cpu": "0.5"}},
        "spec": {"containers": [{"name": "c", "image": "i", "resources": resources}], **spec},
    }


def test_the_quantity_fields_of_a_pod() -> None:
    paths = quantities.quantity_paths("v1", "Pod")
    for expected in (
        "spec.containers[].resources.limits.*",
        "spec.containers[].resources.requests.*",
        "spec.initContainers[].resources.requests.*",
        "spec.overhead.*",
        "spec.volumes[].emptyDir.sizeLimit",
        "spec.containers[].env[].valueFrom.resourceFieldRef.divisor",
        "status.containerStatuses[].allocatedResources.*",
    ):
        assert expected in paths
    assert not any(p.startswith("metadata") for p in paths)
    assert quantities.quantity_paths("v1", "ConfigMap") == []
    assert "spec.volumeClaimTemplates[].spec.resources.requests.*" in quantities.quantity_paths(
        "apps/v1", "StatefulSet"
    )


@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("0.5", "500m"),
        ("1024Mi", "1Gi"),
        ("1.5Gi", "1536Mi"),
        ("0.1", "100m"),
        ("1000m", "1"),
        (" 2Gi ", "2Gi"),  # UnmarshalJSON trims spaces
        (2, "2"),
        (0.25, "250m"),
        ("12e6", "12e6"),
        ("500m", "500m"),
    ],
)
def test_values_are_rewritten_in_canonical_form(written: Any, stored: str) -> None:
    obj = pod({"limits": {"cpu": written}})
    out = quantities.canonicalize("v1", "Pod", obj)
    assert out["spec"]["containers"][0]["resources"]["limits"]["cpu"] == stored


def test_rewriting_copies_only_what_changes() -> None:
    """Stored objects are shared and never mutated: the input stays as it
    was, untouched parts are shared, and a canonical object comes back as is."""
    volumes = [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}]
    obj = pod({"requests": {"cpu": "0.5", "memory": "1Gi"}}, volumes=volumes)
    out = quantities.canonicalize("v1", "Pod", obj)
    assert obj["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "0.5", "memory": "1Gi"}
    assert out["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "1Gi"}
    assert out["metadata"] is obj["metadata"]
    assert out["metadata"]["labels"] == {"cpu": "0.5"}  # a label is not a quantity
    assert out["spec"]["volumes"] is volumes
    assert quantities.canonicalize("v1", "Pod", out) is out


def test_custom_and_unknown_kinds_are_left_alone() -> None:
    obj = {"apiVersion": "core.matrixorigin.io/v1alpha1", "kind": "CNSet", "spec": {"cpu": "0.5"}}
    assert quantities.canonicalize("core.matrixorigin.io/v1alpha1", "CNSet", obj) is obj
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"cpu": "0.5"}}
    assert quantities.canonicalize("v1", "ConfigMap", cm) is cm


@pytest.mark.parametrize("bad", ["lots", "1.2.3", "", True, {"a": 1}, "1Gb"])
def test_a_value_that_does_not_parse_names_its_field(bad: Any) -> None:
    with pytest.raises(quantities.QuantityError) as info:
        quantities.canonicalize("v1", "Pod", pod({"limits": {"memory": bad}}))
    assert info.value.path == "spec.containers[0].resources.limits[memory]"
    assert "quantit" in info.value.message


def test_nulls_and_wrong_shapes_are_left_to_validation() -> None:
    obj = pod({"limits": {"cpu": None}}, overhead="not a map", volumes=[{"name": "v", "emptyDir": None}])
    assert quantities.canonicalize("v1", "Pod", obj) is obj


def _openapi_quantity_paths(schemas: dict[str, Any], name: str) -> set[str]:
    out: set[str] = set()

    def walk(schema: dict[str, Any], path: str, seen: tuple[str, ...]) -> None:
        ref = schema.get("$ref", "")
        if ref:
            target = ref.rsplit("/", 1)[-1]
            if target == QUANTITY_SCHEMA:
                out.add(path)
                return
            if target in seen:
                return
            walk(schemas[target], path, (*seen, target))
            return
        for field, sub in (schema.get("properties") or {}).items():
            walk(sub, f"{path}.{field}" if path else field, seen)
        if isinstance(schema.get("items"), dict):
            walk(schema["items"], f"{path}[]", seen)
        if isinstance(schema.get("additionalProperties"), dict):
            walk(schema["additionalProperties"], f"{path}.*", seen)

    walk(schemas[name], "", (name,))
    return out


# An alpha field (DRA node-allocatable resources, feature gate off by default,
# so kube-apiserver drops it from pods) whose shape changed between the
# Kubernetes sources of the protobuf table (v0.37.0-beta.0) and lightkube's
# models of the release.
_ALPHA_DRIFT = {
    "status.nodeAllocatableResourceClaimStatuses[].mapping[].quantity",
    "status.nodeAllocatableResourceClaimStatuses[].overhead[].perContainer",
    "status.nodeAllocatableResourceClaimStatuses[].overhead[].perPod",
}


def test_the_table_covers_every_quantity_the_published_openapi_names() -> None:
    """Two sources of the field types agree: every Quantity in the OpenAPI
    document the server publishes (from lightkube's models) is canonicalized
    (the protobuf table may know newer fields lightkube's models lack). When
    this fails after a lightkube-models upgrade, regenerate the protobuf table
    (tools/gen_protobuf_schema.py) for the same Kubernetes release."""
    checked = 0
    for rt in BUILTIN_RESOURCE_TYPES:
        document = build_document(rt.group, rt.version, [rt])
        schemas = document["components"]["schemas"]
        name = next(
            n
            for n, s in schemas.items()
            if {"group": rt.group, "kind": rt.kind, "version": rt.version}
            in s.get("x-kubernetes-group-version-kind", [])
        )
        published = _openapi_quantity_paths(schemas, name) - _ALPHA_DRIFT
        assert published <= set(quantities.quantity_paths(rt.api_version, rt.kind)), rt.kind
        checked += len(published)
    assert checked > 50
