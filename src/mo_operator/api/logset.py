"""LogSet: the log service (a Raft group whose members also run HAKeeper)."""

from __future__ import annotations

from typing import Literal

from .base import APIModel, opt, req
from .common import (
    ConditionalStatus,
    DisruptionBudget,
    FailoverStatus,
    PodSet,
    RetentionPolicy,
    RolloutStatus,
    SharedStorageProvider,
    Volume,
)
from .fields import Duration, Int32, Int64
from .k8s import Resource
from .limits import MAX_PATH_LENGTH, MAX_SHARDS

__all__ = ["InitialConfig", "LogSet", "LogSetDiscovery", "LogSetSpec", "LogSetStatus"]


class InitialConfig(APIModel):
    """How HAKeeper bootstraps the cluster; fixed once the LogSet exists."""

    log_shards: Int64 | None = opt(
        "Number of log shards; 1 by default, and equal to dnShards (MatrixOne runs one TN shard per log "
        "shard). Cannot change after creation.",
        ge=1,
        le=MAX_SHARDS,
    )
    dn_shards: Int64 | None = opt(
        "Number of TN (DN) shards; 1 by default, and 1 from MatrixOne 2.0 on. Cannot change after creation.",
        ge=1,
        le=MAX_SHARDS,
    )
    log_shard_replicas: Int64 | None = opt(
        "Replicas of each log shard: 3 by default when the LogSet has 3 or more replicas, else 1. At most "
        "replicas. Cannot change after creation.",
        ge=1,
        le=MAX_SHARDS,
    )
    restore_from: str | None = opt(
        "Path of HAKeeper data to restore from when HAKeeper bootstraps.", max_length=MAX_PATH_LENGTH
    )


class LogSetSpec(PodSet):
    """Desired state of a LogSet."""

    volume: Volume = req("The persistent volume of each log service pod.")
    shared_storage: SharedStorageProvider = req("The shared object storage of the cluster's data.")
    initial_config: InitialConfig | None = opt("Bootstrap settings of HAKeeper; immutable.")
    store_failure_timeout: Duration | None = opt(
        "How long a store must be down before it is replaced (failover); 10m by default."
    )
    failed_pod_strategy: Literal["Orphan", "Delete"] | None = opt(
        "What failover does with a failed pod: Delete it (the default) or Orphan it for a human to inspect."
    )
    pvc_retention_policy: RetentionPolicy | None = opt(
        "What happens to the volumes of log service pods removed by the deletion of the LogSet (or its "
        "cluster) or by scale-in: Retain them (the default; upstream's default is Delete) for a pod of the "
        "same name to reuse, or Delete them. Follows s3RetentionPolicy when only that is set."
    )
    pod_disruption_budget: DisruptionBudget | None = opt(
        "The PodDisruptionBudget of the set's pods (an addition of this operator): kept by default, "
        "with the default budget its maxUnavailable describes."
    )


class LogSetDiscovery(APIModel):
    """Where clients find the log service."""

    port: Int32 | None = opt("Port of the discovery service.")
    address: str | None = opt("Host name of the discovery service.")


class LogSetStatus(ConditionalStatus, RolloutStatus, FailoverStatus):
    """Observed state of a LogSet."""

    discovery: LogSetDiscovery | None = opt(
        "The HAKeeper discovery address, once the discovery Service and the log StatefulSet exist."
    )
    hakeeper_state: str | None = opt(
        "HAKeeper's bootstrap state as it last answered (Created, Bootstrapping, "
        "BootstrapCommandsReceived, BootstrapFailed, Running); the HAKeeper condition says whether it answers."
    )


class LogSet(Resource):
    """A LogSet is a set of MatrixOne log service instances: the Raft groups that hold the log, and
    HAKeeper, which coordinates the cluster."""

    spec: LogSetSpec = req("Desired state of the LogSet.")
    status: LogSetStatus | None = opt("Observed state of the LogSet.")
