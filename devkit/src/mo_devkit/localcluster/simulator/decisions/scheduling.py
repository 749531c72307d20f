"""kube-scheduler's decision for one pod: the default plugins' filters
(NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
NodeResourcesFit, VolumeBinding, InterPodAffinity), a simple score, and the
``FitError`` message the real scheduler writes when no node fits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.objects import (
    Obj,
    controller_ref,
    is_deleting,
    labels_of,
    name_of,
    namespace_of,
    spec_of,
    status_of,
)
from ..core.pods import Resources, is_terminal, node_allocatable, node_name_of, pod_requests, pvc_claim_names
from ..core.selectors import (
    map_selector_matches,
    node_selector_matches,
    selector_matches,
    toleration_tolerates,
)

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
VOLUME_NODE_CONFLICT = "node(s) had volume node affinity conflict"
POD_AFFINITY = "node(s) didn't match pod affinity rules"
POD_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
#: Failures preemption could never cure (framework.UnschedulableAndUnresolvable).
_UNRESOLVABLE_PREFIXES = ("node(s) ",)


@dataclass(frozen=True)
class Placement:
    """Where a pod goes, or why it cannot go anywhere."""

    node: str | None
    message: str = ""
    #: PVCs to annotate with ``volume.kubernetes.io/selected-node`` before
    #: binding (WaitForFirstConsumer claims, the VolumeBinding PreBind step).
    select_claims: tuple[str, ...] = ()
    #: The pod must wait (claims being provisioned); not unschedulable.
    wait: bool = False


@dataclass(frozen=True)
class ClusterState:
    """What the scheduler's cache holds: nodes and the pods bound to them."""

    nodes: Sequence[Obj]
    pods_by_node: Mapping[str, Sequence[Obj]]
    #: Claims in the pod's namespace, by name.
    claims: Mapping[str, Obj] = field(default_factory=dict)
    #: PersistentVolumes by name and StorageClasses by name.
    volumes: Mapping[str, Obj] = field(default_factory=dict)
    storage_classes: Mapping[str, Obj] = field(default_factory=dict)
    #: Namespace labels, for affinity terms with a namespaceSelector.
    namespace_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)


def _taint_failure(pod: Obj, node: Obj) -> str | None:
    tolerations = spec_of(pod).get("tolerations") or []
    for taint in spec_of(node).get("taints") or []:
        if taint.get("effect") not in ("NoSchedule", "NoExecute"):
            continue
        if not any(toleration_tolerates(t, taint) for t in tolerations):
            return f"node(s) had untolerated taint {{{taint.get('key', '')}: {taint.get('value', '')}}}"
    return None


def _node_affinity_ok(pod: Obj, node: Obj) -> bool:
    spec = spec_of(pod)
    if not map_selector_matches(spec.get("nodeSelector"), labels_of(node)):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    return required is None or node_selector_matches(required, node)


def _host_ports(pod: Obj) -> set[tuple[str, str, int]]:
    out = set()
    for c in spec_of(pod).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.add((p.get("hostIP") or "0.0.0.0", p.get("protocol") or "TCP", int(p["hostPort"])))
    return out


def _ports_ok(pod: Obj, others: Sequence[Obj]) -> bool:
    want = _host_ports(pod)
    if not want:
        return True
    used = set().union(*(_host_ports(o) for o in others)) if others else set()
    for ip, proto, port in want:
        for uip, uproto, uport in used:
            if port == uport and proto == uproto and (ip == uip or "0.0.0.0" in (ip, uip)):
                return False
    return True


def _resource_failures(pod: Obj, node: Obj, others: Sequence[Obj]) -> list[str]:
    want = pod_requests(pod)
    used = Resources()
    for o in others:
        used = used + pod_requests(o)
    free = node_allocatable(node) - used
    out = []
    if free.pods < 1:
        out.append("Too many pods")
    if want.milli_cpu > free.milli_cpu:
        out.append("Insufficient cpu")
    if want.memory > free.memory:
        out.append("Insufficient memory")
    return out


