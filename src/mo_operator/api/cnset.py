"""CNSet: a group of compute nodes."""

from __future__ import annotations

from typing import Literal

from .base import APIModel, opt, req
from .common import (
    ConditionalStatus,
    DisruptionBudget,
    LogSetRef,
    MainContainerOverlay,
    ObjectByMeta,
    PodSet,
    RollingUpdateStrategy,
    RolloutStatus,
    ServiceTypeField,
    SharedStorageCache,
    Volume,
)
from .fields import Duration, Int32, Int64
from .k8s import Resource, ResourceRequirements
from .limits import MAX_IMAGE_LENGTH

__all__ = [
    "CNLabel",
    "CNSet",
    "CNSetDeps",
    "CNSetSpec",
    "CNSetStatus",
    "CNStore",
    "PythonUdfSidecar",
    "ScalingConfig",
]


class PythonUdfSidecar(APIModel):
    """A Python UDF server running next to each CN."""

    enabled: bool | None = opt("Runs the sidecar.")
    port: Int64 | None = opt("Port of the UDF server on localhost; 50051 by default.", ge=1, le=65535)
    image: str | None = opt(
        "Image of the UDF server; composer000/mo-python-udf-server:latest by default.",
        max_length=MAX_IMAGE_LENGTH,
    )
    resources: ResourceRequirements | None = opt("Compute resources of the sidecar.")
    overlay: MainContainerOverlay | None = opt("Overrides of the sidecar container.")


class CNLabel(APIModel):
    """A label of the CN stores, which routes sessions and work to them."""

    key: str | None = opt("The label key; must not be empty.")
    values: list[str] | None = opt("The label values; at least one, none empty.")


class ScalingConfig(APIModel):
    """How CNs leave the set on scale-in and update."""

    store_drain_enabled: bool | None = opt(
        "Drain a CN (move its sessions away, stop new ones) before it is removed; off by default."
    )
    store_drain_timeout: Duration | None = opt(
        "Longest a drain may take before the CN is removed anyway; 5m by default when draining is on."
    )
    min_delay_seconds: Int32 | None = opt(
        "Least time a drain lasts, for the draining state to reach the whole cluster; 15 by default.", ge=0
    )


class CNSetSpec(PodSet):
    """Desired state of a CNSet."""

    cache_volume: Volume | None = opt(
        "A persistent volume for the local cache of shared storage; node storage is used if unset."
    )
    shared_storage_cache: SharedStorageCache | None = opt("Sizes of the caches of shared storage.")
    python_udf_sidecar: PythonUdfSidecar | None = opt("A Python UDF server next to each CN.")
    service_type: ServiceTypeField = opt(
        "Type of the CN client Service: ClusterIP (the default), NodePort or LoadBalancer."
    )
    service_annotations: dict[str, str] | None = opt("Annotations of the CN client Service.")
    node_port: Int32 | None = opt(
        "Node port of the client Service when its type is NodePort or LoadBalancer.", ge=1, le=65535
    )
    role: Literal["TP", "AP"] | None = opt("Deprecated, use cnLabels: the CN role, TP (the default) or AP.")
    cn_labels: list[CNLabel] | None = opt("Labels of every CN store of the set.")
    scaling_config: ScalingConfig | None = opt("How CNs are drained when they leave.")
    update_strategy: RollingUpdateStrategy | None = opt(
        "How fast CNs roll during an update; maxSurge 1 and maxUnavailable 0 by default."
    )
    termination_policy: Literal["Delete", "Drain"] | None = opt(
        "What deleting the set does to its CNs: Delete them (the default) or Drain them first."
    )
    pod_management_policy: str | None = opt('"Pooling" when a CNPool manages the pods of this set.')
    pods_to_delete: list[str] | None = opt("Names of pods of the set to delete (scale in those pods first).")
    pause_update: bool | None = opt("Pauses rolling updates of the set.")
    reuse_pvc: bool | None = opt(
        "Reuse the volumes of removed pods for new ones; off by default.", alias="reusePVC"
    )
    pod_disruption_budget: DisruptionBudget | None = opt(
        "The PodDisruptionBudget of the set's pods (an addition of this operator): kept by default, "
        "with the default budget its maxUnavailable describes."
    )


class CNStore(APIModel):
    """One CN store of the set."""

    uuid: str | None = opt("Store UUID in MatrixOne.")
    pod_name: str | None = opt("Name of the store's pod.")
    state: str | None = opt("Unknown, Draining or Up.")


class CNSetStatus(ConditionalStatus, RolloutStatus):
    """Observed state of a CNSet."""

    stores: list[CNStore] | None = opt("The CN stores of the set.")
    replicas: Int32 | None = opt("Pods of the set.")
    ready_replicas: Int32 | None = opt("Pods of the set that are ready.")
    label_selector: str | None = opt("Label selector of the set's pods, for the scale subresource.")
    host: str | None = opt("Host name of the CN client Service.")
    port: Int64 | None = opt("MySQL port of the CN client Service.")


class CNSetDeps(LogSetRef):
    """What a CNSet needs before it can start: its log service and its TN set."""

    dn_set: ObjectByMeta | None = opt("The DNSet (TNSet) the CNs use, as {metadata: {name, namespace}}.")


class CNSet(Resource):
    """A CNSet is a group of MatrixOne compute nodes (CN) with one image, resources and labels."""

    spec: CNSetSpec = req("Desired state of the set.")
    deps: CNSetDeps | None = opt("The log service (and TN set) the CNs connect to.")
    status: CNSetStatus | None = opt("Observed state of the set.")
