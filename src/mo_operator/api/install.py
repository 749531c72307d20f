"""Installing our CRDs through the API and waiting until they are served.

Used by the demo, the tests and ``mo-operator run --install-crds``; a Helm or
manifest install applies the same generated files (``deploy/crds``).
Server-side apply makes it idempotent and lets a newer operator update
schemas an older one installed.
"""

from __future__ import annotations

import asyncio

from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.conditions import is_true

from .crdgen import all_crds

CRDS = Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)


async def install_crds(client: ApiClient, *, timeout: float = 60.0) -> None:
    """Apply every CRD, then wait until each is Established (its kind is served)."""
    crds = all_crds()
    for crd in crds:
        await client.apply(crd, resource=CRDS, force=True)
    async with asyncio.timeout(timeout):
        for crd in crds:
            while True:
                stored = await client.get(CRDS, crd["metadata"]["name"])
                if is_true((stored.get("status") or {}).get("conditions"), "Established"):
                    break
                await asyncio.sleep(0.1)
