"""The endpoints controller's decision for one Service
(pkg/controller/endpoint/endpoints_controller.go): ready and not-ready
addresses of the selected pods, ports resolved by name, subsets repacked by
identical port sets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..core.actions import Action, Create, Delete, Patch
from ..core.kinds import ENDPOINTS
from ..core.objects import Obj, is_deleting, labels_of, name_of, namespace_of, spec_of, status_of, uid_of
from ..core.pods import is_pod_ready, is_terminal, node_name_of
from ..core.selectors import map_selector_matches

HEADLESS_LABEL = "service.kubernetes.io/headless"


def _find_port(pod: Obj, svc_port: Mapping[str, Any]) -> int | None:
    """``podutil.FindPort``: a number, or a named container port of the same protocol."""
    target = svc_port.get("targetPort", svc_port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    proto = svc_port.get("protocol") or "TCP"
    for c in spec_of(pod).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target and (p.get("protocol") or "TCP") == proto:
                return int(p["containerPort"])
    return None


def _address(pod: Obj, service: Obj) -> Obj:
    addr: Obj = {
        "ip": status_of(pod)["podIP"],
        "targetRef": {
            "kind": "Pod",
            "namespace": namespace_of(pod),
            "name": name_of(pod),
            "uid": uid_of(pod),
        },
    }
    if node_name_of(pod):
        addr["nodeName"] = node_name_of(pod)
    spec = spec_of(pod)
    if spec.get("hostname") and spec.get("subdomain") == name_of(service):
        addr["hostname"] = spec["hostname"]
    return addr


def desired_subsets(service: Obj, pods: Sequence[Obj]) -> list[Obj]:
    spec = spec_of(service)
    selector = spec.get("selector") or {}
    publish = bool(spec.get("publishNotReadyAddresses"))
    groups: dict[str, tuple[list[Obj], list[Obj], list[Obj]]] = {}
    for pod in sorted(pods, key=lambda p: (status_of(p).get("podIP", ""), uid_of(p))):
        if namespace_of(pod) != namespace_of(service) or not map_selector_matches(selector, labels_of(pod)):
            continue
        if not status_of(pod).get("podIP") or is_terminal(pod) or (is_deleting(pod) and not publish):
            continue
        ports: list[Obj] = []
        for sp in spec.get("ports") or []:
            num = _find_port(pod, sp)
            if num is None:
                continue
            ep: Obj = {"port": num, "protocol": sp.get("protocol") or "TCP"}
            if sp.get("name"):
                ep["name"] = sp["name"]
            if sp.get("appProtocol"):
                ep["appProtocol"] = sp["appProtocol"]
            ports.append(ep)
        if spec.get("ports") and not ports:
            continue
        ports.sort(key=lambda p: (p.get("name", ""), p["port"], p["protocol"]))
        key = repr(ports)
        ready, not_ready, _ = groups.setdefault(key, ([], [], ports))
        (ready if publish or is_pod_ready(pod) else not_ready).append(_address(pod, service))
    subsets = []
    for key in sorted(groups):
        ready, not_ready, ports = groups[key]
        subset: Obj = {}
        if ready:
            subset["addresses"] = ready
        if not_ready:
            subset["notReadyAddresses"] = not_ready
        if ports:
            subset["ports"] = ports
        subsets.append(subset)
    return subsets


def plan_endpoints(service: Obj | None, endpoints: Obj | None, pods: Sequence[Obj]) -> list[Action]:
    """Keep the Endpoints of a Service with a selector equal to its pods; a
    deleted Service's Endpoints go with it."""
    if service is None:
        if endpoints is None:
            return []
        return [Delete(ENDPOINTS, namespace_of(endpoints), name_of(endpoints), uid=uid_of(endpoints))]
    spec = spec_of(service)
    if spec.get("selector") is None or spec.get("type") == "ExternalName" or is_deleting(service):
        return []
    labels = labels_of(service)
    if spec.get("clusterIP") == "None":
        labels[HEADLESS_LABEL] = ""
    subsets = desired_subsets(service, pods)
    if endpoints is None:
        obj = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": name_of(service), "namespace": namespace_of(service), "labels": labels},
            "subsets": subsets,
        }
        return [Create(ENDPOINTS, obj)]
    have_labels = labels_of(endpoints)
    if (endpoints.get("subsets") or []) == subsets and have_labels == labels:
        return []
    label_patch: dict[str, str | None] = {k: None for k in have_labels if k not in labels}
    label_patch.update(labels)
    return [
        Patch(
            ENDPOINTS,
            namespace_of(endpoints),
            name_of(endpoints),
            {"metadata": {"labels": label_patch}, "subsets": subsets},
        )
    ]
