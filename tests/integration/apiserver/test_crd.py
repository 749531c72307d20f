"""Custom resources: a CRD is served once created, its structural schema
validates, defaults and prunes, and its subresources, printer columns, short
names and categories work
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/)."""

from __future__ import annotations

import asyncio
import json

from conftest import Kubectl

from .conftest import Raw

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {
            "plural": "widgets",
            "singular": "widget",
            "kind": "Widget",
            "shortNames": ["wd"],
            "categories": ["gadgets"],
        },
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {
                    "status": {},
                    "scale": {
                        "specReplicasPath": ".spec.replicas",
                        "statusReplicasPath": ".status.replicas",
                        "labelSelectorPath": ".status.selector",
                    },
                },
                "additionalPrinterColumns": [
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "description": "A widget.",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "description": "What the widget should be.",
                                "properties": {
                                    "replicas": {
                                        "type": "integer",
                                        "minimum": 0,
                                        "default": 1,
                                        "description": "How many.",
                                    },
                                    "size": {"type": "string", "enum": ["S", "M", "L"], "default": "M"},
                                    "memory": {
                                        "x-kubernetes-int-or-string": True,
                                        "pattern": "^[0-9]+(Mi|Gi)?$",
                                    },
                                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                    "groups": {
                                        "type": "array",
                                        "x-kubernetes-list-type": "map",
                                        "x-kubernetes-list-map-keys": ["name"],
                                        "items": {
                                            "type": "object",
                                            "required": ["name"],
                                            "properties": {
                                                "name": {"type": "string"},
                                                "n": {"type": "integer"},
                                            },
                                        },
                                    },
                                },
                                "required": ["replicas"],
                            },
                            "status": {
                                "type": "object",
                                "properties": {
                                    "replicas": {"type": "integer"},
                                    "phase": {"type": "string"},
                                    "selector": {"type": "string"},
                                },
                            },
                        },
                    }
                },
            }
        ],
    },
}


def widget(name: str, **spec: object) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": dict(spec)}


async def install(raw: Raw) -> None:
    code, body = await raw.post(CRDS, CRD)
    assert code == 201, body


async def test_a_crd_is_served_and_established_at_once(raw: Raw) -> None:
    await install(raw)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 1.0
    while True:
        code, rl = await raw.get("/apis/example.com/v1")
        if code == 200:
            break
        assert loop.time() < deadline, "the CRD must be in discovery within a second"
        await asyncio.sleep(0.05)
    names = {r["name"]: r for r in rl["resources"]}
    assert names["widgets"]["shortNames"] == ["wd"] and names["widgets"]["categories"] == ["gadgets"]
    assert {"widgets/status", "widgets/scale"} <= set(names)
    await asyncio.sleep(0.2)
    _, crd = await raw.get(f"{CRDS}/widgets.example.com")
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}


async def test_schema_validation_names_the_field(raw: Raw) -> None:
    await install(raw)
    code, err = await raw.post(WIDGETS, widget("bad", replicas=-1, size="XL"))
    assert code == 422
    fields = {c["field"] for c in err["details"]["causes"]}
    assert fields == {"spec.replicas", "spec.size"}
    assert "spec.replicas in body should be greater than or equal to 0" in err["message"]
    code, err = await raw.post(WIDGETS, widget("bad", replicas="three"))
    assert code == 422 and "must be of type integer" in err["message"]
    code, err = await raw.post(WIDGETS, widget("bad", replicas=1, memory="lots"))
    assert code == 422 and err["details"]["causes"][0]["field"] == "spec.memory"
    code, _ = await raw.post(WIDGETS, widget("ok", replicas=1, memory="512Mi"))
    assert code == 201


async def test_defaults_and_pruning(raw: Raw) -> None:
    await install(raw)
    body = widget("d", replicas=2, extra={"anything": {"goes": 1}})
    body["spec"]["unknown"] = "x"
    code, err = await raw.post(WIDGETS, body, params={"fieldValidation": "Strict"})
    assert code == 400 and 'unknown field "spec.unknown"' in err["message"]
    code, obj = await raw.post(WIDGETS, body, params={"fieldValidation": "Ignore"})
    assert code == 201
    assert obj["spec"] == {"replicas": 2, "size": "M", "extra": {"anything": {"goes": 1}}}


