"""Small builders of API objects for the simulator's decision tests."""

from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]


def pod(
    name: str = "web-0",
    namespace: str = "default",
    *,
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    containers: list[Obj] | None = None,
    init_containers: list[Obj] | None = None,
    node: str | None = "sim-node-0",
    restart_policy: str = "Always",
    phase: str = "Pending",
    status: Obj | None = None,
    owner: Obj | None = None,
    **spec: Any,
) -> Obj:
    p: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": uid or f"uid-{name}",
            "resourceVersion": "1",
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "labels": dict(labels or {}),
        },
        "spec": {
            "containers": containers or [{"name": "app", "image": "nginx:1.25"}],
            "restartPolicy": restart_policy,
            "terminationGracePeriodSeconds": 30,
            **spec,
        },
        "status": dict(status or {"phase": phase}),
    }
    if init_containers:
        p["spec"]["initContainers"] = init_containers
    if node:
        p["spec"]["nodeName"] = node
    if owner is not None:
        p["metadata"]["ownerReferences"] = [owner]
    return p


def node(
    name: str = "sim-node-0",
    *,
    cpu: str = "4",
    memory: str = "8Gi",
    pods: int = 110,
    labels: dict[str, str] | None = None,
    taints: list[Obj] | None = None,
    ready: bool = True,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, **(labels or {})},
        },
        "spec": {"taints": list(taints or [])},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods)},
            "capacity": {"cpu": cpu, "memory": memory, "pods": str(pods)},
            "conditions": [{"type": "Ready", "status": "True" if ready else "Unknown"}],
        },
    }


def with_status(obj: Obj, status: Obj) -> Obj:
    out = copy.deepcopy(obj)
    out["status"] = status
    return out


def ready_pod(name: str, **kw: Any) -> Obj:
    p = pod(name, **kw)
    p["status"] = {
        "phase": "Running",
        "podIP": "10.244.0.5",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"},
            {"type": "ContainersReady", "status": "True"},
        ],
    }
    return p
