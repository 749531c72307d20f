"""The resource kinds the simulator reads and writes, named as the API names
them, so one table drives URLs, watches and owner references."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


POD = Kind("", "v1", "Pod", "pods")
NODE = Kind("", "v1", "Node", "nodes", namespaced=False)
SERVICE = Kind("", "v1", "Service", "services")
ENDPOINTS = Kind("", "v1", "Endpoints", "endpoints")
CONFIGMAP = Kind("", "v1", "ConfigMap", "configmaps")
SECRET = Kind("", "v1", "Secret", "secrets")
NAMESPACE = Kind("", "v1", "Namespace", "namespaces", namespaced=False)
EVENT = Kind("", "v1", "Event", "events")
PVC = Kind("", "v1", "PersistentVolumeClaim", "persistentvolumeclaims")
PV = Kind("", "v1", "PersistentVolume", "persistentvolumes", namespaced=False)
STORAGE_CLASS = Kind("storage.k8s.io", "v1", "StorageClass", "storageclasses", namespaced=False)
STATEFULSET = Kind("apps", "v1", "StatefulSet", "statefulsets")
DEPLOYMENT = Kind("apps", "v1", "Deployment", "deployments")
REPLICASET = Kind("apps", "v1", "ReplicaSet", "replicasets")
CONTROLLER_REVISION = Kind("apps", "v1", "ControllerRevision", "controllerrevisions")
JOB = Kind("batch", "v1", "Job", "jobs")
LEASE = Kind("coordination.k8s.io", "v1", "Lease", "leases")
PDB = Kind("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets")