def _term_namespaces(term: Mapping[str, Any], pod: Obj, state: ClusterState) -> set[str] | None:
    """The namespaces an affinity term covers; None means all of them."""
    names = set(term.get("namespaces") or [])
    ns_sel = term.get("namespaceSelector")
    if ns_sel is not None:
        if not ns_sel.get("matchLabels") and not ns_sel.get("matchExpressions"):
            return None
        names |= {ns for ns, lbl in state.namespace_labels.items() if selector_matches(ns_sel, lbl)}
    elif not names:
        names = {namespace_of(pod)}
    return names


def _term_matches(term: Mapping[str, Any], owner: Obj, other: Obj, state: ClusterState) -> bool:
    nss = _term_namespaces(term, owner, state)
    if nss is not None and namespace_of(other) not in nss:
        return False
    return selector_matches(term.get("labelSelector"), labels_of(other))


def _required_terms(pod: Obj, kind: str) -> list[Mapping[str, Any]]:
    aff = (spec_of(pod).get("affinity") or {}).get(kind) or {}
    return list(aff.get("requiredDuringSchedulingIgnoredDuringExecution") or [])


def _domain(node: Obj | None, key: str) -> str | None:
    return labels_of(node).get(key) if node is not None else None


def _affinity_failure(
    pod: Obj, node: Obj, state: ClusterState, nodes_by_name: Mapping[str, Obj]
) -> str | None:
    placed = [(o, nodes_by_name.get(n)) for n, ps in state.pods_by_node.items() for o in ps]
    # The incoming pod's anti-affinity.
    for term in _required_terms(pod, "podAntiAffinity"):
        key = term.get("topologyKey", "")
        here = _domain(node, key)
        if here is None:
            continue
        if any(_domain(n, key) == here and _term_matches(term, pod, o, state) for o, n in placed):
            return POD_ANTI_AFFINITY
    # Existing pods' anti-affinity against the incoming pod (symmetry).
    for o, n in placed:
        for term in _required_terms(o, "podAntiAffinity"):
            key = term.get("topologyKey", "")
            here = _domain(node, key)
            if here is not None and _domain(n, key) == here and _term_matches(term, o, pod, state):
                return EXISTING_ANTI_AFFINITY
    # The incoming pod's affinity.
    for term in _required_terms(pod, "podAffinity"):
        key = term.get("topologyKey", "")
        matching = [(o, n) for o, n in placed if _term_matches(term, pod, o, state)]
        if not matching:
            # The first pod of a group may match its own term (InterPodAffinity PreFilter).
            if _term_matches(term, pod, pod, state) and _domain(node, key) is not None:
                continue
            return POD_AFFINITY
        here = _domain(node, key)
        if here is None or not any(_domain(n, key) == here for _, n in matching):
            return POD_AFFINITY
    return None


def _bound(claim: Obj) -> bool:
    """The claim names its volume and reports Bound. kube-scheduler asks only for
    the volume name and bind-completed, but it looks again after a second (its
    PreBind poll, an unschedulable pod's back-off) and so always finds the
    claim's Bound status written by then; waiting for it keeps that order here."""
    return bool(spec_of(claim).get("volumeName")) and status_of(claim).get("phase") == "Bound"


def _claims_prefilter(pod: Obj, state: ClusterState) -> tuple[str | None, list[Obj]]:
    """VolumeBinding PreFilter: every claim exists, is not being deleted, and
    immediate claims are bound. Returns the failure and the claims."""
    claims = []
    for cname in pvc_claim_names(pod):
        claim = state.claims.get(cname)
        if claim is None:
            return f'persistentvolumeclaim "{cname}" not found', []
        if is_deleting(claim):
            return f'persistentvolumeclaim "{cname}" is being deleted', []
        claims.append(claim)
    for claim in claims:
        if _bound(claim):
            continue
        sc = state.storage_classes.get(spec_of(claim).get("storageClassName") or "")
        if sc is None or sc.get("volumeBindingMode", "Immediate") != "WaitForFirstConsumer":
            return "pod has unbound immediate PersistentVolumeClaims", []
    return None, claims


def _volume_node_ok(claims: list[Obj], node: Obj, state: ClusterState) -> bool:
    for claim in claims:
        pv = state.volumes.get(spec_of(claim).get("volumeName") or "")
        if pv is None:
            selected = ((claim.get("metadata") or {}).get("annotations") or {}).get(
                "volume.kubernetes.io/selected-node"
            )
            if selected and selected != name_of(node):
                return False
            continue
        required = (spec_of(pv).get("nodeAffinity") or {}).get("required")
        if required and not node_selector_matches(required, node):
            return False
    return True


