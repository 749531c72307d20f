"""Manifests a scenario applies, made runnable where it runs.

On a real API server the simulated kubelets only run pods on their own
Nodes, which carry a taint and a label, and only their StorageClass
provisions volumes: ``place`` puts a set's pods and volumes there. On the
embedded control plane every node is simulated and manifests stay as written.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from mo_devkit.localcluster.simulator.config import SIMULATED_LABEL

Obj = dict[str, Any]

GROUP_VERSION = "core.matrixorigin.io/v1alpha1"
VERSION = "2.0.0"
SIMULATED_STORAGE_CLASS = "localcluster-simulated"
CLUSTER_SETS = ("logService", "tn", "dn", "proxy", "tp", "ap", "webui")
"""The keys of a MatrixOneCluster's spec that hold one set's spec (besides ``cnGroups``)."""


def place(set_spec: Obj) -> None:
    """Put a set's pods on the simulated nodes (their taint tolerated) and its volumes
    in their StorageClass, in place."""
    overlay = set_spec.setdefault("overlay", {})
    overlay.setdefault("tolerations", []).append(
        {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    )
    set_spec.setdefault("nodeSelector", {})[SIMULATED_LABEL] = "true"
    for volume in ("volume", "cacheVolume"):
        if set_spec.get(volume):
            set_spec[volume].setdefault("storageClassName", SIMULATED_STORAGE_CLASS)


def runnable(obj: Obj, namespace: str, *, real: bool) -> Obj:
    """A copy of ``obj`` in ``namespace`` (unless it names one), its sets placed when ``real``."""
    obj = copy.deepcopy(obj)
    obj.setdefault("metadata", {}).setdefault("namespace", namespace)
    if not real:
        return obj
    spec = obj.get("spec") or {}
    if obj.get("kind") != "MatrixOneCluster":
        place(spec)
        return obj
    for key in CLUSTER_SETS:
        if spec.get(key):
            place(spec[key])
    for group in spec.get("cnGroups") or ():
        place(group)
    return obj


@dataclass(frozen=True)
class Shape:
    """Replicas of each component of a cluster manifest (no proxy: 0)."""

    log: int = 3
    tn: int = 1
    cn: int = 2
    proxy: int = 0

    @property
    def pods(self) -> int:
        return self.log + self.tn + self.cn + self.proxy


def cluster_manifest(name: str = "mo", shape: Shape = Shape(), **spec: Any) -> Obj:
    """A MatrixOneCluster of ``shape`` (by default 3 log stores, a TN, a CN group ``tp`` of 2),
    with ``spec`` fields replacing the defaults; not yet placed (see ``runnable``)."""
    base: Obj = {
        "version": VERSION,
        "logService": {
            "replicas": shape.log,
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": f"bucket/{name}"}},
        },
        "tn": {"replicas": shape.tn},
        "cnGroups": [{"name": "tp", "replicas": shape.cn, "scalingConfig": {"minDelaySeconds": 0}}],
    }
    if shape.proxy:
        base["proxy"] = {"replicas": shape.proxy}
    base.update(spec)
    return {"apiVersion": GROUP_VERSION, "kind": "MatrixOneCluster", "metadata": {"name": name}, "spec": base}
