"""The MatrixOneCluster controller's wiring and the trouble it warns of."""

from __future__ import annotations

from ..framework import resources as r
from ..steps.volumes import BLOCKED as STORAGE_CLASS_CANNOT_EXPAND
from ..wiring import Wiring
from .actor import MatrixOneClusterActor
from .restore import RESTORE_FAILED

WARNING_REASONS = frozenset(
    {
        "InvalidSpec",
        "RolloutStalled",
        "RolloutHalted",
        "RestoreBlocked",
        RESTORE_FAILED,
        STORAGE_CLASS_CANNOT_EXPAND,
    }
)
"""A spec refused, a set's rollout stalled (and so the cluster's halted), a restore that
cannot start or failed, a set's volumes that cannot grow."""


def setup(wiring: Wiring) -> None:
    """Clusters: the sets, WebUI, credential Secret and RestoreJob they ask for, reading
    the Backups they restore from. No finalizer: the cluster's children go by owner
    references, each by its own controller's finalizer, so the cluster's deletion waits
    for nothing of ours."""
    wiring.actor_controller(
        "matrixonecluster",
        r.MATRIXONE_CLUSTERS,
        MatrixOneClusterActor(wiring.env),
        (r.LOGSETS, r.DNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS, r.SECRETS, r.RESTOREJOBS),
        reads=(r.BACKUPS,),
        adds_finalizer=False,
        warning_reasons=WARNING_REASONS,
    )
