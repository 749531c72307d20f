"""ProxySet: the MySQL proxy, which routes sessions to CNs."""

from __future__ import annotations

from .base import opt, req
from .common import ConditionalStatus, DisruptionBudget, LogSetRef, PodSet, RolloutStatus, ServiceTypeField
from .fields import Int32, Int64
from .k8s import Resource

__all__ = ["ProxySet", "ProxySetDeps", "ProxySetSpec", "ProxySetStatus"]


class ProxySetSpec(PodSet):
    """Desired state of a ProxySet."""

    service_type: ServiceTypeField = opt(
        "Type of the proxy Service: ClusterIP (the default), NodePort or LoadBalancer."
    )
    service_annotations: dict[str, str] | None = opt("Annotations of the proxy Service.")
    node_port: Int32 | None = opt(
        "Node port of the proxy Service when its type is NodePort or LoadBalancer.", ge=1, le=65535
    )
    min_ready_seconds: Int32 | None = opt(
        "Seconds a new proxy pod must be ready before it counts as available.", ge=0
    )
    wait_plugin_addr: str | None = opt(
        'Address ("host:port") of a plugin the proxy waits for before it starts.'
    )
    pod_disruption_budget: DisruptionBudget | None = opt(
        "The PodDisruptionBudget of the set's pods (an addition of this operator): kept by default, "
        "with the default budget its maxUnavailable describes."
    )


class ProxySetStatus(ConditionalStatus, RolloutStatus):
    """Observed state of a ProxySet."""

    host: str | None = opt("Host name of the proxy Service.")
    port: Int64 | None = opt("MySQL port of the proxy Service.")
    replicas: Int32 | None = opt("Pods of the set.")
    ready_replicas: Int32 | None = opt("Pods of the set that are ready.")
    label_selector: str | None = opt("Label selector of the set's pods, for the scale subresource.")


class ProxySetDeps(LogSetRef):
    """What a ProxySet needs before it can start: its log service."""


class ProxySet(Resource):
    """A ProxySet is a set of MatrixOne proxies: the MySQL endpoint that routes sessions to CNs."""

    spec: ProxySetSpec = req("Desired state of the set.")
    deps: ProxySetDeps | None = opt("The log service the proxies connect to.")
    status: ProxySetStatus | None = opt("Observed state of the set.")
