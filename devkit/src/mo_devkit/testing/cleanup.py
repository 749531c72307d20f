"""Leaving a shared cluster as found: a scenario's (or a benchmark's) objects,
finalizers and namespaces removed, and its volumes released.

On the embedded control plane a scenario's cluster goes with it; on a real
one nothing of a test may stay behind, and an object whose finalizer nobody
removes keeps its namespace (and our CRDs) Terminating for the next run.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import OUR_KINDS
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone.labels import NAMESPACE as NAMESPACE_LABEL

from .concurrency import bounded
from .waiting import Unmet, eventually

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
    """Delete ``namespaces`` and wait until they and their volumes are gone."""
    await start_deleting_namespaces(client, namespaces)
    await wait_namespaces_deleted(client, namespaces, timeout)


async def start_deleting_namespaces(client: ApiClient, namespaces: Sequence[str]) -> None:
    """Delete ``namespaces``, and what of theirs no controller finishes once the
    world's simulator stops: their pods are forced out, and the volumes bound to
    their claims are deleted (the PV protection controller lets each go once its
    claim has). The namespace controller does the rest, whether or not anyone waits.

    The operator has stopped by then: the finalizers it puts on pods (a CN's drain)
    are taken off, or the pods, and so the namespaces, would never go. A pod is then
    deleted at once, as ``kubectl delete --force`` would: its kubelet is simulated,
    and its graceful end would keep the namespace for the namespace controller's
    next pass (half the pods' grace period later). A namespace being deleted takes
    no new pod, and the volumes of its claims no new claim."""
    for namespace in namespaces:
        await client.delete(NAMESPACES, namespace, missing_ok=True)
    await _force_out_pods(client, namespaces)
    await _delete_volumes(client, await _volumes_of(client, namespaces))


async def wait_namespaces_deleted(client: ApiClient, namespaces: Sequence[str], timeout: float) -> None:
    """Wait until ``namespaces`` (being deleted) and the volumes bound to their claims are
    gone, forcing out what appeared since deletion started (a pod a workload controller
    made before it saw its namespace go, a volume provisioned for a claim meanwhile);
    fail naming what is left."""
    wanted = set(namespaces)

    async def gone() -> bool | Unmet:
        listed = (await client.list(NAMESPACES)).items
        left = sorted(n for n in (o["metadata"]["name"] for o in listed) if n in wanted)
        await _force_out_pods(client, left)
        volumes = await _volumes_of(client, namespaces)
        await _delete_volumes(client, volumes)
        if not left and not volumes:
            return True
        described = [f"{v['metadata']['name']} ({(v.get('status') or {}).get('phase')})" for v in volumes]
        return Unmet(f"namespaces {left} and volumes {described} left")

    await eventually(
        gone,
        timeout=timeout,
        interval=0.5,
        message=f"namespaces {sorted(wanted)} and their volumes are deleted",
    )


class PendingDeletions:
    """The namespaces a test session deleted without waiting, checked once at its end:
    a world on a shared cluster starts deleting its own (``start_deleting_namespaces``)
    and hands them here, so that no test waits on the namespace controller's pace,
    and the session fails if any of them, or a volume bound to their claims, stays.

    A later test never sees them: each world's namespaces are named apart."""

    def __init__(self) -> None:
        self.namespaces: list[str] = []
        self.made: dict[tuple[str, str], Resource] = {}
        """Cluster-scoped objects the session made that the cluster did not have, by kind
        and name: removed once its namespaces are gone (a Kruise CRD its tests installed,
        the simulator's rules namespace)."""

    async def start(self, client: ApiClient, namespaces: Sequence[str]) -> None:
        await start_deleting_namespaces(client, namespaces)
        self.namespaces += namespaces

    def made_by_session(self, resource: Resource, name: str) -> None:
        """``name`` did not exist before the session made it: it goes at the session's end."""
        self.made[(resource.kind, name)] = resource

    async def finish(self, client: ApiClient, timeout: float = 60.0) -> None:
        """Wait until all are gone (they need no simulator: see ``start_deleting_namespaces``),
        then remove what the session made and wait for that too. The namespace controller
        has worked on most since their tests ended: ``timeout`` is what the last ones may take."""
        await wait_namespaces_deleted(client, self.namespaces, timeout)
        for (_, name), resource in self.made.items():
            await client.delete(resource, name, missing_ok=True)

        async def gone() -> bool:
            return all([await client.get_or_none(res, name) is None for (_, name), res in self.made.items()])

        made = [f"{kind} {name}" for kind, name in self.made]
        await eventually(gone, timeout=timeout, message=f"what the session made is removed: {made}")


async def _force_out_pods(client: ApiClient, namespaces: Sequence[str]) -> None:
    """Our finalizers off the pods of ``namespaces`` (being deleted), and the pods deleted
    at once, 16 at a time (the largest scenario leaves hundreds)."""

    async def force_out(pod: Obj, namespace: str) -> None:
        await drop_finalizers(client, r.PODS, pod, namespace, OUR_FINALIZERS)
        with contextlib.suppress(ApiError):  # gone meanwhile
            await client.delete(r.PODS, pod["metadata"]["name"], namespace, grace_period_seconds=0)

    pods = [(p, ns) for ns in namespaces for p in (await client.list(r.PODS, ns)).items]
    await bounded(16, [functools.partial(force_out, p, ns) for p, ns in pods])


async def _volumes_of(client: ApiClient, namespaces: Sequence[str]) -> list[Obj]:
    """The volumes bound to claims of ``namespaces``."""
    volumes, wanted = (await client.list(PERSISTENT_VOLUMES)).items, set(namespaces)
    return [v for v in volumes if _claim_namespace(v) in wanted]


async def _delete_volumes(client: ApiClient, volumes: Sequence[Mapping[str, Any]]) -> None:
    for volume in volumes:
        if not volume["metadata"].get("deletionTimestamp"):
            await client.delete(PERSISTENT_VOLUMES, volume["metadata"]["name"], missing_ok=True)


def _namespace(obj: Mapping[str, Any]) -> str:
    return str(obj["metadata"]["namespace"])


def _claim_namespace(volume: Mapping[str, Any]) -> str | None:
    return ((volume.get("spec") or {}).get("claimRef") or {}).get("namespace")
