"""The LogSet controller's wiring and the trouble it warns of."""

from __future__ import annotations

from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..mappers import set_of_pod, sets_of_storage_class
from ..sets import STATEFUL_OWNS, guarded_set
from ..steps.bucketclaims import REFUSED_DELETING, REFUSED_IN_USE, logsets_of_claim
from ..steps.rpchealth import WARNING_REASONS as RPC_WARNING_REASONS
from ..wiring import Wiring
from .actor import LogSetActor

WARNING_REASONS = frozenset(
    {
        *RPC_WARNING_REASONS,
        "StoresDown",
        "RepairingStores",
        "WaitingForHAKeeper",
        "MajorityLost",
        REFUSED_IN_USE,
        REFUSED_DELETING,
    }
)
"""Besides the sets' own: HAKeeper out of reach, lost log stores (failover), a bucket refused."""


def setup(wiring: Wiring) -> None:
    """The log service: its StatefulSet, Services and ConfigMaps, woken by its pods and
    claims, the StorageClasses of its claims and the BucketClaim of its shared storage."""
    logsets = guarded_set(
        wiring,
        "logset",
        r.LOGSETS,
        LogSetActor(wiring.env),
        Component.LOG,
        STATEFUL_OWNS,
        warning_reasons=WARNING_REASONS,
        # dependents wait for Ready, not for the address; HAKeeper's state only reports
        quiet_fields=frozenset({"discovery", "hakeeperState"}),
    )
    wiring.watch(logsets, r.PODS, set_of_pod("LogSet"))
    wiring.watch(logsets, r.PVCS, set_of_pod("LogSet"))
    wiring.watch(logsets, r.STORAGECLASSES, sets_of_storage_class(wiring.caches, "LogSet"))
    wiring.watch(logsets, r.BUCKETCLAIMS, logsets_of_claim(wiring.caches))