def _fit_error(total: int, prefilter: str | None, reasons: Mapping[str, int], unresolvable: int) -> str:
    msg = f"0/{total} nodes are available:"
    if prefilter:
        msg += f" {prefilter}."
    elif reasons:
        msg += " " + ", ".join(sorted(f"{v} {k}" for k, v in reasons.items())) + "."
    parts = []
    if unresolvable:
        parts.append(f"{unresolvable} Preemption is not helpful for scheduling")
    if total - unresolvable:
        parts.append(f"{total - unresolvable} No preemption victims found for incoming pod")
    return msg + f" preemption: 0/{total} nodes are available: {', '.join(sorted(parts))}.."


def _score(pod: Obj, node: Obj, others: Sequence[Obj]) -> tuple[float, int, str]:
    """Lower is better: pods of the same controller on the node (spreading),
    then the share of cpu and memory requested (LeastAllocated)."""
    ref = controller_ref(pod)
    siblings = sum(
        1 for o in others if ref is not None and (controller_ref(o) or {}).get("uid") == ref.get("uid")
    )
    alloc = node_allocatable(node)
    used = pod_requests(pod)
    for o in others:
        used = used + pod_requests(o)
    share = (used.milli_cpu / alloc.milli_cpu if alloc.milli_cpu else 1) + (
        used.memory / alloc.memory if alloc.memory else 1
    )
    return (siblings + share / 2, len(others), name_of(node))


def schedule(pod: Obj, state: ClusterState) -> Placement:
    """Pick a node for an unbound pod, as the default profile would."""
    nodes = list(state.nodes)
    if not nodes:
        return Placement(None, "no nodes available to schedule pods")
    by_name = {name_of(n): n for n in nodes}
    prefilter, claims = _claims_prefilter(pod, state)
    if prefilter is not None:
        return Placement(None, _fit_error(len(nodes), prefilter, {}, len(nodes)))
    reasons: dict[str, int] = {}
    unresolvable = 0
    feasible: list[Obj] = []
    for node in nodes:
        others = [o for o in state.pods_by_node.get(name_of(node), ()) if not is_terminal(o)]
        failures: list[str] = []
        if spec_of(node).get("unschedulable"):
            failures = [UNSCHEDULABLE]
        elif (t := _taint_failure(pod, node)) is not None:
            failures = [t]
        elif not _node_affinity_ok(pod, node):
            failures = [NODE_AFFINITY]
        elif not _ports_ok(pod, others):
            failures = [NODE_PORTS]
        elif res := _resource_failures(pod, node, others):
            failures = res
        elif not _volume_node_ok(claims, node, state):
            failures = [VOLUME_NODE_CONFLICT]
        elif (a := _affinity_failure(pod, node, state, by_name)) is not None:
            failures = [a]
        if not failures:
            feasible.append(node)
            continue
        for f in failures:
            reasons[f] = reasons.get(f, 0) + 1
        if any(f.startswith(_UNRESOLVABLE_PREFIXES) for f in failures):
            unresolvable += 1
    if not feasible:
        return Placement(None, _fit_error(len(nodes), None, reasons, unresolvable))
    best = min(feasible, key=lambda n: _score(pod, n, state.pods_by_node.get(name_of(n), ())))
    wffc = tuple(
        name_of(c)
        for c in claims
        if not spec_of(c).get("volumeName")
        and not ((c.get("metadata") or {}).get("annotations") or {}).get("volume.kubernetes.io/selected-node")
    )
    pending = any(not _bound(c) for c in claims)
    return Placement(name_of(best), select_claims=wffc, wait=pending)


def unscheduled(pod: Obj, scheduler_names: Sequence[str] = ("default-scheduler",)) -> bool:
    """Pods this scheduler must place: unbound, alive, its schedulerName."""
    return (
        not node_name_of(pod)
        and not is_deleting(pod)
        and not is_terminal(pod)
        and (spec_of(pod).get("schedulerName") or "default-scheduler") in scheduler_names
    )
