"""Which of a pod's volume claims are stranded: their volume is pinned to a node that is gone.

Local storage (a local PersistentVolume, or a provisioner that pins each volume to
the node it made it on) ties a claim to one node: its PV's ``nodeAffinity`` names
that node's ``kubernetes.io/hostname``, or, before a volume exists, the claim's
``volume.kubernetes.io/selected-node`` annotation names the node the scheduler chose.
When that node no longer exists, a pod using the claim can never be scheduled.

Only the lost stores' claims are looked at, and only while they are lost, so the
volumes and nodes are read by name from the API server (``get``) rather than kept in
a cache of every PV and Node of the cluster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import annotations_of, is_deleting, spec_of, uid_of

from ..common.resources import NODES, PERSISTENT_VOLUMES
from .failover import Claim

SELECTED_NODE = "volume.kubernetes.io/selected-node"
HOSTNAME = "kubernetes.io/hostname"

Lookup = Callable[[Resource, str], Awaitable[Mapping[str, Any] | None]]
"""Read one cluster-scoped object by name (None when it does not exist); raises
``LookupFailed`` when the answer is unknown."""


class LookupFailed(Exception):
    """The API server did not say whether the object exists (refused, unreachable)."""


ClaimOf = Callable[[str], Mapping[str, Any] | None]
"""The cached claim of this name in the pod's namespace."""


def claim_names(pod: Mapping[str, Any]) -> list[str]:
    volumes = spec_of(pod).get("volumes") or []
    return [
        str(v["persistentVolumeClaim"]["claimName"])
        for v in volumes
        if isinstance(v.get("persistentVolumeClaim"), Mapping) and v["persistentVolumeClaim"].get("claimName")
    ]


async def stranded_claims(pod: Mapping[str, Any], claim_of: ClaimOf, lookup: Lookup) -> tuple[Claim, ...]:
    """The pod's claims whose volume is pinned to a node that no longer exists."""
    found: list[Claim] = []
    for name in claim_names(pod):
        claim = claim_of(name)
        if claim is None or is_deleting(claim):
            continue
        try:
            node = await _pinned_to_gone_node(claim, lookup)
        except LookupFailed:
            continue  # unknown is not gone: a volume is never deleted on a guess
        if node is not None:
            found.append(Claim(name, uid_of(claim), node))
    return tuple(found)


async def _pinned_to_gone_node(claim: Mapping[str, Any], lookup: Lookup) -> str | None:
    volume = str(spec_of(claim).get("volumeName") or "")
    if volume:
        pv = await lookup(PERSISTENT_VOLUMES, volume)
        nodes = pinned_nodes(pv) if pv is not None else ()
    else:
        selected = annotations_of(claim).get(SELECTED_NODE)
        nodes = (str(selected),) if selected else ()
    if not nodes:
        return None
    for node in nodes:
        if await lookup(NODES, node) is not None:
            return None
    return nodes[0]


def pinned_nodes(pv: Mapping[str, Any]) -> tuple[str, ...]:
    """The nodes a volume may be used on, when its node affinity names them by hostname
    in every term (terms are alternatives); empty when it may be used elsewhere too."""
    affinity = spec_of(pv).get("nodeAffinity") or {}
    required = (affinity.get("required") or {}).get("nodeSelectorTerms") or []
    nodes: list[str] = []
    for term in required:
        names = [
            str(v)
            for e in term.get("matchExpressions") or []
            if e.get("key") == HOSTNAME and e.get("operator") == "In"
            for v in e.get("values") or []
        ]
        if not names:
            return ()
        nodes += [n for n in names if n not in nodes]
    return tuple(nodes)
