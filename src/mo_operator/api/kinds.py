"""The registry of our kinds: model, names, scope, printer columns and subresources.

Everything that differs per kind and is not a field lives here, so the CRD
generator, the validators and the defaulter all look kinds up in one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from .backup import Backup, BackupJob, RestoreJob
from .backupschedule import BackupSchedule
from .base import APIModel
from .bucketclaim import BucketClaim
from .cluster import MatrixOneCluster
from .cnclaim import CNClaim, CNClaimSet
from .cnpool import CNPool
from .cnset import CNSet
from .dnset import DNSet, TNSet
from .logset import LogSet
from .proxyset import ProxySet
from .webui import WebUI

__all__ = [
    "API_VERSION",
    "CATEGORY",
    "GROUP",
    "KINDS",
    "LOGSET_BOOTSTRAP_ANNOTATION",
    "VERSION",
    "KindInfo",
    "PrinterColumn",
    "ScaleSubresource",
    "kind_info",
]

GROUP = "core.matrixorigin.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
CATEGORY = "matrixone"
"""``kubectl get matrixone`` lists every kind of ours."""
LOGSET_BOOTSTRAP_ANNOTATION = "logset.matrixorigin.io/bootstrap"
"""On a LogSet: its HAKeeper bootstrap decision (JSON), recorded once before any log pod
exists; from then on the LogSet's ``initialConfig`` may not change."""


@dataclass(frozen=True)
class PrinterColumn:
    """One ``kubectl get`` column (``additionalPrinterColumns``)."""

    name: str
    type: str
    json_path: str
    description: str
    priority: int = 0
    format: str | None = None


@dataclass(frozen=True)
class ScaleSubresource:
    """Where ``/scale`` reads and writes replicas."""

    spec_replicas_path: str = ".spec.replicas"
    status_replicas_path: str = ".status.replicas"
    label_selector_path: str | None = ".status.labelSelector"


@dataclass(frozen=True)
class KindInfo:
    """What the API knows about one kind besides its fields."""

    kind: str
    plural: str
    model: type[APIModel]
    printer_columns: tuple[PrinterColumn, ...]
    short_names: tuple[str, ...] = ()
    namespaced: bool = True
    scale: ScaleSubresource | None = None
    upstream_conditions: tuple[str, ...] = ()
    """The condition types the Go operator gives this kind, written first and in
    this order (ours follow), since its clients and e2e tests read
    ``conditions[0]`` where it gives one (UPSTREAM.md: a BucketClaim's
    ``recyclable``, a BackupJob's and RestoreJob's ``Ended``, the framework's
    ``Ready`` and ``Synced`` on the cluster and its sets)."""

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


_AGE = PrinterColumn("Age", "date", ".metadata.creationTimestamp", "Time since the object was created.")
_READY = PrinterColumn(
    "Ready", "string", '.status.conditions[?(@.type=="Ready")].status', "Whether the object is Ready."
)
_READINESS = PrinterColumn("Ready", "string", ".status.readiness", 'Pods ready over pods desired ("2/3").')
_UPDATED = PrinterColumn(
    "Up-To-Date", "integer", ".status.updatedReplicas", "Pods that run the current spec."
)
_VERSION = PrinterColumn(
    "Version",
    "string",
    ".status.version",
    "MatrixOne version (image tag) the pods run; several during a roll.",
)
_IMAGE = PrinterColumn("Image", "string", ".spec.image", "Image the set asks for.", priority=1)
_MESSAGE = PrinterColumn(
    "Message", "string", ".status.message", "The first condition that is not fine.", priority=1
)
_SET_COLUMNS = (_READINESS, _UPDATED, _VERSION, _AGE, _IMAGE, _MESSAGE)
_FRAMEWORK = ("Ready", "Synced")
"""The conditions upstream's reconcile framework gives every kind it manages (managed.go)."""


