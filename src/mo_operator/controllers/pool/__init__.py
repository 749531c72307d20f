"""CN pools: the CNPool controller (``cnpool``), the CNClaim controller
(``cnclaim``) and the CNClaimSet controller (``cnclaimset``), their pure
decisions (``decisions``) and the event mappers that wake them (``mappers``).
The pooling side of the CNSet is ``controllers/cnset/pooling.py``."""

from .cnclaim import CNClaimActor
from .cnclaimset import CNClaimSetActor
from .cnpool import CNPoolActor
from .mappers import claims_of_pod, claims_waiting_in_namespace, pool_of_claim, pool_of_pod

__all__ = [
    "CNClaimActor",
    "CNClaimSetActor",
    "CNPoolActor",
    "claims_of_pod",
    "claims_waiting_in_namespace",
    "pool_of_claim",
    "pool_of_pod",
]
