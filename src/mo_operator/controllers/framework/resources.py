"""Every API resource the operator reads or writes, by name.

Our kinds come from the API registry (``api.kinds``), the built-in ones from
lightkube's classes, so no plural is ever guessed.
"""

from __future__ import annotations

from lightkube.resources.apps_v1 import Deployment, StatefulSet
from lightkube.resources.batch_v1 import Job
from lightkube.resources.core_v1 import (
    ConfigMap,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    Secret,
    Service,
)
from lightkube.resources.policy_v1 import PodDisruptionBudget
from lightkube.resources.storage_v1 import StorageClass

from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.kube.client.resource import Resource, register


def _ours(kind: str) -> Resource:
    info = KINDS[kind]
    return register(Resource(GROUP, VERSION, info.kind, info.plural, info.namespaced))


MATRIXONE_CLUSTERS = _ours("MatrixOneCluster")
LOGSETS = _ours("LogSet")
DNSETS = _ours("DNSet")
TNSETS = _ours("TNSet")
CNSETS = _ours("CNSet")
PROXYSETS = _ours("ProxySet")
WEBUIS = _ours("WebUI")
BUCKETCLAIMS = _ours("BucketClaim")
BACKUPJOBS = _ours("BackupJob")
BACKUPS = _ours("Backup")
RESTOREJOBS = _ours("RestoreJob")
BACKUPSCHEDULES = _ours("BackupSchedule")
CNPOOLS = _ours("CNPool")
CNCLAIMS = _ours("CNClaim")
CNCLAIMSETS = _ours("CNClaimSet")

CONFIGMAPS = Resource.of(ConfigMap)
SECRETS = Resource.of(Secret)
SERVICES = Resource.of(Service)
PODS = Resource.of(Pod)
PVCS = Resource.of(PersistentVolumeClaim)
STATEFULSETS = Resource.of(StatefulSet)
DEPLOYMENTS = Resource.of(Deployment)
JOBS = Resource.of(Job)
PDBS = Resource.of(PodDisruptionBudget)
STORAGECLASSES = Resource.of(StorageClass)
NODES = Resource.of(Node)
PERSISTENT_VOLUMES = Resource.of(PersistentVolume)
