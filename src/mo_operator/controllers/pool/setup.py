"""The wiring of the CN pool controllers, named as upstream's (and so are their
finalizers), and the trouble each warns of."""

from __future__ import annotations

from ..framework import resources as r
from ..wiring import Wiring
from .cnclaim import CNClaimActor
from .cnclaimset import CNClaimSetActor
from .cnpool import CNPoolActor
from .mappers import claims_of_pod, claims_waiting_in_namespace, pool_of_claim, pool_of_pod

POOL_WARNING_REASONS = frozenset({"InvalidSpec", "MaxPodsReached", "RolloutStalled"})
"""A spec refused, a pool that may not grow for the claims waiting, or its set's rollout stalled."""
CLAIM_WARNING_REASONS = frozenset({"InvalidSpec", "PodLost"})
"""A spec refused, or a claimed pod gone."""
CLAIMSET_WARNING_REASONS = frozenset({"InvalidSpec"})


def setup(wiring: Wiring) -> None:
    """CNPools (their CNSets, woken by their pods and claims), CNClaims (woken by their
    pods and by pools that may now serve them) and CNClaimSets (their CNClaims)."""
    env, caches = wiring.env, wiring.caches
    pools = wiring.actor_controller(
        "cn-pool-manager", r.CNPOOLS, CNPoolActor(env), (r.CNSETS,), warning_reasons=POOL_WARNING_REASONS
    )
    wiring.watch(pools, r.PODS, pool_of_pod)
    wiring.watch(pools, r.CNCLAIMS, pool_of_claim)
    claims = wiring.actor_controller(
        "cn-claim-manager",
        r.CNCLAIMS,
        CNClaimActor(env),
        (),
        reads=(r.CNSETS,),
        warning_reasons=CLAIM_WARNING_REASONS,
    )
    wiring.watch(claims, r.PODS, claims_of_pod(caches))
    wiring.watch(claims, r.CNPOOLS, claims_waiting_in_namespace(caches))
    wiring.actor_controller(
        "cn-claimset-manager",
        r.CNCLAIMSETS,
        CNClaimSetActor(env),
        (r.CNCLAIMS,),
        reads=(r.PODS,),
        warning_reasons=CLAIMSET_WARNING_REASONS,
    )
