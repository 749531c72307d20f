"""The shape of the ``/openapi/v3`` documents, checked against what
kube-apiserver serves and kubectl reads:

* the index maps ``api/v1`` / ``apis/<group>/<version>`` to
  ``{"serverRelativeURL": "/openapi/v3/...?hash=<HASH>"}`` (client-go
  ``openapi/client.go``);
* schemas are named as kube-openapi names them, refs point into
  ``#/components/schemas``, kinds carry ``x-kubernetes-group-version-kind``;
* a kind's operations carry its GVK, and its PATCH operation a
  ``fieldValidation`` query parameter (cli-runtime
  ``query_param_verifier_v3.go``);
* a CRD's schema is published as apiextensions-apiserver's
  ``pkg/controller/openapi/builder/builder.go`` builds it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES
from mo_devkit.localcluster.apiserver.openapi.document import (
    build_document,
    custom_schema_name,
    openapi_document,
    openapi_index,
    openapi_v2,
)
from mo_devkit.localcluster.apiserver.openapi.models import parse_docstring
from mo_devkit.localcluster.apiserver.registry import resource_types_of_crd

REF = "#/components/schemas/"

WIDGET_SCHEMA = {
    "type": "object",
    "description": "A Widget.",
    "properties": {
        "spec": {
            "type": "object",
            "description": "Desired widget.",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "description": "How big."},
                "port": {"x-kubernetes-int-or-string": True},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "x-kubernetes-preserve-unknown-fields": True,
                },
            },
        }
    },
}


def crd(schema: dict[str, Any] | None = WIDGET_SCHEMA, **version: Any) -> dict[str, Any]:
    v: dict[str, Any] = {"name": "v1alpha1", "served": True, "storage": True, **version}
    if schema is not None:
        v["schema"] = {"openAPIV3Schema": schema}
    return {
        "metadata": {"name": "widgets.things.example.com"},
        "spec": {
            "group": "things.example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [v],
        },
    }


def refs(node: Any) -> Iterator[str]:
    """Every ``$ref`` (JSONSchemaProps also has a *property* named ``$ref``)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                yield v
            else:
                yield from refs(v)
    elif isinstance(node, list):
        for v in node:
            yield from refs(v)


def test_index_lists_every_group_version_with_a_content_hash() -> None:
    index = openapi_index(BUILTIN_RESOURCE_TYPES)
    expected = {f"apis/{rt.group}/{rt.version}" if rt.group else "api/v1" for rt in BUILTIN_RESOURCE_TYPES}
    assert set(index["paths"]) == expected
    for key, entry in index["paths"].items():
        assert re.fullmatch(
            rf"/openapi/v3/{re.escape(key)}\?hash=[0-9A-F]{{128}}", entry["serverRelativeURL"]
        )


def test_hash_follows_the_content() -> None:
    types = [*BUILTIN_RESOURCE_TYPES, *resource_types_of_crd(crd())]
    changed_schema = {**WIDGET_SCHEMA, "description": "Another widget."}
    changed = [*BUILTIN_RESOURCE_TYPES, *resource_types_of_crd(crd(changed_schema))]
    key = "apis/things.example.com/v1alpha1"
    first = openapi_index(types)["paths"]
    assert openapi_index(types)["paths"] == first
    assert openapi_index(changed)["paths"][key] != first[key]
    assert openapi_index(changed)["paths"]["api/v1"] == first["api/v1"]


def test_documents_are_built_once_per_set_of_types() -> None:
    types = [*BUILTIN_RESOURCE_TYPES, *resource_types_of_crd(crd())]
    assert openapi_document("apps", "v1", types) is openapi_document("apps", "v1", list(types))


def test_unknown_group_version_has_no_document() -> None:
    assert openapi_document("apps", "v2", BUILTIN_RESOURCE_TYPES) is None
    assert openapi_document("nothing.example.com", "v1", BUILTIN_RESOURCE_TYPES) is None


