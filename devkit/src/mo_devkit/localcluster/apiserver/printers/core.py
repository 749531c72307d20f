"""Table printers of the core/v1 kinds other than Pods and Events: columns
and cells of kube-apiserver's ``pkg/printers/internalversion/printers.go``."""

from __future__ import annotations

import datetime
from typing import Any

from lightkube.models import core_v1

from .base import (
    AGE,
    NAME,
    Obj,
    Printer,
    age,
    column,
    dig,
    doc,
    format_labels,
    meta,
    name,
    simple,
    spec,
    status,
)


def _service_external_ip(obj: Obj) -> str:
    s = spec(obj)
    external = s.get("externalIPs") or []
    kind = s.get("type", "ClusterIP")
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = dig(obj, "status", "loadBalancer", "ingress", default=[])
        lb = sorted({i.get("ip") or i.get("hostname") for i in ingress if i.get("ip") or i.get("hostname")})
        return ",".join([*lb, *external]) or "<pending>"
    if kind == "ExternalName":
        return str(s.get("externalName", ""))
    return "<unknown>"


def _service_ports(obj: Obj) -> str:
    pieces = []
    for p in spec(obj).get("ports") or []:
        protocol = p.get("protocol", "TCP")
        node_port = p.get("nodePort") or 0
        pieces.append(
            f"{p.get('port')}:{node_port}/{protocol}" if node_port > 0 else f"{p.get('port')}/{protocol}"
        )
    return ",".join(pieces) or "<none>"


SERVICE = Printer(
    (
        NAME,
        column("Type", "string", doc(core_v1.ServiceSpec, "type")),
        column("Cluster-IP", "string", doc(core_v1.ServiceSpec, "clusterIP")),
        column("External-IP", "string", doc(core_v1.ServiceSpec, "externalIPs")),
        column("Port(s)", "string", doc(core_v1.ServiceSpec, "ports")),
        AGE,
        column("Selector", "string", doc(core_v1.ServiceSpec, "selector"), priority=1),
    ),
    lambda obj, now: [
        name(obj),
        spec(obj).get("type", "ClusterIP"),
        (spec(obj).get("clusterIPs") or ["<none>"])[0],
        _service_external_ip(obj),
        _service_ports(obj),
        age(obj, now),
        format_labels(spec(obj).get("selector")),
    ],
)


def _endpoints(obj: Obj) -> str:
    """``formatEndpoints``: up to three ``ip:port`` (or ip) then ``+ N more...``."""
    subsets = obj.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        addresses = [a.get("ip", "") for a in subset.get("addresses") or []]
        ports = subset.get("ports") or []
        targets = [
            f"[{ip}]:{p.get('port')}" if ":" in ip else f"{ip}:{p.get('port')}"
            for p in ports
            for ip in addresses
        ]
        targets = targets if ports else addresses
        count += len(targets)
        shown.extend(targets[: max(0, 3 - len(shown))])
    text = ",".join(shown)
    return f"{text} + {count - 3} more..." if count > 3 else text


ENDPOINTS = simple(
    [column("Endpoints", "string", doc(core_v1.Endpoints, "subsets"))], lambda obj: [_endpoints(obj)]
)
CONFIG_MAP = simple(
    [column("Data", "string", doc(core_v1.ConfigMap, "data"))],
    lambda obj: [len(obj.get("data") or {}) + len(obj.get("binaryData") or {})],
)
SECRET = simple(
    [
        column("Type", "string", doc(core_v1.Secret, "type")),
        column("Data", "string", doc(core_v1.Secret, "data")),
    ],
    lambda obj: [obj.get("type", ""), len(obj.get("data") or {})],
)
SERVICE_ACCOUNT = simple(
    [column("Secrets", "string", doc(core_v1.ServiceAccount, "secrets"))],
    lambda obj: [len(obj.get("secrets") or [])],
)
NAMESPACE = simple(
    [column("Status", "string", "The status of the namespace")], lambda obj: [status(obj).get("phase", "")]
)

_ACCESS_MODES = (
    ("ReadWriteOnce", "RWO"),
    ("ReadOnlyMany", "ROX"),
    ("ReadWriteMany", "RWX"),
    ("ReadWriteOncePod", "RWOP"),
)
_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"


def _access_modes(modes: Any) -> str:
    return ",".join(short for mode, short in _ACCESS_MODES if mode in (modes or []))


def _storage_class(obj: Obj) -> str:
    annotations = meta(obj).get("annotations") or {}
    if _STORAGE_CLASS_ANNOTATION in annotations:
        return str(annotations[_STORAGE_CLASS_ANNOTATION])
    return str(spec(obj).get("storageClassName") or "")


def _phase_or_terminating(obj: Obj) -> str:
    return "Terminating" if meta(obj).get("deletionTimestamp") else str(status(obj).get("phase", ""))


