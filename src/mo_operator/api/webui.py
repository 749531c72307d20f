"""WebUI: the optional web console of a cluster."""

from __future__ import annotations

from .base import APIModel, opt
from .common import (
    ConditionalStatus,
    FailoverStatus,
    ObjectByMeta,
    PodSet,
    PullPolicy,
    RollingUpdateStrategy,
    RolloutStatus,
    ServiceTypeField,
)
from .k8s import Resource

__all__ = ["WebUI", "WebUIDeps", "WebUISpec", "WebUIStatus"]


class WebUISpec(PodSet):
    """Desired state of a WebUI."""

    service_type: ServiceTypeField = opt(
        "Type of the web console Service: ClusterIP (the default), NodePort or LoadBalancer."
    )
    update_strategy: RollingUpdateStrategy | None = opt("How fast the console's pods roll during an update.")
    image_pull_policy: PullPolicy | None = opt(
        "Pull policy of the console images: Always, Never or IfNotPresent."
    )


class WebUIDeps(APIModel):
    """What a WebUI needs before it can start."""

    cnset: ObjectByMeta | None = opt("The CNSet the console queries, as {metadata: {name, namespace}}.")


class WebUIStatus(ConditionalStatus, RolloutStatus, FailoverStatus):
    """Observed state of a WebUI."""


class WebUI(Resource):
    """A WebUI is the web console of a MatrixOne cluster."""

    spec: WebUISpec | None = opt("Desired state of the console.")
    deps: WebUIDeps | None = opt("What the console depends on.")
    status: WebUIStatus | None = opt("Observed state of the console.")
