"""CNPool: a pool of warm CN pods that claims take from."""

from __future__ import annotations

from .base import APIModel, opt, req
from .cnset import CNSetDeps, CNSetSpec
from .common import ConditionalStatus
from .fields import Duration, Int32
from .k8s import Resource
from .limits import MAX_REPLICAS

__all__ = [
    "CNPool",
    "CNPoolSpec",
    "CNPoolStatus",
    "CNPoolTemplate",
    "PoolScaleStrategy",
    "PoolStrategy",
    "PoolUpdateStrategy",
]


class CNPoolTemplate(CNSetSpec):
    """The CNSet spec of the pool's pods."""

    replicas: Int32 | None = opt("Ignored: the pool decides how many pods its CNSets run.", ge=0)  # type: ignore[assignment]


class PoolUpdateStrategy(APIModel):
    """How the pool replaces pods after its template changes."""

    reclaim_timeout: Duration | None = opt(
        "Longest a claimed pod of an old template is kept before it is reclaimed."
    )


class PoolScaleStrategy(APIModel):
    """How many pods the pool keeps."""

    max_idle: Int32 = req(
        f"Idle pods kept ready for new claims; at most {MAX_REPLICAS}.", ge=0, le=MAX_REPLICAS
    )
    max_pods: Int32 | None = opt(
        f"Most pods the pool may run; {MAX_REPLICAS} (the most a CNSet runs) if unset.", ge=0, le=MAX_REPLICAS
    )


class PoolStrategy(APIModel):
    """How the pool updates and scales."""

    update_strategy: PoolUpdateStrategy = req("How the pool updates.")
    scale_strategy: PoolScaleStrategy = req("How the pool scales.")


class CNPoolSpec(APIModel):
    """Desired state of a CNPool."""

    template: CNPoolTemplate = req("The CNSet spec of the pool's pods.")
    pod_labels: dict[str, str] | None = opt("Labels of the pool's pods, which claims select.")
    deps: CNSetDeps = req("The log service (and TN set) the pool's CNs connect to.")
    strategy: PoolStrategy = req("How the pool updates and scales.")


class CNPoolStatus(ConditionalStatus):
    """Observed state of a CNPool."""


class CNPool(Resource):
    """A CNPool keeps warm CN pods that CNClaims take on demand."""

    spec: CNPoolSpec = req("Desired state of the pool.")
    status: CNPoolStatus | None = opt("Observed state of the pool.")
