"""Simulated Nodes as their kubelets register and report them
(pkg/kubelet/kubelet_node_status.go, nodestatus/setters.go), their Leases
in ``kube-node-lease``, and the node lifecycle controller's view of a node
whose kubelet went silent (pkg/controller/nodelifecycle)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mo_operator.kube.meta.times import format_micro_time, format_time, parse_time

from ..core.actions import Action, Patch, pod_delete
from ..core.kinds import NODE, POD
from ..core.objects import (
    Obj,
    find_condition,
    is_deleting,
    merge_condition,
    name_of,
    namespace_of,
    spec_of,
    status_of,
    uid_of,
)
from ..core.pods import is_pod_ready, is_terminal
from ..core.selectors import toleration_tolerates

LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"
KUBELET_VERSION = "v1.28.0"

_PRESSURE = (
    ("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
)


def host_ip(index: int) -> str:
    return f"172.18.0.{index + 2}"


def pod_cidr(index: int) -> str:
    return f"10.244.{index}.0/24"


def allocate_pod_ip(index: int, used: Iterable[str]) -> str:
    """The first free address of the node's pod CIDR (.2 upwards)."""
    taken = set(used)
    for host in range(2, 255):
        ip = f"10.244.{index}.{host}"
        if ip not in taken:
            return ip
    raise RuntimeError(f"node {index} has no free pod IP")