@pytest.mark.parametrize(
    ("group", "version"), sorted({(rt.group, rt.version) for rt in BUILTIN_RESOURCE_TYPES})
)
def test_every_ref_resolves(group: str, version: str) -> None:
    doc = openapi_document(group, version, BUILTIN_RESOURCE_TYPES)
    assert doc is not None
    schemas = doc["components"]["schemas"]
    for ref in refs(doc):
        assert ref.startswith(REF)
        assert ref.removeprefix(REF) in schemas, ref


@pytest.mark.parametrize("rt", BUILTIN_RESOURCE_TYPES, ids=lambda rt: f"{rt.api_version}/{rt.kind}")
def test_kubectl_finds_each_kind_and_its_field_validation(rt: Any) -> None:
    doc = openapi_document(rt.group, rt.version, BUILTIN_RESOURCE_TYPES)
    assert doc is not None
    gvk = {"group": rt.group, "kind": rt.kind, "version": rt.version}
    prefix = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    collection = (
        f"{prefix}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{prefix}/{rt.plural}"
    )
    assert doc["paths"][collection]["get"]["x-kubernetes-group-version-kind"] == gvk
    patch = doc["paths"][collection + "/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == gvk
    assert {"fieldValidation", "fieldManager", "dryRun", "force"} <= {
        p["name"] for p in patch["parameters"] if p["in"] == "query"
    }
    # Strategic merge patch is left to kubectl's own types (see openapi_paths).
    assert set(patch["requestBody"]["content"]) == {
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    }
    kinds = [
        s
        for s in doc["components"]["schemas"].values()
        if gvk in s.get("x-kubernetes-group-version-kind", [])
    ]
    assert len(kinds) == 1
    assert (
        kinds[0]["properties"]["metadata"]["$ref"] == REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )


def test_subresource_paths() -> None:
    doc = openapi_document("apps", "v1", BUILTIN_RESOURCE_TYPES)
    assert doc is not None
    base = "/apis/apps/v1/namespaces/{namespace}/statefulsets/{name}"
    assert set(doc["paths"][base + "/status"]) >= {"get", "put", "patch"}
    scale = doc["paths"][base + "/scale"]["patch"]
    assert scale["x-kubernetes-group-version-kind"] == {
        "group": "autoscaling",
        "kind": "Scale",
        "version": "v1",
    }
    assert "io.k8s.api.autoscaling.v1.Scale" in doc["components"]["schemas"]
    assert "/apis/apps/v1/namespaces/{namespace}/controllerrevisions/{name}/status" not in doc["paths"]
    assert set(doc["paths"]["/apis/apps/v1/statefulsets"]) == {"get", "parameters"}  # list across namespaces


def test_builtin_schemas_carry_lightkube_descriptions_and_types() -> None:
    doc = openapi_document("", "v1", BUILTIN_RESOURCE_TYPES)
    assert doc is not None
    schemas = doc["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["description"].startswith("Pod is a collection of containers")
    assert pod["properties"]["spec"]["$ref"] == REF + "io.k8s.api.core.v1.PodSpec"
    container = schemas["io.k8s.api.core.v1.Container"]
    assert container["required"] == ["name"]
    assert container["properties"]["ports"]["type"] == "array"
    assert container["properties"]["ports"]["items"] == {"$ref": REF + "io.k8s.api.core.v1.ContainerPort"}
    assert "Cannot be updated" in container["properties"]["command"]["description"]
    limits = schemas["io.k8s.api.core.v1.ResourceRequirements"]["properties"]["limits"]
    assert limits["additionalProperties"] == {"$ref": REF + "io.k8s.apimachinery.pkg.api.resource.Quantity"}
    labels = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["labels"]
    assert labels["additionalProperties"] == {"type": "string"}
    port = schemas["io.k8s.api.core.v1.ServicePort"]["properties"]["targetPort"]
    assert port["$ref"] == REF + "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    created = schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]["creationTimestamp"]
    assert schemas[created["$ref"].removeprefix(REF)]["format"] == "date-time"
    assert schemas["io.k8s.api.core.v1.PodList"]["x-kubernetes-group-version-kind"][0]["kind"] == "PodList"


def test_crd_schema_named_by_reversed_group_with_object_meta() -> None:
    rt = resource_types_of_crd(crd())[0]
    doc = build_document(rt.group, rt.version, [rt])
    schemas = doc["components"]["schemas"]
    name = custom_schema_name("things.example.com", "v1alpha1", "Widget")
    assert name == "com.example.things.v1alpha1.Widget"
    widget = schemas[name]
    assert widget["x-kubernetes-group-version-kind"] == [
        {"group": "things.example.com", "kind": "Widget", "version": "v1alpha1"}
    ]
    assert widget["description"] == "A Widget."
    assert widget["properties"]["spec"]["properties"]["size"]["description"] == "How big."
    assert widget["properties"]["metadata"]["$ref"] == REF + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    assert widget["properties"]["apiVersion"]["type"] == "string"
    assert "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" in schemas
    listing = schemas["com.example.things.v1alpha1.WidgetList"]
    assert listing["properties"]["items"]["items"] == {"$ref": REF + name}
    assert listing["required"] == ["items"]
    for ref in refs(doc):
        assert ref.removeprefix(REF) in schemas
    assert rt.schema is not None and "metadata" not in rt.schema["properties"]  # the CRD is left alone


def test_crd_schema_is_unfolded_as_published() -> None:
    """``x-kubernetes-int-or-string`` gains its anyOf, and embedded resources
    their type and object meta (apiextensions-apiserver ``schema/unfold.go``,
    builder ``addEmbeddedProperties``)."""
    rt = resource_types_of_crd(crd())[0]
    spec = build_document(rt.group, rt.version, [rt])["components"]["schemas"][
        "com.example.things.v1alpha1.Widget"
    ]["properties"]["spec"]["properties"]
    assert spec["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]
    assert set(spec["template"]["properties"]) == {"apiVersion", "kind", "metadata"}
    assert spec["template"]["required"] == ["kind", "apiVersion"]


def test_crd_without_schema_is_a_bare_object() -> None:
    rt = resource_types_of_crd(crd(schema=None))[0]
    widget = build_document(rt.group, rt.version, [rt])["components"]["schemas"][
        "com.example.things.v1alpha1.Widget"
    ]
    assert widget == {
        "type": "object",
        "x-kubernetes-group-version-kind": [dict(group=rt.group, kind="Widget", version="v1alpha1")],
    }


def test_crd_subresources_and_scope() -> None:
    rt = resource_types_of_crd(
        crd(
            subresources={
                "status": {},
                "scale": {"specReplicasPath": ".spec.size", "statusReplicasPath": ".status.size"},
            }
        )
    )[0]
    paths = build_document(rt.group, rt.version, [rt])["paths"]
    base = "/apis/things.example.com/v1alpha1/namespaces/{namespace}/widgets"
    assert set(paths) == {
        "/apis/things.example.com/v1alpha1/widgets",
        base,
        base + "/{name}",
        base + "/{name}/status",
        base + "/{name}/scale",
    }
    cluster = dataclasses.replace(rt, namespaced=False, status_subresource=False, scale=None)
    assert set(build_document(rt.group, rt.version, [cluster])["paths"]) == {
        "/apis/things.example.com/v1alpha1/widgets",
        "/apis/things.example.com/v1alpha1/widgets/{name}",
    }


def test_openapi_v2_is_an_empty_document() -> None:
    """kubectl asks for protobuf; an empty message is an empty Document."""
    body, content_type = openapi_v2("application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert (body, content_type) == (b"", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    body, content_type = openapi_v2("application/json")
    assert content_type == "application/json" and b'"swagger": "2.0"' in body


def test_parse_docstring() -> None:
    doc = """Thing is a test type. It spans
      two lines.

      **parameters**

      * **name** ``str`` - The name. It wraps
        onto the next line.
      * **d_ref** ``Optional[str]`` -
      * **count** ``Optional[int]`` - How many.
    """
    description, fields = parse_docstring(doc)
    assert description == "Thing is a test type. It spans two lines."
    assert fields == {"name": "The name. It wraps onto the next line.", "d_ref": "", "count": "How many."}
