"""Which of a pod's volume claims are stranded: their volume is pinned to a place with no node left.

Local storage (a local PersistentVolume, or a provisioner that pins each volume to
the node it made it on) ties a claim to one node: its PV's ``nodeAffinity`` names
that node's ``kubernetes.io/hostname``, or, before a volume exists, the claim's
``volume.kubernetes.io/selected-node`` annotation names the node the scheduler chose.
When that node no longer exists, a pod using the claim can never be scheduled.

A zonal disk (a cloud block volume) ties a claim to a zone: its PV's node affinity
asks for ``topology.kubernetes.io/zone`` (and perhaps other node labels). When no
node matching any of its terms is left schedulable and Ready, the pod cannot run
either, until the zone comes back.

Only the lost stores' claims are looked at, and only while they are lost, so the
volumes and nodes are read from the API server (a ``get`` by name, a ``list`` of the
nodes a term selects by label, each at most once per reconcile) rather than kept in
a cache of every PV and Node of the cluster.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import annotations_of, is_deleting, spec_of, uid_of

from ..framework.resources import NODES, PERSISTENT_VOLUMES
from .failover import Claim

SELECTED_NODE = "volume.kubernetes.io/selected-node"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
SELECTOR_OPERATORS = {"In": "in", "NotIn": "notin"}

Lookup = Callable[[Resource, str], Awaitable[Mapping[str, Any] | None]]
"""Read one cluster-scoped object by name (None when it does not exist); raises
``LookupFailed`` when the answer is unknown."""


FindNode = Callable[[Mapping[str, Any]], Awaitable[bool]]
"""Whether a schedulable Ready node satisfies this node selector term (``has_node`` over
the nodes its ``label_selector`` lists); raises ``LookupFailed`` when the answer is unknown."""


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


async def stranded_claims(
    pod: Mapping[str, Any], claim_of: ClaimOf, lookup: Lookup, find_node: FindNode
) -> tuple[Claim, ...]:
    """The pod's claims whose volume is pinned to a node that no longer exists, or to
    a zone (node labels) where no schedulable Ready node is left."""
    found: list[Claim] = []
    for name in claim_names(pod):
        claim = claim_of(name)
        if claim is None or is_deleting(claim):
            continue
        try:
            lost = await _lost_place(claim, lookup, find_node)
        except LookupFailed:
            continue  # unknown is not gone: a volume is never deleted on a guess
        if lost is not None:
            found.append(Claim(name, uid_of(claim), *lost))
    return tuple(found)


async def _lost_place(
    claim: Mapping[str, Any], lookup: Lookup, find_node: FindNode
) -> tuple[str, str] | None:
    """``(node, "")`` when the claim's volume is pinned to a node that is gone, ``("", zone)``
    when it is pinned to node labels no schedulable Ready node has; None otherwise."""
    volume = str(spec_of(claim).get("volumeName") or "")
    terms: Sequence[Mapping[str, Any]] = ()
    if volume:
        pv = await lookup(PERSISTENT_VOLUMES, volume)
        if pv is None:
            return None
        nodes = pinned_nodes(pv)
        terms = () if nodes else node_terms(pv)
    else:
        selected = annotations_of(claim).get(SELECTED_NODE)
        nodes = (str(selected),) if selected else ()
    if nodes:
        for node in nodes:
            if await lookup(NODES, node) is not None:
                return None
        return nodes[0], ""
    if not terms or not all(label_selector(t) for t in terms):
        return None  # a term no label selects would mean listing every node: not judged
    for term in terms:
        if await find_node(term):
            return None
    return "", place(terms)


def node_terms(pv: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The PV's required node selector terms (alternatives)."""
    affinity = spec_of(pv).get("nodeAffinity") or {}
    terms = (affinity.get("required") or {}).get("nodeSelectorTerms") or []
    return [t for t in terms if isinstance(t, Mapping)]


def label_selector(term: Mapping[str, Any]) -> str:
    """The label selector the API server can apply for a term's label expressions (``Gt``
    and ``Lt``, and ``matchFields``, are checked on the nodes it returns)."""
    parts: list[str] = []
    for e in term.get("matchExpressions") or []:
        key, op, values = str(e.get("key")), str(e.get("operator")), [str(v) for v in e.get("values") or []]
        if op in SELECTOR_OPERATORS:
            parts.append(f"{key} {SELECTOR_OPERATORS[op]} ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def matches(term: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """The node satisfies every expression of the term (Kubernetes' ``NodeSelectorTerm``)."""
    meta = node.get("metadata") or {}
    node_labels = meta.get("labels") or {}
    fields = {"metadata.name": str(meta.get("name") or "")}
    return all(_holds(e, node_labels) for e in term.get("matchExpressions") or []) and all(
        _holds(e, fields) for e in term.get("matchFields") or []
    )


def _holds(expression: Mapping[str, Any], found: Mapping[str, Any]) -> bool:
    key, op = str(expression.get("key")), str(expression.get("operator"))
    values = [str(v) for v in expression.get("values") or []]
    value = found.get(key)
    if op == "In":
        return value is not None and str(value) in values
    if op == "NotIn":
        return value is None or str(value) not in values
    if op == "Exists":
        return value is not None
    if op == "DoesNotExist":
        return value is None
    if op in {"Gt", "Lt"} and value is not None and len(values) == 1:
        try:
            have, bound = int(str(value)), int(values[0])
        except ValueError:
            return False
        return have > bound if op == "Gt" else have < bound
    return False


def has_node(term: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> bool:
    """Some node of ``nodes`` satisfies the term and can take a pod now."""
    return any(usable(node) and matches(term, node) for node in nodes)


def usable(node: Mapping[str, Any]) -> bool:
    """A pod could be scheduled there now: not cordoned, and Ready."""
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def place(terms: Sequence[Mapping[str, Any]]) -> str:
    """What a person calls the place the terms pin a volume to: ``zone eu-1a`` when they
    name zones only, else the expressions themselves."""
    zones: list[str] = []
    for term in terms:
        expressions = term.get("matchExpressions") or []
        if term.get("matchFields") or len(expressions) != 1:
            break
        e = expressions[0]
        if e.get("key") != ZONE or e.get("operator") != "In":
            break
        zones += [str(v) for v in e.get("values") or [] if str(v) not in zones]
    else:
        if zones:
            return f"zone{'s' if len(zones) > 1 else ''} {', '.join(zones)}"
    return " or ".join(_describe(t) for t in terms)


def _describe(term: Mapping[str, Any]) -> str:
    said = [
        f"{e.get('key')} {e.get('operator')} {','.join(str(v) for v in e.get('values') or [])}".strip()
        for e in [*(term.get("matchExpressions") or []), *(term.get("matchFields") or [])]
    ]
    return f"nodes with {' and '.join(said)}"


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
