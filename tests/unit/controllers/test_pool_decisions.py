"""The CN pool decisions (controllers/pool/decisions.py): sizing a pool,
choosing the pod a claim binds, and scaling a claim set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.api.base import parse
from mo_operator.api.cnclaim import CNClaimSpec
from mo_operator.controllers.pool.cnclaim_reads import EMPTY_SPEC
from mo_operator.controllers.pool.decisions import (
    BOUND,
    DONE,
    DRAINING,
    LOST,
    OUTDATED,
    PENDING,
    RECLAIM,
    WAIT,
    ClaimScale,
    ClaimVictim,
    MigrationStep,
    PoolSize,
    bound_phase,
    claim_candidates,
    claim_deletion_order,
    claimset_scale,
    matching_pool,
    migration_step,
    natural_key,
    pool_replicas,
)
from mo_operator.matrixone import labels

from .pool_fakes import pool, pool_pod

IDLE, BOUND_PHASE = labels.POOL_PHASE_IDLE, labels.POOL_PHASE_BOUND
SELECTS_DEFAULT = {"selector": {"matchLabels": {"pool": "default"}}}


def claim(spec: dict[str, Any]) -> CNClaimSpec:
    """A claim's spec as the controller reads it."""
    return parse(CNClaimSpec, spec)


SPEC = claim(SELECTS_DEFAULT)


# --- sizing ---------------------------------------------------------------------------


def test_a_pool_runs_its_pods_in_use_its_pending_claims_and_max_idle() -> None:
    assert pool_replicas(in_use=3, pending=2, max_idle=2, max_pods=None) == PoolSize(7)


def test_max_pods_caps_the_pool_less_what_older_templates_hold() -> None:
    assert pool_replicas(in_use=3, pending=2, max_idle=2, max_pods=6) == PoolSize(6, capped=True)
    assert pool_replicas(in_use=3, pending=0, max_idle=2, max_pods=6, old_in_use=2) == PoolSize(
        4, capped=True
    )


def test_the_pool_never_asks_fewer_pods_than_are_in_use() -> None:
    assert pool_replicas(in_use=5, pending=1, max_idle=2, max_pods=3) == PoolSize(5, capped=True)


def test_a_pool_with_waiting_claims_does_not_shrink() -> None:
    assert pool_replicas(in_use=1, pending=1, max_idle=1, max_pods=None, current_replicas=5).replicas == 5
    assert pool_replicas(in_use=1, pending=0, max_idle=1, max_pods=None, current_replicas=5).replicas == 2
    assert pool_replicas(in_use=1, pending=1, max_idle=1, max_pods=4, current_replicas=5).replicas == 4


@settings(max_examples=300, deadline=None)
@given(
    in_use=st.integers(0, 10),
    pending=st.integers(0, 10),
    max_idle=st.integers(0, 5),
    max_pods=st.none() | st.integers(0, 20),
    old=st.integers(0, 10),
    current=st.integers(0, 20),
)
def test_sizing_bounds(
    in_use: int, pending: int, max_idle: int, max_pods: int | None, old: int, current: int
) -> None:
    size = pool_replicas(
        in_use=in_use,
        pending=pending,
        max_idle=max_idle,
        max_pods=max_pods,
        old_in_use=old,
        current_replicas=current,
    )
    assert size.replicas >= in_use
    if max_pods is not None and in_use + old <= max_pods:
        assert size.replicas + old <= max_pods
    if max_pods is None or in_use + pending + max_idle + old <= max_pods:
        assert size.replicas >= in_use + pending + max_idle and not size.capped


# --- binding --------------------------------------------------------------------------


