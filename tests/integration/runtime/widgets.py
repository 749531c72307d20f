"""A small custom resource with a status subresource, for the tests of the
Actor framework's writes (ConfigMaps have no ``/status``)."""

from __future__ import annotations

import asyncio
from typing import Any

from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError

WIDGETS = Resource("example.com", "v1", "Widget", "widgets", True)
CRDS = Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.example.com"},
    "spec": {
        "group": "example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                },
            }
        ],
    },
}


async def install_widget_crd(client: ApiClient) -> None:
    await client.create(CRDS, CRD)
    for _ in range(100):
        try:
            await client.list_page(WIDGETS, "default", limit=1)
            return
        except ApiError as e:
            if e.status != 404:
                raise
        await asyncio.sleep(0.05)
    raise AssertionError("the Widget CRD was not served")


def widget(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
