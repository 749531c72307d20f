"""A CustomResourceDefinition of a case's own, shared by the modules that
need one: the custom resource cases, and the cases that need a resource
whose watch cache on the real server starts now (a fresh CRD's), so that an
old resourceVersion is reliably too old there."""

from __future__ import annotations

from typing import Any

from .harness import Target

Obj = dict[str, Any]


SCHEMA: Obj = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 1, "maximum": 10},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "slow"},
                "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 8},
                "replicas": {"type": "integer", "default": 1},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "limits": {"type": "object", "additionalProperties": {"type": "string"}},
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"depth": {"type": "integer", "default": 3}},
                },
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                "ready": {"type": "integer"},
                "selector": {"type": "string"},
                "phase": {"type": "string"},
            },
        },
    },
}


def crd(t: Target, *, scope: str = "Namespaced") -> tuple[Obj, str]:
    """A CRD of the case's own group (the real cluster is shared), and the
    URL path of its instances in the case's namespace."""
    group = f"{t.tag}.diff.example.com"
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": SCHEMA},
                    "subresources": {
                        "status": {},
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.ready",
                            "labelSelectorPath": ".status.selector",
                        },
                    },
                    "additionalPrinterColumns": [
                        {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                        {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "priority": 1},
                        {
                            "name": "Phase",
                            "type": "string",
                            "jsonPath": ".status.phase",
                            "description": "where it is",
                        },
                    ],
                }
            ],
        },
    }
    return body, f"/apis/{group}/v1/namespaces/{t.ns}/widgets"


def widget(t: Target, name: str, spec: Obj) -> Obj:
    return {
        "apiVersion": f"{t.tag}.diff.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name},
        "spec": spec,
    }


async def install(t: Target) -> tuple[Obj, str]:
    """Create the CRD and wait until its instances are served; the created
    CRD is returned as the server answered."""
    body, path = crd(t)
    created = await t.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
    assert created.code == 201, created
    t.cleanup.append(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{body['metadata']['name']}")

    async def served() -> bool:
        return (await t.get(path)).code == 200

    await t.wait_for(served, "the custom resource is served")
    return created.body, path
