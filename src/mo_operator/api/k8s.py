"""The few Kubernetes API types our kinds embed with a typed schema.

Resource requirements, label selectors, local object references and
``metav1.Condition`` are small and validated on every write, so they are typed as
kube-openapi publishes them. Larger embedded types (affinity, probes, volumes,
containers) stay free-form objects: see :data:`mo_operator.api.fields.FreeObject`.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from .base import APIModel, opt, req
from .fields import CRDHint, DateTime, Int64, Quantity

__all__ = [
    "CONDITION_REASON_PATTERN",
    "CONDITION_TYPE_PATTERN",
    "Condition",
    "ConditionList",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LocalObjectReference",
    "ObjectMeta",
    "Resource",
    "ResourceClaim",
    "ResourceRequirements",
]

ObjectMeta = dict[str, Any]
"""``metadata``: validated by the API server itself, kept as the plain dict it sends."""


class Resource(APIModel):
    """The fields every top-level object has; a kind adds spec, status and the like."""

    api_version: str | None = opt("The versioned schema of this object: core.matrixorigin.io/v1alpha1.")
    kind: str | None = opt("The kind of this object.")
    metadata: ObjectMeta | None = opt("Standard object metadata: name, namespace, labels, annotations, ...")


CONDITION_TYPE_PATTERN = r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
CONDITION_REASON_PATTERN = r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"


class ResourceClaim(APIModel):
    """One entry of the Pod's ``spec.resourceClaims`` that the container uses."""

    name: str = req("Name of an entry in the Pod's spec.resourceClaims whose resource the container uses.")
    request: str | None = opt("The request of that claim to use; empty means the whole claim.")


class ResourceRequirements(APIModel):
    """Compute resources of a container (``corev1.ResourceRequirements``)."""

    claims: Annotated[list[ResourceClaim], CRDHint(list_type="map", list_map_keys=("name",))] | None = opt(
        "Dynamic resource claims the container uses, by name (needs the DynamicResourceAllocation feature)."
    )
    limits: dict[str, Quantity] | None = opt(
        "The most of each resource the container may use, e.g. cpu: 4, memory: 12Gi."
    )
    requests: dict[str, Quantity] | None = opt(
        "The resources the container is guaranteed and scheduled by; each defaults to its limit when only "
        "the limit is set, and may not exceed it."
    )


class LocalObjectReference(APIModel):
    """A reference to an object (usually a Secret) in the same namespace."""

    crd_hint: ClassVar[CRDHint] = CRDHint(map_type="atomic")

    name: str | None = opt("Name of the referenced object in the same namespace.", max_length=253)


class LabelSelectorRequirement(APIModel):
    """One requirement of a label selector: a key, an operator and values."""

    key: str = req("The label key the requirement applies to.")
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"] = req(
        "How the key relates to the values: In, NotIn, Exists or DoesNotExist."
    )
    values: list[str] | None = opt(
        "The values to match; non-empty for In and NotIn, empty for Exists and DoesNotExist."
    )


class LabelSelector(APIModel):
    """A label query; matchLabels and matchExpressions are ANDed, an empty selector matches everything."""

    crd_hint: ClassVar[CRDHint] = CRDHint(map_type="atomic")

    match_expressions: list[LabelSelectorRequirement] | None = opt(
        "Requirements on labels, all of which must hold."
    )
    match_labels: dict[str, str] | None = opt(
        "Labels that must all be present with these values (each is an In requirement with one value)."
    )


class Condition(APIModel):
    """One aspect of an object's current state (``metav1.Condition``)."""

    type: str = req(
        "Type of the condition in CamelCase, e.g. Ready or Synced.",
        max_length=316,
        pattern=CONDITION_TYPE_PATTERN,
    )
    status: Literal["True", "False", "Unknown"] = req("Status of the condition: True, False or Unknown.")
    observed_generation: Int64 | None = opt(
        "The metadata.generation the condition was computed from; older than the object's generation "
        "means the condition is out of date.",
        ge=0,
    )
    last_transition_time: DateTime = req("When the condition last changed status.")
    reason: str = req(
        "A CamelCase machine-readable reason for the last transition.",
        min_length=1,
        max_length=1024,
        pattern=CONDITION_REASON_PATTERN,
    )
    message: str = req("A human-readable message about the last transition; may be empty.", max_length=32768)


ConditionList = Annotated[list[Condition], CRDHint(list_type="map", list_map_keys=("type",))]
"""Conditions, at most one per type (as ``meta.SetStatusCondition`` keeps them)."""
