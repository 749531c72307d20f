"""What wakes the pool controllers: a pool pod's change mapped to the claims it
matters to, a claim's to the pool it is nominated to."""

from __future__ import annotations

from typing import Any, cast

from mo_operator.controllers.framework.env import Caches
from mo_operator.controllers.pool.mappers import claims_of_pod, claims_waiting_in_namespace, pool_of_claim
from mo_operator.kube.controller.controller import Request
from mo_operator.matrixone import labels

from .controller_fakes import FakeCaches
from .pool_fakes import claim, pool, pool_pod

CLAIMS = (
    claim("waiting"),
    claim("bound", pod_name="pool-abc-cn-0"),
    claim("moving", pod_name="pool-abc-cn-2", sourcePod={"podName": "pool-abc-cn-1"}),
    claim("going", deleting=True),
)


def names(requests: Any) -> list[str]:
    return [q.name for q in requests]


def test_an_idle_pod_wakes_the_claims_waiting_for_one_and_those_leaving_it() -> None:
    mapper = claims_of_pod(cast(Caches, FakeCaches(*CLAIMS)))
    assert names(mapper(pool_pod(1))) == ["waiting", "moving"]
    assert names(mapper(pool_pod(3))) == ["waiting"]


def test_a_bound_pod_wakes_its_claim_only_and_a_pod_out_of_any_pool_nothing() -> None:
    mapper = claims_of_pod(cast(Caches, FakeCaches(*CLAIMS)))
    assert names(mapper(pool_pod(0, labels.POOL_PHASE_BOUND, claimed_by="bound"))) == ["bound"]
    assert names(mapper(pool_pod(0, None))) == []


def test_a_new_pool_wakes_the_claims_of_its_namespace_waiting_for_a_pod() -> None:
    mapper = claims_waiting_in_namespace(cast(Caches, FakeCaches(*CLAIMS)))
    assert names(mapper(pool())) == ["waiting"]


def test_a_claim_wakes_the_pool_its_spec_or_its_label_names() -> None:
    assert list(pool_of_claim(claim("c", pool="p"))) == [Request("ns", "p")]
    assert list(pool_of_claim(claim("c", claim_labels={labels.POOL_NAME: "q"}))) == [Request("ns", "q")]
    assert list(pool_of_claim(claim("c"))) == []
