"""DNSet and TNSet: the transaction nodes. TN is MatrixOne's newer name for DN; both
kinds have the same schema, and a cluster spec accepts ``tn`` and ``dn``."""

from __future__ import annotations

from .base import opt, req
from .common import (
    ConditionalStatus,
    DisruptionBudget,
    FailoverStatus,
    LogSetRef,
    PodSet,
    RolloutStatus,
    SharedStorageCache,
    Volume,
)
from .k8s import Resource

__all__ = ["DNSet", "DNSetDeps", "DNSetSpec", "DNSetStatus", "TNSet"]


class DNSetSpec(PodSet):
    """Desired state of a DNSet (TNSet)."""

    cache_volume: Volume | None = opt(
        "A persistent volume for the local cache of shared storage; node storage is used if unset."
    )
    shared_storage_cache: SharedStorageCache | None = opt("Sizes of the caches of shared storage.")
    pod_disruption_budget: DisruptionBudget | None = opt(
        "The PodDisruptionBudget of the set's pods (an addition of this operator): kept by default, "
        "with the default budget its maxUnavailable describes."
    )


class DNSetStatus(ConditionalStatus, RolloutStatus, FailoverStatus):
    """Observed state of a DNSet (TNSet)."""


class DNSetDeps(LogSetRef):
    """What a DNSet (TNSet) needs before it can start: its log service."""


class DNSet(Resource):
    """A DNSet is a set of MatrixOne transaction nodes (DN, called TN in newer MatrixOne)."""

    spec: DNSetSpec = req("Desired state of the set.")
    deps: DNSetDeps | None = opt("The log service the set connects to; one of logSet or externalLogSet.")
    status: DNSetStatus | None = opt("Observed state of the set.")


class TNSet(DNSet):
    """A TNSet is a set of MatrixOne transaction nodes (TN); it is the newer name of DNSet, with the
    same schema."""