def _pvc(obj: Obj, now: datetime.datetime) -> list[Any]:
    s = spec(obj)
    bound = bool(s.get("volumeName"))
    capacity = str(dig(obj, "status", "capacity", "storage", default="")) if bound else ""
    modes = _access_modes(status(obj).get("accessModes")) if bound else ""
    return [
        name(obj),
        _phase_or_terminating(obj),
        s.get("volumeName", ""),
        capacity,
        modes,
        _storage_class(obj),
        s.get("volumeAttributesClassName") or "<unset>",
        age(obj, now),
        s.get("volumeMode") or "<unset>",
    ]


PERSISTENT_VOLUME_CLAIM = Printer(
    (
        NAME,
        column("Status", "string", doc(core_v1.PersistentVolumeClaimStatus, "phase")),
        column("Volume", "string", doc(core_v1.PersistentVolumeClaimSpec, "volumeName")),
        column("Capacity", "string", doc(core_v1.PersistentVolumeClaimStatus, "capacity")),
        column("Access Modes", "string", doc(core_v1.PersistentVolumeClaimStatus, "accessModes")),
        column("StorageClass", "string", "StorageClass of the pvc"),
        column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pvc"),
        AGE,
        column("VolumeMode", "string", doc(core_v1.PersistentVolumeClaimSpec, "volumeMode"), priority=1),
    ),
    _pvc,
)


def _pv(obj: Obj, now: datetime.datetime) -> list[Any]:
    s = spec(obj)
    claim = s.get("claimRef")
    return [
        name(obj),
        str(dig(s, "capacity", "storage", default="")),
        _access_modes(s.get("accessModes")),
        s.get("persistentVolumeReclaimPolicy", ""),
        _phase_or_terminating(obj),
        f"{claim.get('namespace', '')}/{claim.get('name', '')}" if isinstance(claim, dict) else "",
        _storage_class(obj),
        s.get("volumeAttributesClassName") or "<unset>",
        status(obj).get("reason", ""),
        age(obj, now),
        s.get("volumeMode") or "<unset>",
    ]


PERSISTENT_VOLUME = Printer(
    (
        NAME,
        column("Capacity", "string", doc(core_v1.PersistentVolumeSpec, "capacity")),
        column("Access Modes", "string", doc(core_v1.PersistentVolumeSpec, "accessModes")),
        column(
            "Reclaim Policy", "string", doc(core_v1.PersistentVolumeSpec, "persistentVolumeReclaimPolicy")
        ),
        column("Status", "string", doc(core_v1.PersistentVolumeStatus, "phase")),
        column("Claim", "string", doc(core_v1.PersistentVolumeSpec, "claimRef")),
        column("StorageClass", "string", "StorageClass of the pv"),
        column("VolumeAttributesClass", "string", "VolumeAttributesClass of the pv"),
        column("Reason", "string", doc(core_v1.PersistentVolumeStatus, "reason")),
        AGE,
        column("VolumeMode", "string", doc(core_v1.PersistentVolumeSpec, "volumeMode"), priority=1),
    ),
    _pv,
)


def _node(obj: Obj, now: datetime.datetime) -> list[Any]:
    ready = [c for c in status(obj).get("conditions") or [] if c.get("type") == "Ready"]
    states = ["Ready" if c.get("status") == "True" else "NotReady" for c in ready[-1:]] or ["Unknown"]
    if spec(obj).get("unschedulable"):
        states.append("SchedulingDisabled")
    roles = set()
    for key, value in (meta(obj).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/":
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    info = status(obj).get("nodeInfo") or {}
    addresses = status(obj).get("addresses") or []

    def address(kind: str) -> str:
        return next((a.get("address", "") for a in addresses if a.get("type") == kind), "<none>")

    return [
        name(obj),
        ",".join(states),
        ",".join(sorted(roles)) or "<none>",
        age(obj, now),
        info.get("kubeletVersion", ""),
        address("InternalIP"),
        address("ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


NODE = Printer(
    (
        NAME,
        column("Status", "string", "The status of the node"),
        column("Roles", "string", "The roles of the node"),
        AGE,
        column("Version", "string", doc(core_v1.NodeSystemInfo, "kubeletVersion")),
        column("Internal-IP", "string", doc(core_v1.NodeStatus, "addresses"), priority=1),
        column("External-IP", "string", doc(core_v1.NodeStatus, "addresses"), priority=1),
        column("OS-Image", "string", doc(core_v1.NodeSystemInfo, "osImage"), priority=1),
        column("Kernel-Version", "string", doc(core_v1.NodeSystemInfo, "kernelVersion"), priority=1),
        column(
            "Container-Runtime", "string", doc(core_v1.NodeSystemInfo, "containerRuntimeVersion"), priority=1
        ),
    ),
    _node,
)
