"""Pod predicates shared by the controllers (``k8s.io/kubernetes/pkg/api/v1/pod``
and ``pkg/controller``): readiness, availability, activity, resource requests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.meta.quantity import quantity_milli_value, quantity_value
from mo_operator.kube.meta.times import parse_time

from .objects import find_condition, is_deleting, spec_of, status_of

TERMINAL_PHASES = ("Succeeded", "Failed")


def phase_of(pod: Mapping[str, Any]) -> str:
    return str(status_of(pod).get("phase") or "")


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return phase_of(pod) in TERMINAL_PHASES


def is_pod_ready(pod: Mapping[str, Any]) -> bool:
    """``podutil.IsPodReady``: the Ready condition is True."""
    c = find_condition(status_of(pod).get("conditions"), "Ready")
    return c is not None and c.get("status") == "True"


def is_running_and_ready(pod: Mapping[str, Any]) -> bool:
    return phase_of(pod) == "Running" and is_pod_ready(pod)


def is_pod_available(pod: Mapping[str, Any], min_ready_seconds: int, now: float) -> bool:
    """``podutil.IsPodAvailable``: ready for at least ``minReadySeconds``."""
    if not is_pod_ready(pod):
        return False
    if min_ready_seconds <= 0:
        return True
    c = find_condition(status_of(pod).get("conditions"), "Ready") or {}
    since = parse_time(c.get("lastTransitionTime"))
    return since is not None and since + min_ready_seconds <= now


def is_active(pod: Mapping[str, Any]) -> bool:
    """``controller.IsPodActive``: not terminal and not being deleted."""
    return not is_terminal(pod) and not is_deleting(pod)


def node_name_of(pod: Mapping[str, Any]) -> str:
    return str(spec_of(pod).get("nodeName") or "")


@dataclass(frozen=True)
class Resources:
    """Requests in the units the scheduler compares: millicores and bytes."""

    milli_cpu: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.milli_cpu + other.milli_cpu, self.memory + other.memory, self.pods + other.pods)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.milli_cpu - other.milli_cpu, self.memory - other.memory, self.pods - other.pods)


def _container_requests(c: Mapping[str, Any]) -> Resources:
    res = c.get("resources") or {}
    # A limit without a request defaults the request (pkg/apis/core/v1/defaults.go).
    req = {**(res.get("limits") or {}), **(res.get("requests") or {})}
    cpu = quantity_milli_value(str(req["cpu"])) if "cpu" in req else 0
    mem = quantity_value(str(req["memory"])) if "memory" in req else 0
    return Resources(cpu, mem, 0)


def pod_requests(pod: Mapping[str, Any]) -> Resources:
    """``resource.PodRequests``: the sum over containers, at least the largest
    init container, plus the pod overhead; one pod slot."""
    spec = spec_of(pod)
    total = Resources()
    for c in spec.get("containers") or []:
        total = total + _container_requests(c)
    cpu, mem = total.milli_cpu, total.memory
    for c in spec.get("initContainers") or []:
        r = _container_requests(c)
        if c.get("restartPolicy") == "Always":  # a sidecar runs alongside the app
            cpu, mem = cpu + r.milli_cpu, mem + r.memory
        else:
            cpu, mem = max(cpu, r.milli_cpu), max(mem, r.memory)
    overhead = spec.get("overhead") or {}
    if "cpu" in overhead:
        cpu += quantity_milli_value(str(overhead["cpu"]))
    if "memory" in overhead:
        mem += quantity_value(str(overhead["memory"]))
    return Resources(cpu, mem, 1)


def node_allocatable(node: Mapping[str, Any]) -> Resources:
    alloc = status_of(node).get("allocatable") or status_of(node).get("capacity") or {}
    cpu = quantity_milli_value(str(alloc["cpu"])) if "cpu" in alloc else 0
    mem = quantity_value(str(alloc["memory"])) if "memory" in alloc else 0
    pods = int(quantity_value(str(alloc["pods"]))) if "pods" in alloc else 110
    return Resources(cpu, mem, pods)


def pvc_claim_names(pod: Mapping[str, Any]) -> list[str]:
    return [
        v["persistentVolumeClaim"]["claimName"]
        for v in spec_of(pod).get("volumes") or []
        if isinstance(v.get("persistentVolumeClaim"), dict) and v["persistentVolumeClaim"].get("claimName")
    ]
