"""Leaving a shared cluster as found: a scenario's (or a benchmark's) objects,
finalizers and namespaces removed, and its volumes released.

On the embedded control plane a scenario's cluster goes with it; on a real
one nothing of a test may stay behind, and an object whose finalizer nobody
removes keeps its namespace (and our CRDs) Terminating for the next run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import OUR_KINDS
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError
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


async def remove_our_objects(client: ApiClient, namespaces: Sequence[str], wait: float) -> None:
    """Delete every object of our kinds in ``namespaces`` (and the Backups made from them),
    give the operator ``wait`` seconds to finalize them (0: none runs), then take the
    finalizers off what is left."""
    namespaced = [res for res in OUR_KINDS if res.namespaced]

    async def left() -> list[tuple[Resource, Obj]]:
        return [
            (res, o) for ns in namespaces for res in namespaced for o in (await client.list(res, ns)).items
        ]

    async def backups() -> list[Obj]:
        return [b for ns in namespaces for b in await _backups_of(client, ns)]

    async def gone() -> bool:
        # Delete again what is not yet being deleted: a parent still finalizing can
        # make a child anew (a cluster its LogSet, a LogSet its BucketClaim).
        remaining, made = await left(), await backups()
        for res, obj in remaining:
            if not obj["metadata"].get("deletionTimestamp"):
                await client.delete(res, obj["metadata"]["name"], _namespace(obj), missing_ok=True)
        for obj in made:
            if not obj["metadata"].get("deletionTimestamp"):
                await client.delete(r.BACKUPS, obj["metadata"]["name"], missing_ok=True)
        return not remaining and not made

    if wait > 0:
        with contextlib.suppress(AssertionError):
            await eventually(gone, timeout=wait)
    else:
        await gone()
    for res, obj in await left():
        await drop_finalizers(client, res, obj, _namespace(obj))
    for obj in await backups():
        await drop_finalizers(client, r.BACKUPS, obj, None)


async def delete_namespaces(client: ApiClient, namespaces: Sequence[str], timeout: float = 60.0) -> None:
    """Delete ``namespaces`` and wait until they and their volumes are gone (their pods
    need the simulated kubelets, their volumes the simulated provisioner).

    The operator has stopped by then: the finalizers it puts on pods (a CN's drain)
    are taken off, or the pods, and so the namespaces, would never go. A pod already
    Terminating is then deleted at once, as ``kubectl delete --force`` would: on a
    cluster whose pods no kubelet runs (an API server alone, filled by a benchmark)
    its graceful deletion never ends."""
    for namespace in namespaces:
        await client.delete(NAMESPACES, namespace, missing_ok=True)

    async def gone() -> bool:
        left = [ns for ns in namespaces if await client.get_or_none(NAMESPACES, ns) is not None]
        for namespace in left:
            for pod in (await client.list(r.PODS, namespace)).items:
                await _force_out(client, pod, namespace)
        return not left

    await eventually(
        gone, timeout=timeout, interval=0.5, message=f"namespaces {list(namespaces)} are deleted"
    )

    async def released() -> bool:
        volumes = (await client.list(PERSISTENT_VOLUMES)).items
        return not [v for v in volumes if _claim_namespace(v) in namespaces]

    await eventually(released, timeout=timeout, message=f"the volumes of {list(namespaces)} are deleted")


async def _force_out(client: ApiClient, pod: Mapping[str, Any], namespace: str) -> None:
    """Our finalizers off a pod, and the pod deleted at once if it is already Terminating."""
    await drop_finalizers(client, r.PODS, pod, namespace, OUR_FINALIZERS)
    if pod["metadata"].get("deletionTimestamp"):
        with contextlib.suppress(ApiError):  # gone meanwhile
            await client.delete(r.PODS, pod["metadata"]["name"], namespace, grace_period_seconds=0)


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["namespace"])


def _claim_namespace(volume: Mapping[str, Any]) -> str | None:
    return ((volume.get("spec") or {}).get("claimRef") or {}).get("namespace")
