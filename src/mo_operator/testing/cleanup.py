"""Leaving a shared cluster as found: a scenario's objects, finalizers and
namespace removed, and its volumes released.

On the embedded control plane a scenario's cluster goes with it; on a real
one nothing of a test may stay behind, and an object whose finalizer nobody
removes keeps its namespace (and our CRDs) Terminating for the next run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.env import OUR_KINDS
from mo_operator.kube.client import ApiClient
from mo_operator.kube.errors import ApiError
from mo_operator.kube.resource import Resource
from mo_operator.matrixone.labels import NAMESPACE as NAMESPACE_LABEL

from .waiting import eventually

Obj = dict[str, Any]

NAMESPACES = Resource("", "v1", "Namespace", "namespaces", False)
PERSISTENT_VOLUMES = Resource("", "v1", "PersistentVolume", "persistentvolumes", False)
OUR_FINALIZERS = "matrixorigin.io/"
"""The prefix of the finalizers the operator puts on pods (and only it removes)."""


async def drop_finalizers(
    client: ApiClient, res: Resource, obj: Mapping[str, Any], namespace: str | None, prefix: str = ""
) -> None:
    """Take off the object's finalizers (those starting with ``prefix``)."""
    finalizers = list(obj["metadata"].get("finalizers") or ())
    kept = [f for f in finalizers if not f.startswith(prefix)]
    if kept != finalizers:
        patch = {"metadata": {"finalizers": kept or None}}
        with contextlib.suppress(ApiError):  # gone meanwhile
            await client.patch(res, obj["metadata"]["name"], patch, namespace)


async def _backups_of(client: ApiClient, namespace: str) -> list[Obj]:
    """The (cluster-scoped) Backups made from ``namespace``."""
    found = await client.list(r.BACKUPS, label_selector=f"{NAMESPACE_LABEL}={namespace}")
    return list(found.items)


async def remove_our_objects(client: ApiClient, namespace: str, wait: float) -> None:
    """Delete every object of our kinds in ``namespace`` (and the Backups made from it),
    give the operator ``wait`` seconds to finalize them, then take the finalizers off
    what is left."""
    namespaced = [res for res in OUR_KINDS if res.namespaced]

    async def left() -> list[tuple[Resource, Obj]]:
        return [(res, o) for res in namespaced for o in (await client.list(res, namespace)).items]

    async def gone() -> bool:
        # Delete again what is not yet being deleted: a parent still finalizing can
        # make a child anew (a cluster its LogSet, a LogSet its BucketClaim).
        remaining = await left()
        backups = await _backups_of(client, namespace)
        for res, obj in remaining:
            if not obj["metadata"].get("deletionTimestamp"):
                await client.delete(res, obj["metadata"]["name"], namespace, missing_ok=True)
        for obj in backups:
            if not obj["metadata"].get("deletionTimestamp"):
                await client.delete(r.BACKUPS, obj["metadata"]["name"], missing_ok=True)
        return not remaining and not backups

    with contextlib.suppress(AssertionError):
        await eventually(gone, timeout=wait)
    for res, obj in await left():
        await drop_finalizers(client, res, obj, namespace)
    for obj in await _backups_of(client, namespace):
        await drop_finalizers(client, r.BACKUPS, obj, None)


async def delete_namespace(client: ApiClient, namespace: str, timeout: float = 60.0) -> None:
    """Delete ``namespace`` and wait until it and its volumes are gone (its pods need the
    simulated kubelets, its volumes the simulated provisioner).

    The operator has stopped by then: the finalizers it puts on pods (a CN's drain)
    are taken off, or the pods, and so the namespace, would never go."""
    await client.delete(NAMESPACES, namespace, missing_ok=True)

    async def gone() -> bool:
        for pod in (await client.list(r.PODS, namespace)).items:
            await drop_finalizers(client, r.PODS, pod, namespace, OUR_FINALIZERS)
        return await client.get_or_none(NAMESPACES, namespace) is None

    await eventually(gone, timeout=timeout, message=f"namespace {namespace} is deleted")

    async def released() -> bool:
        volumes = (await client.list(PERSISTENT_VOLUMES)).items
        return not [v for v in volumes if _claim_namespace(v) == namespace]

    await eventually(released, timeout=timeout, message=f"the volumes of {namespace} are deleted")


def _claim_namespace(volume: Mapping[str, Any]) -> str | None:
    return ((volume.get("spec") or {}).get("claimRef") or {}).get("namespace")