def names(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    return [p["metadata"]["name"] for p in pods]


def test_a_claim_takes_idle_unclaimed_current_pods_in_name_order() -> None:
    pods = [
        pool_pod(10),
        pool_pod(2),
        pool_pod(3, BOUND_PHASE, claimed_by="other"),
        pool_pod(4, labels.POOL_PHASE_UNKNOWN),
        pool_pod(5, labels.POOL_PHASE_DRAINING),
        pool_pod(6, extra_labels={labels.POD_OUTDATED: "y"}),
        pool_pod(7, deleting=True),
        pool_pod(8, extra_labels={"pool": "other"}),
        pool_pod(9),
    ]
    assert names(claim_candidates(SPEC, pods, taken={"pool-abc-cn-9"})) == ["pool-abc-cn-2", "pool-abc-cn-10"]


def test_a_claim_keeps_to_its_pool_and_prefers_what_its_owner_held_last() -> None:
    pods = [
        pool_pod(0),
        pool_pod(1, extra_labels={labels.POD_LAST_OWNER: "team-a"}),
        pool_pod(2, extra_labels={labels.POOL_NAME: "elsewhere"}),
    ]
    spec = {**SELECTS_DEFAULT, "ownerName": "team-a"}
    assert names(claim_candidates(claim(spec), pods)) == ["pool-abc-cn-1", "pool-abc-cn-0", "pool-abc-cn-2"]
    assert names(claim_candidates(claim({**spec, "poolName": "elsewhere"}), pods)) == ["pool-abc-cn-2"]


def test_name_order_compares_numbers_as_numbers() -> None:
    assert sorted(["x-cn-10", "x-cn-2", "w-cn-3"], key=natural_key) == ["w-cn-3", "x-cn-2", "x-cn-10"]


def test_a_claim_is_nominated_to_the_first_pool_whose_pod_labels_it_selects() -> None:
    other = pool("a-other")
    other["spec"]["podLabels"] = {"pool": "other"}
    assert matching_pool(SPEC, [pool("z"), other, pool("b")])["metadata"]["name"] == "b"  # type: ignore[index]
    assert matching_pool(claim({"selector": {"matchLabels": {"pool": "none"}}}), [pool()]) is None


def test_the_phase_of_a_claim_follows_its_pod() -> None:
    mine = pool_pod(0, BOUND_PHASE, claimed_by="c")
    assert bound_phase(mine, "c") == BOUND
    assert (
        bound_phase(pool_pod(0, BOUND_PHASE, claimed_by="c", extra_labels={labels.POD_OUTDATED: "y"}), "c")
        == OUTDATED
    )
    assert bound_phase(None, "c") == LOST
    assert bound_phase(pool_pod(0, BOUND_PHASE, claimed_by="c", deleting=True), "c") == LOST
    assert bound_phase(pool_pod(0, BOUND_PHASE, claimed_by="other"), "c") == LOST
    assert bound_phase(pool_pod(0, labels.POOL_PHASE_DRAINING), "c") == LOST
    failed = pool_pod(0, BOUND_PHASE, claimed_by="c")
    failed["status"]["phase"] = "Failed"
    assert bound_phase(failed, "c") == LOST
    assert bound_phase(pool_pod(0, IDLE), "c") is None, "an idle pod named by the claim is taken"


# --- claim sets -----------------------------------------------------------------------


def test_a_claim_set_creates_and_deletes_toward_replicas() -> None:
    assert claimset_scale([], 3) == ClaimScale(create=3)
    assert claimset_scale([BOUND, BOUND, BOUND], 1) == ClaimScale(delete=2)
    assert claimset_scale([PENDING, PENDING, PENDING], 1) == ClaimScale(delete=2), "upstream left these"
    assert claimset_scale([BOUND, PENDING], 2) == ClaimScale()


def test_a_claim_set_rolls_outdated_claims_with_a_surge_of_one() -> None:
    assert claimset_scale([BOUND, OUTDATED], 2) == ClaimScale(create=1)
    assert claimset_scale([BOUND, OUTDATED, PENDING], 2) == ClaimScale()
    assert claimset_scale([BOUND, OUTDATED, BOUND], 2) == ClaimScale(delete=1)


def victim(name: str, phase: str = BOUND, **kw: Any) -> ClaimVictim:
    return ClaimVictim(name, int(name[-1]), phase, **kw)


def test_claims_go_without_a_pod_first_then_by_phase_then_by_their_pod() -> None:
    pod: dict[str, Any] = {"has_pod": True, "scheduled": True, "pod_phase": "Running", "ready": True}
    claims = [
        victim("c0", **pod, sessions=5),
        victim("c1", **pod, sessions=0),
        victim("c2", OUTDATED, **pod, sessions=9),
        victim("c3", PENDING),
        victim("c4", LOST),
        victim("c5", PENDING),
        victim("c6", **{**pod, "ready": False}, sessions=50),
        victim("c7", **pod, sessions=1, deletion_cost=-10),
    ]
    assert claim_deletion_order(claims) == ["c5", "c3", "c4", "c2", "c6", "c7", "c1", "c0"]


def test_among_equal_claims_the_newest_pod_goes_first() -> None:
    pod: dict[str, Any] = {"has_pod": True, "scheduled": True, "pod_phase": "Running", "ready": True}
    claims = [victim("c0", **pod, pod_created=1.0), victim("c1", **pod, pod_created=2.0)]
    assert claim_deletion_order(claims) == ["c1", "c0"]


def test_a_claim_without_a_selector_takes_nothing() -> None:
    assert claim_candidates(EMPTY_SPEC, [pool_pod(0)]) == []
    assert matching_pool(EMPTY_SPEC, [pool()]) is None


# --- migration --------------------------------------------------------------------------


def test_a_migration_drains_its_source_only_after_the_target_worked_long_enough() -> None:
    source = pool_pod(0, labels.POOL_PHASE_BOUND, claimed_by="c")
    now = 1000.0
    assert migration_step(source, "c", None, now, 15) == MigrationStep(WAIT, 15)
    assert migration_step(source, "c", now - 5, now, 15) == MigrationStep(WAIT, 10)
    assert migration_step(source, "c", now - 15, now, 15) == MigrationStep(RECLAIM)
    assert migration_step(source, "c", now, now, 0) == MigrationStep(RECLAIM)


def test_a_migration_follows_its_source_back_to_the_pool() -> None:
    now = 1000.0
    draining = pool_pod(0, labels.POOL_PHASE_DRAINING)
    assert migration_step(draining, "c", now - 60, now, 15).action == DRAINING
    for gone in (
        None,
        pool_pod(0, labels.POOL_PHASE_IDLE),
        pool_pod(0, labels.POOL_PHASE_TERMINATING),
        pool_pod(0, labels.POOL_PHASE_BOUND, claimed_by="other"),
        pool_pod(0, labels.POOL_PHASE_BOUND, claimed_by="c", deleting=True),
    ):
        assert migration_step(gone, "c", now - 60, now, 15).action == DONE, gone