def node_object(name: str, index: int, labels: Mapping[str, str], taints: Sequence[Mapping[str, Any]]) -> Obj:
    """What a kubelet registers (metadata and spec)."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "beta.kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                **labels,
            },
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": pod_cidr(index),
            "podCIDRs": [pod_cidr(index)],
            "taints": [dict(t) for t in taints],
        },
    }


def node_status(
    name: str, index: int, cpu: str, memory: str, pods: int, now: float, previous: Mapping[str, Any] | None
) -> Obj:
    """The status a healthy kubelet posts: capacity, conditions with a fresh
    heartbeat (transition times kept), addresses and node info."""
    stamp = format_time(now)
    conds = [dict(c) for c in (previous or {}).get("conditions") or []]
    wanted = [(t, "False", r, m) for t, r, m in _PRESSURE]
    wanted.append(("Ready", "True", "KubeletReady", "kubelet is posting ready status"))
    for ctype, st, reason, message in wanted:
        conds = merge_condition(
            conds, {"type": ctype, "status": st, "reason": reason, "message": message}, stamp
        )
        conds = [dict(c, lastHeartbeatTime=stamp) if c.get("type") == ctype else c for c in conds]
    resources = {
        "cpu": cpu,
        "memory": memory,
        "pods": str(pods),
        "ephemeral-storage": "100Gi",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    ident = hashlib.sha256(name.encode()).hexdigest()
    return {
        "capacity": dict(resources),
        "allocatable": dict(resources),
        "conditions": conds,
        "addresses": [
            {"type": "InternalIP", "address": host_ip(index)},
            {"type": "Hostname", "address": name},
        ],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
        "nodeInfo": {
            "architecture": "amd64",
            "bootID": ident[:32],
            "containerRuntimeVersion": "containerd://1.7.0",
            "kernelVersion": "6.1.0-localcluster",
            "kubeProxyVersion": KUBELET_VERSION,
            "kubeletVersion": KUBELET_VERSION,
            "machineID": ident[32:],
            "operatingSystem": "linux",
            "osImage": "localcluster simulated node",
            "systemUUID": ident[:8]
            + "-"
            + ident[8:12]
            + "-"
            + ident[12:16]
            + "-"
            + ident[16:20]
            + "-"
            + ident[20:32],
        },
    }


def node_lease(node: Obj, now: float) -> Obj:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": name_of(node),
            "namespace": LEASE_NAMESPACE,
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": name_of(node), "uid": uid_of(node)}
            ],
        },
        "spec": {
            "holderIdentity": name_of(node),
            "leaseDurationSeconds": LEASE_DURATION,
            "renewTime": format_micro_time(now),
        },
    }


def is_ready(node: Obj) -> bool:
    c = find_condition(status_of(node).get("conditions"), "Ready")
    return c is not None and c.get("status") == "True"


def lease_expired(lease: Obj | None, now: float, grace: float) -> bool:
    if lease is None:
        return False
    renewed = parse_time(spec_of(lease).get("renewTime"))
    return renewed is not None and now - renewed > grace


def mark_unreachable(node: Obj, now: float) -> list[Action]:
    """``tryUpdateNodeHealth`` for a silent kubelet: every condition Unknown
    (NodeStatusUnknown), then the unreachable NoSchedule/NoExecute taints."""
    stamp = format_time(now)
    actions: list[Action] = []
    conds = [dict(c) for c in status_of(node).get("conditions") or []]
    changed = False
    for c in conds:
        if c.get("status") != "Unknown":
            c.update(
                status="Unknown",
                reason="NodeStatusUnknown",
                message="Kubelet stopped posting node status.",
                lastTransitionTime=stamp,
            )
            changed = True
    if changed:
        actions.append(
            Patch(NODE, "", name_of(node), {"status": {"conditions": conds}}, subresource="status")
        )
    taints = [dict(t) for t in spec_of(node).get("taints") or []]
    have = {(t.get("key"), t.get("effect")) for t in taints}
    added = False
    for effect in ("NoSchedule", "NoExecute"):
        if (UNREACHABLE_TAINT, effect) not in have:
            t: Obj = {"key": UNREACHABLE_TAINT, "effect": effect}
            if effect == "NoExecute":
                t["timeAdded"] = stamp
            taints.append(t)
            added = True
    if added:
        actions.append(Patch(NODE, "", name_of(node), {"spec": {"taints": taints}}))
    return actions


def clear_unreachable(node: Obj) -> list[Action]:
    """Drop the unreachable taints once the kubelet reports Ready again."""
    taints = [dict(t) for t in spec_of(node).get("taints") or []]
    kept = [t for t in taints if t.get("key") != UNREACHABLE_TAINT]
    if len(kept) == len(taints):
        return []
    return [Patch(NODE, "", name_of(node), {"spec": {"taints": kept}})]


def evict_from_unreachable(
    node: Obj, pods: Sequence[Obj], now: float, time_scale: float
) -> tuple[list[Action], float | None]:
    """``MarkPodsNotReady`` and the taint eviction controller for the pods of
    an unreachable node: Ready=False at once; deletion (with a DisruptionTarget
    condition) when their toleration of the NoExecute taint runs out. Returns
    the actions and when to look again."""
    stamp = format_time(now)
    actions: list[Action] = []
    wake: list[float] = []
    taint = next(
        (
            t
            for t in spec_of(node).get("taints") or []
            if t.get("key") == UNREACHABLE_TAINT and t.get("effect") == "NoExecute"
        ),
        None,
    )
    tainted_at = parse_time((taint or {}).get("timeAdded")) or now
    for pod in pods:
        if is_terminal(pod):
            continue
        if is_pod_ready(pod):
            conds = [dict(c) for c in status_of(pod).get("conditions") or []]
            for c in conds:
                if c.get("type") == "Ready":
                    c.update(status="False", lastTransitionTime=stamp)
            actions.append(
                Patch(
                    POD,
                    namespace_of(pod),
                    name_of(pod),
                    {"status": {"conditions": conds}},
                    subresource="status",
                )
            )
        if taint is None or is_deleting(pod):
            continue
        tol = next((t for t in spec_of(pod).get("tolerations") or [] if toleration_tolerates(t, taint)), None)
        if tol is not None and tol.get("tolerationSeconds") is None:
            continue
        due = tainted_at + (time_scale * max(0, int(tol["tolerationSeconds"])) if tol is not None else 0.0)
        if now < due:
            wake.append(due - now)
            continue
        conds = [dict(c) for c in status_of(pod).get("conditions") or []]
        conds = merge_condition(
            conds,
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "DeletionByTaintManager",
                "message": "Taint manager: deleting due to NoExecute taint",
            },
            stamp,
        )
        actions.append(
            Patch(
                POD, namespace_of(pod), name_of(pod), {"status": {"conditions": conds}}, subresource="status"
            )
        )
        actions.append(pod_delete(pod))
    return actions, (min(wake) if wake else None)


def collect_orphans(pods: Sequence[Obj], node_names: set[str], now: float) -> list[Action]:
    """The pod GC's ``gcOrphaned``: pods bound to a Node that no longer exists
    are marked Failed (DisruptionTarget, DeletionByPodGC) and force-deleted."""
    stamp = format_time(now)
    actions: list[Action] = []
    for pod in pods:
        node = spec_of(pod).get("nodeName")
        if not node or node in node_names:
            continue
        if not is_terminal(pod):
            conds = merge_condition(
                [dict(c) for c in status_of(pod).get("conditions") or []],
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "reason": "DeletionByPodGC",
                    "message": "PodGC: node no longer exists",
                },
                stamp,
            )
            actions.append(
                Patch(
                    POD,
                    namespace_of(pod),
                    name_of(pod),
                    {"status": {"phase": "Failed", "conditions": conds}},
                    subresource="status",
                )
            )
        actions.append(pod_delete(pod, grace_period=0))
    return actions