_CLUSTER_KINDS = (
    KindInfo(
        "MatrixOneCluster",
        "matrixoneclusters",
        MatrixOneCluster,
        (
            PrinterColumn("Ready", "string", ".status.readiness", 'Sets Ready over sets ("4/5").'),
            PrinterColumn(
                "Version",
                "string",
                ".status.version",
                "MatrixOne version the pods run; several during a roll.",
            ),
            PrinterColumn("Phase", "string", ".status.phase", "Ready, NotReady or Upgrading."),
            PrinterColumn(
                "Up-To-Date",
                "string",
                '.status.conditions[?(@.type=="UpToDate")].status',
                "Whether every set runs the current spec.",
            ),
            _AGE,
            PrinterColumn(
                "Desired", "string", ".spec.version", "MatrixOne version the spec asks for.", priority=1
            ),
            _MESSAGE,
        ),
        short_names=("mo",),
        upstream_conditions=_FRAMEWORK,
    ),
    KindInfo("LogSet", "logsets", LogSet, _SET_COLUMNS, short_names=("log",), upstream_conditions=_FRAMEWORK),
    KindInfo("DNSet", "dnsets", DNSet, _SET_COLUMNS, short_names=("dn",), upstream_conditions=_FRAMEWORK),
    KindInfo("TNSet", "tnsets", TNSet, _SET_COLUMNS, short_names=("tn",), upstream_conditions=_FRAMEWORK),
    KindInfo(
        "CNSet",
        "cnsets",
        CNSet,
        _SET_COLUMNS,
        short_names=("cn",),
        scale=ScaleSubresource(),
        upstream_conditions=_FRAMEWORK,
    ),
    KindInfo(
        "ProxySet",
        "proxysets",
        ProxySet,
        _SET_COLUMNS,
        short_names=("proxy",),
        scale=ScaleSubresource(),
        upstream_conditions=_FRAMEWORK,
    ),
    KindInfo("WebUI", "webuis", WebUI, _SET_COLUMNS, upstream_conditions=_FRAMEWORK),
)
"""The cluster and the component sets it is made of."""

_PHASE = PrinterColumn("phase", "string", ".status.phase", "Pending, Running, Completed or Failed.")

_STORAGE_KINDS = (
    KindInfo(
        "BucketClaim",
        "bucketclaims",
        BucketClaim,
        (
            PrinterColumn("Status", "string", ".status.state", "InUse, Released or Deleting."),
            PrinterColumn("Bind", "string", ".status.bindTo", "The LogSet the claim is bound to."),
            _AGE,
        ),
        short_names=("bucket",),
        upstream_conditions=("recyclable",),
    ),
    KindInfo(
        "BackupJob",
        "backupjobs",
        BackupJob,
        (_PHASE, PrinterColumn("Backup", "string", ".status.backup", "The Backup the job produced."), _AGE),
        upstream_conditions=("Ended",),
    ),
    KindInfo(
        "Backup",
        "backups",
        Backup,
        (
            PrinterColumn("ID", "string", ".meta.id", "Identifier of the backup."),
            PrinterColumn("At", "string", ".meta.atTime", "When the backup started.", format="date-time"),
            PrinterColumn("Source", "string", ".meta.sourceRef", "What was backed up."),
            _AGE,
        ),
        namespaced=False,
    ),
    KindInfo("RestoreJob", "restorejobs", RestoreJob, (_PHASE, _AGE), upstream_conditions=("Ended",)),
    KindInfo(
        "BackupSchedule",
        "backupschedules",
        BackupSchedule,
        (
            PrinterColumn("Schedule", "string", ".spec.schedule", "When backups run (cron syntax)."),
            PrinterColumn("Suspend", "boolean", ".spec.suspend", "Whether new runs are held."),
            PrinterColumn(
                "Last Schedule", "date", ".status.lastScheduleTime", "Time since the last run started."
            ),
            _AGE,
            PrinterColumn(
                "Next", "string", ".status.nextScheduleTime", "The next scheduled run.", priority=1
            ),
        ),
        short_names=("bs",),
    ),
)
"""The shared-storage bucket and the backups kept in it."""

_POOL_KINDS = (
    KindInfo(
        "CNClaim",
        "cnclaims",
        CNClaim,
        (
            PrinterColumn("Pod", "string", ".spec.podName", "The claimed pod."),
            PrinterColumn("Phase", "string", ".status.phase", "Pending, Bound, Lost or Outdated."),
            _AGE,
        ),
    ),
    KindInfo(
        "CNClaimSet",
        "cnclaimsets",
        CNClaimSet,
        (
            PrinterColumn("Replicas", "integer", ".spec.replicas", "Desired number of claims."),
            PrinterColumn("Bound", "integer", ".status.readyReplicas", "Claims that are bound."),
            _AGE,
        ),
        scale=ScaleSubresource(),
    ),
    KindInfo(
        "CNPool",
        "cnpools",
        CNPool,
        (
            PrinterColumn(
                "MaxIdle", "integer", ".spec.strategy.scaleStrategy.maxIdle", "Idle pods kept for claims."
            ),
            _READY,
            _AGE,
        ),
    ),
)
"""Pooled CN pods and the claims that bind them."""


KINDS: Mapping[str, KindInfo] = MappingProxyType(
    {k.kind: k for k in (*_CLUSTER_KINDS, *_STORAGE_KINDS, *_POOL_KINDS)}
)
"""Every kind we serve, by kind name, in the order the CRDs are written."""


def kind_info(kind: str) -> KindInfo | None:
    """The registry entry of a kind, or None when it is not one of ours."""
    return KINDS.get(kind)