async def test_list_map_keys_must_be_unique(raw: Raw) -> None:
    await install(raw)
    code, err = await raw.post(WIDGETS, widget("g", replicas=1, groups=[{"name": "a"}, {"name": "a"}]))
    assert code == 422 and "Duplicate value" in err["message"]


async def test_status_and_scale_subresources(raw: Raw) -> None:
    await install(raw)
    _, w = await raw.post(WIDGETS, widget("s", replicas=1))
    assert w["metadata"]["generation"] == 1
    w["status"] = {"replicas": 1, "phase": "Running", "selector": "app=s"}
    _, w = await raw.put(f"{WIDGETS}/s/status", w)
    assert w["status"]["phase"] == "Running" and w["metadata"]["generation"] == 1
    code, scale = await raw.get(f"{WIDGETS}/s/scale")
    assert code == 200 and scale["spec"]["replicas"] == 1 and scale["status"]["selector"] == "app=s"
    await raw.patch(f"{WIDGETS}/s/scale", {"spec": {"replicas": 3}}, "application/merge-patch+json")
    _, w = await raw.get(f"{WIDGETS}/s")
    assert w["spec"]["replicas"] == 3 and w["metadata"]["generation"] == 2


async def test_strategic_merge_patch_is_refused_for_custom_resources(raw: Raw) -> None:
    await install(raw)
    await raw.post(WIDGETS, widget("p", replicas=1))
    code, err = await raw.patch(
        f"{WIDGETS}/p", {"spec": {"replicas": 2}}, "application/strategic-merge-patch+json"
    )
    assert code == 415 and err["reason"] == "UnsupportedMediaType"


async def test_non_structural_schema_is_rejected(raw: Raw) -> None:
    bad = json.loads(json.dumps(CRD))
    bad["metadata"]["name"] = "gizmos.example.com"
    bad["spec"]["names"] = {"plural": "gizmos", "kind": "Gizmo"}
    del bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    code, err = await raw.post(CRDS, bad)
    assert code == 422
    assert any("openAPIV3Schema" in c["field"] for c in err["details"]["causes"])


async def test_deleting_the_crd_deletes_its_objects_and_api(raw: Raw) -> None:
    await install(raw)
    await raw.post(WIDGETS, widget("x", replicas=1))
    await raw.delete(f"{CRDS}/widgets.example.com")
    for _ in range(100):
        code, _ = await raw.get(f"{CRDS}/widgets.example.com")
        if code == 404:
            break
        await asyncio.sleep(0.05)
    assert code == 404
    code, _ = await raw.get("/apis/example.com/v1")
    assert code == 404


async def test_kubectl_get_by_short_name_and_category_shows_printer_columns(
    raw: Raw, kubectl: Kubectl
) -> None:
    await install(raw)
    _, w = await raw.post(WIDGETS, widget("w1", replicas=2))
    w["status"] = {"phase": "Running"}
    await raw.put(f"{WIDGETS}/w1/status", w)
    out = await kubectl.run("get", "wd")
    header, row = out.stdout.strip().splitlines()
    assert header.split() == ["NAME", "REPLICAS", "PHASE", "AGE"]
    assert row.split()[:3] == ["w1", "2", "Running"]
    out = await kubectl.run("get", "gadgets")
    assert "w1" in out.stdout
    out = await kubectl.run("explain", "widgets.spec.replicas")
    assert "How many." in out.stdout


async def test_kubectl_prints_a_warning_that_quotes(raw: Raw, kubectl: Kubectl) -> None:
    """``unknown field "spec.colour"`` holds quotes: escaped in the header, kubectl
    prints it as kube-apiserver's would be printed."""
    await install(raw)
    manifest = json.dumps(widget("w2", replicas=1, colour="red"))
    out = await kubectl.run("create", "--validate=warn", "-f", "-", input=manifest)
    assert 'Warning: unknown field "spec.colour"' in out.stderr
    assert "widget.example.com/w2 created" in out.stdout
