"""CNClaim and CNClaimSet: taking CN pods from a pool on demand."""

from __future__ import annotations

from typing import Literal

from .base import APIModel, opt, req
from .cnset import CNLabel
from .common import ConditionalStatus
from .fields import DateTime, Int32, Int64
from .k8s import LabelSelector, Resource
from .limits import MAX_REPLICAS

__all__ = [
    "CNClaim",
    "CNClaimSet",
    "CNClaimSetSpec",
    "CNClaimSetStatus",
    "CNClaimSpec",
    "CNClaimStatus",
    "CNClaimTemplate",
    "CNStoreStatus",
    "ClaimPodRef",
    "EmbeddedMetadata",
    "MigrateStatus",
    "Workload",
]


class ClaimPodRef(APIModel):
    """A pod a claim owns."""

    pod_name: str | None = opt(
        "Name of the pod; set by the controller when the claim binds, then changed only to migrate "
        "the claim to another pod (with sourcePod naming the one it leaves)."
    )
    node_name: str | None = opt("Node of the pod; set by the controller.")


class CNClaimSpec(ClaimPodRef):
    """Desired state of a CNClaim."""

    source_pod: ClaimPodRef | None = opt(
        "The pod the claim leaves while it migrates to podName; cleared once that pod is back in its pool."
    )
    selector: LabelSelector = req("Which pool pods the claim may take.")
    cn_labels: list[CNLabel] | None = opt("CN labels the claimed store gets.")
    owner_name: str | None = opt("Name of the claim's owner, recorded on the pod.")
    additional_pod_labels: dict[str, str] | None = opt("Labels added to the pod once the claim takes it.")
    pool_name: str | None = opt("The pool the claim is nominated to; set by the controller.")


class Workload(APIModel):
    """The load on a CN."""

    connections: Int64 | None = opt("Open sessions.")
    pipelines: Int64 | None = opt("Running pipelines.")
    replicas: Int64 | None = opt("Sharded table replicas served.")


class MigrateStatus(APIModel):
    """Progress of moving a claim to another pod."""

    source: Workload | None = opt("Load still on the source pod.")


class CNStoreStatus(APIModel):
    """The CN store a claim is bound to."""

    service_id: str | None = opt("Store UUID.", alias="serviceID")
    lock_service_address: str | None = opt("Lock service address of the store.")
    pipeline_service_address: str | None = opt("Pipeline service address of the store.")
    sql_address: str | None = opt("MySQL address of the store.")
    query_address: str | None = opt("Query service address of the store.")
    work_state: Int32 | None = opt("HAKeeper work state of the store.")
    labels: list[CNLabel] | None = opt("CN labels of the store.")
    pod_name: str | None = opt(
        'Name of the store\'s pod (the JSON name is "string", as upstream has it).', alias="string"
    )
    bound_time: DateTime | None = opt("When the store was bound.")


class CNClaimStatus(ConditionalStatus):
    """Observed state of a CNClaim."""

    phase: Literal["Pending", "Bound", "Lost", "Outdated"] | None = opt("Pending, Bound, Lost or Outdated.")
    store: CNStoreStatus | None = opt("The bound store.")
    bound_time: DateTime | None = opt("When the claim was bound.")
    migrate: MigrateStatus | None = opt("Progress of a migration to another pod.")


class CNClaim(Resource):
    """A CNClaim takes one CN pod from a CNPool for as long as it exists."""

    spec: CNClaimSpec | None = opt("Desired state of the claim.")
    status: CNClaimStatus | None = opt("Observed state of the claim.")


class EmbeddedMetadata(APIModel):
    """Metadata of the claims a CNClaimSet creates."""

    name: str | None = opt("Name prefix of the claims.")
    labels: dict[str, str] | None = opt("Labels of the claims.")
    annotations: dict[str, str] | None = opt("Annotations of the claims.")


class CNClaimTemplate(APIModel):
    """The claims a CNClaimSet creates."""

    metadata: EmbeddedMetadata | None = opt("Metadata of the claims.")
    spec: CNClaimSpec | None = opt("Spec of the claims.")


class CNClaimSetSpec(APIModel):
    """Desired state of a CNClaimSet."""

    replicas: Int32 = req(f"Number of claims; at most {MAX_REPLICAS}.", ge=0, le=MAX_REPLICAS)
    template: CNClaimTemplate = req("The claims to create.")
    selector: LabelSelector | None = opt("Selects the claims of the set; must match the template's labels.")


class CNClaimSetStatus(ConditionalStatus):
    """Observed state of a CNClaimSet."""

    replicas: Int32 | None = opt("Claims of the set.")
    ready_replicas: Int32 | None = opt("Claims of the set that are bound.")
    claims: list[CNClaimStatus] | None = opt("State of each claim.")
    label_selector: str | None = opt("Label selector of the claims, for the scale subresource.")
    pod_selector: str | None = opt("Deprecated: label selector of the claimed pods.")


class CNClaimSet(Resource):
    """A CNClaimSet keeps a number of CNClaims, like a ReplicaSet keeps pods."""

    spec: CNClaimSetSpec | None = opt("Desired state of the set.")
    status: CNClaimSetStatus | None = opt("Observed state of the set.")
