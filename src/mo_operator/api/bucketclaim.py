"""BucketClaim: one object-storage path owned by one cluster, with a reclaim policy."""

from __future__ import annotations

from typing import Literal

from .base import APIModel, opt, req
from .common import ConditionalStatus, S3Provider
from .fields import FreeObject
from .k8s import Resource

__all__ = ["BucketClaim", "BucketClaimSpec", "BucketClaimStatus"]


class BucketClaimSpec(APIModel):
    """Desired state of a BucketClaim."""

    s3: S3Provider = req("The claimed S3 path.")
    log_set_spec: FreeObject = req(
        "A copy of the LogSet's pod template (corev1.PodTemplateSpec), used to run the job that deletes "
        "the data."
    )


class BucketClaimStatus(ConditionalStatus):
    """Observed state of a BucketClaim."""

    bind_to: str | None = opt('The LogSet the claim is bound to, "<namespace>/<name>"; empty once released.')
    state: Literal["InUse", "Released", "Deleting"] | None = opt(
        "InUse (bound to a LogSet), Released (data kept, reusable) or Deleting (data being deleted)."
    )


class BucketClaim(Resource):
    """A BucketClaim is an object-storage path used by one MatrixOne cluster; like a
    PersistentVolumeClaim, it keeps or deletes the data when the cluster goes, per its policy."""

    spec: BucketClaimSpec = req("Desired state of the claim.")
    status: BucketClaimStatus | None = opt("Observed state of the claim.")
