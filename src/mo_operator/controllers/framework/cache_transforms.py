"""What the operator's cache keeps of the kinds it only reads part of.

The cache is most of the operator's memory, and pods are most of the cache:
their containers, tolerations and scheduling fields are large, and no
controller reads them back. Pods are created (CN pods), or made by
StatefulSets and Deployments from templates we apply, and never compared
with a desired pod: a CN pod's template is compared by its template-hash
label. What controllers do read of a pod is its metadata, its status and,
of its spec, only the fields below; a controller that starts reading another
pod spec field adds it here (``tests/unit/controllers/test_cache_transforms.py``
checks the controllers' sources for reads of any other). Of a pod's status,
the addresses, start time, QoS class and container and image ids are
dropped: nothing reads them (the test checks that no source names them), and
they are what makes each pod's status its own; without them the container
statuses of pods that started in the same second are equal and stored once
(4,000 pods with their own ids and addresses: 18.0 MiB cached, 12.7 MiB
without them).

Services are compared with their desired rendering by the subset check of
``desired.py``, which looks only at the fields we set: a field the API server
assigns and we never set (the cluster IP of a Service that is not headless,
its IP families and policies) cannot make that check fail, so dropping it
changes no decision, and no controller reads one (the test renders every
kind of Service we make and checks none sets them).

ConfigMaps' data is the one part of them that is large and unique (config
files naming their cluster), and no controller reads it back: it is only
compared with its desired rendering. The cache keeps a ``TextDigest`` in
place of each value, equal to exactly the text it was made from, so the
subset check compares as it did (a value another writer changed still
differs) and 6,000 ConfigMaps cache 2.2 MiB less. A controller that starts
reading ConfigMap data from the cache must read it from the API instead (the
test lists the sources that read any ``data``: Secrets only).

PodDisruptionBudgets are kept without their status: the disruption controller
rewrites it as each pod comes and goes (healthy counts, disruptions allowed),
no controller reads it, and a change the cache does not keep wakes no owner
(``kube/controller/controller.py`` ``kept_changed``): about one reconcile of
the owning set per pod transition saved.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.cache.informer import Transform, keep_spec_fields, strip_managed_fields
from mo_operator.kube.client.resource import Resource

from . import resources as r

POD_SPEC_READ = ("volumes", "nodeName", "hostname", "subdomain")
"""Pod spec fields controllers read: mounted ConfigMaps, Secrets and claims; where it runs; its DNS name."""

POD_STATUS_UNREAD = ("podIP", "podIPs", "hostIP", "hostIPs", "startTime", "qosClass")
"""Pod status fields no controller reads."""

CONTAINER_STATUS_UNREAD = ("containerID", "imageID")
"""Fields of a pod's container statuses no controller reads."""

SERVICE_SPEC_ASSIGNED = (
    "clusterIPs",
    "ipFamilies",
    "ipFamilyPolicy",
    "internalTrafficPolicy",
    "sessionAffinity",
)
"""Service spec fields the API server fills in and the operator never sets."""

HEADLESS = "None"
"""The one ``clusterIP`` we set (headless Services): kept, any other value is the server's."""

Obj = dict[str, Any]


_pod_spec_read = keep_spec_fields(POD_SPEC_READ)


def _container_status(status: Any) -> Any:
    if not isinstance(status, dict) or CONTAINER_STATUS_UNREAD[0] not in status:
        return status
    return {k: v for k, v in status.items() if k not in CONTAINER_STATUS_UNREAD}


def pod_as_read(obj: Obj) -> Obj:
    """``obj`` (a Pod) with only the spec fields read and without the status fields nobody reads."""
    obj = _pod_spec_read(obj)
    status = obj.get("status")
    if not isinstance(status, dict):
        return obj
    kept = {k: v for k, v in status.items() if k not in POD_STATUS_UNREAD}
    for key in ("containerStatuses", "initContainerStatuses"):
        if isinstance(kept.get(key), list):
            kept[key] = [_container_status(c) for c in kept[key]]
    return {**obj, "status": kept}


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


class TextDigest:
    """What the cache keeps of a ConfigMap value: equal to the same text (or to a
    digest of it) and to nothing else, and not a ``str``, so that a reader
    expecting the text fails instead of reading a hash."""

    __slots__ = ("_digest",)

    def __init__(self, text: str) -> None:
        self._digest = _digest(text)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, TextDigest):
            return self._digest == other._digest
        if isinstance(other, str):
            return self._digest == _digest(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._digest)

    def __repr__(self) -> str:
        return f"TextDigest({self._digest.hex()})"


def config_map_as_compared(obj: Obj) -> Obj:
    """``obj`` (a ConfigMap) with a digest in place of each value of its ``data``."""
    obj = strip_managed_fields(obj)
    data = obj.get("data")
    if not isinstance(data, dict) or not data:
        return obj
    return {**obj, "data": {k: TextDigest(v) if isinstance(v, str) else v for k, v in data.items()}}


def without_assigned_service_fields(obj: Obj) -> Obj:
    """``obj`` (a Service) without the spec fields the server assigned and we never set."""
    obj = strip_managed_fields(obj)
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return obj
    kept = {
        k: v
        for k, v in spec.items()
        if k not in SERVICE_SPEC_ASSIGNED and (k != "clusterIP" or v == HEADLESS)
    }
    if len(kept) == len(spec):
        return obj
    return {**obj, "spec": kept}


def pdb_without_status(obj: Obj) -> Obj:
    """``obj`` (a PodDisruptionBudget) without its status, which no controller reads."""
    obj = strip_managed_fields(obj)
    return {k: v for k, v in obj.items() if k != "status"} if "status" in obj else obj


CACHE_TRANSFORMS: Mapping[Resource, Transform] = {
    r.PDBS: pdb_without_status,
    r.PODS: pod_as_read,
    r.SERVICES: without_assigned_service_fields,
    r.CONFIGMAPS: config_map_as_compared,
}
"""Per resource, the transform its informers apply before caching (others: the default)."""
