"""A CNClaim's ``decide`` and its finalizer's ``decide_release``: what the claim does
next from what it read (its pods, HAKeeper's record of its store, a migration's
source), as data, with no client and no event loop."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest

from mo_operator.api.cnclaim import CNClaim, CNClaimStatus
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Emit
from mo_operator.controllers.framework.typed import parse_status
from mo_operator.controllers.framework.writes import Call, Patch
from mo_operator.controllers.pool.cnclaim import ClaimCalls, decide, decide_release
from mo_operator.controllers.pool.cnclaim_reads import ClaimView, ReleaseView, claim_spec
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.controller.outcome import Requeue, Wait
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import CNStore, WorkState

from .controller_fakes import NOW, RecordingClient
from .pool_fakes import FakeAdmin, claim, migrating, pool, pool_pod, store

Obj = dict[str, Any]
IDLE, BOUND, DRAINING = labels.POOL_PHASE_IDLE, labels.POOL_PHASE_BOUND, labels.POOL_PHASE_DRAINING
POLL, BUSY = 30.0, 2.0
CALLS = ClaimCalls(
    cast(Any, RecordingClient()), FakeAdmin(), logging.LoggerAdapter(logging.getLogger("t"), {})
)
"""Steps are built on these and never run: a decision only plans them."""


def view_of(
    c: Obj,
    pods: tuple[Obj, ...] = (),
    *,
    taken: Mapping[str, str] | None = None,
    pools: tuple[Obj, ...] = (),
    store: CNStore | None = None,
    source: Obj | None = None,
    load: Obj | str | None = None,
) -> ClaimView:
    obj = freeze(c)
    spec = claim_spec(admit(CNClaim, obj))
    pod = next((p for p in pods if p["metadata"]["name"] == spec.pod_name), None)
    status = parse_status(CNClaimStatus, c.get("status") or {})
    return ClaimView(
        obj,
        spec,
        status,
        pods,
        NOW,
        POLL,
        BUSY,
        CALLS,
        dict(taken or {}),
        pools,
        pod,
        store,
        source,
        15.0,
        load,
    )


TARGET = pool_pod(1, BOUND, claimed_by="c")
WORKING = store(TARGET, WorkState.WORKING)


@dataclass
class Case:
    view: ClaimView
    writes: list[str]
    """Each intent: the Call's description, or ``patch <kind> <name>``."""
    ready: tuple[bool, str]
    phase: str | None = None
    """``status.phase`` as set (None: left as it was)."""
    later: Wait | Requeue | None = None
    events: list[str] = field(default_factory=list)


def _held(i: int, phase: str = BOUND, **kw: Any) -> Obj:
    return pool_pod(i, phase, claimed_by="c" if phase == BOUND else None, **kw)


CASES = {
    "a claim without a pod binds the idle ones in order": Case(
        view_of(claim("c"), (pool_pod(1), pool_pod(0))),
        ["bind an idle CN (pool-abc-cn-0, pool-abc-cn-1)"],
        (False, "Binding"),
        "Pending",
    ),
    "a pod another claim names is no candidate": Case(
        view_of(claim("c"), (pool_pod(0), pool_pod(1)), taken={"pool-abc-cn-0": "other"}),
        ["bind an idle CN (pool-abc-cn-1)"],
        (False, "Binding"),
        "Pending",
    ),
    "a pod the claim's bind took is adopted and recorded": Case(
        view_of(claim("c"), (_held(0), pool_pod(1))),
        ["put CN pool-abc-cn-0 to work", "patch CNClaim c"],
        (False, "Binding"),
        "Pending",
    ),
    "with no idle pod the claim is nominated to a matching pool": Case(
        view_of(claim("c"), (_held(0, DRAINING),), pools=(pool(),)),
        ["patch CNClaim c"],
        (False, "WaitingForPod"),
        "Pending",
    ),
    "a claim nominated already waits without a write": Case(
        view_of(claim("c", pool="pool", claim_labels={labels.POOL_NAME: "pool"})),
        [],
        (False, "WaitingForPod"),
        "Pending",
    ),
    "with no idle pod and no matching pool the claim says so": Case(
        view_of(claim("c")), [], (False, "NoMatchingPool"), "Pending"
    ),
    "a bound claim whose store works with its labels writes nothing and polls it": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1"), (TARGET,), store=WORKING),
        [],
        (True, "Bound"),
        "Bound",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
    ),
    "a bound claim whose store drains puts it to work": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1"), (TARGET,), store=store(TARGET)),
        ["put CN pool-abc-cn-1 to work"],
        (True, "Bound"),
        "Bound",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
    ),
    "a bound claim HAKeeper does not know yet waits for it": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1"), (TARGET,)),
        [],
        (True, "Bound"),
        "Bound",
        later=Wait(BUSY, "HAKeeper to know the store of CN pool-abc-cn-1"),
    ),
    "a pod missing the claim's labels gets them": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1", ownerName="team"), (TARGET,), store=WORKING),
        ["patch Pod pool-abc-cn-1"],
        (True, "Bound"),
        "Bound",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
    ),
    "a pod of an older template reads Outdated": Case(
        view_of(
            claim("c", pod_name="pool-abc-cn-1"),
            (pool_pod(1, BOUND, claimed_by="c", extra_labels={labels.POD_OUTDATED: "y"}),),
            store=WORKING,
        ),
        [],
        (True, "Outdated"),
        "Outdated",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
    ),
    "a claim whose pod went is Lost": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1")), [], (False, "PodLost"), "Lost"
    ),
    "a Lost claim stays Lost though an idle pod of its pod's name comes": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1", phase="Lost"), (pool_pod(1),)),
        [],
        (False, "PodLost"),
        "Lost",
    ),
    "a second pod the claim holds goes back, draining": Case(
        view_of(claim("c", pod_name="pool-abc-cn-1"), (TARGET, _held(2)), store=WORKING),
        ["patch Pod pool-abc-cn-2", "set CN pool-abc-cn-2 Draining"],
        (True, "Bound"),
        "Bound",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
    ),
    "a migration binds its idle target first": Case(
        view_of(migrating(None), (_held(0), pool_pod(1))),
        ["bind CN pool-abc-cn-1"],
        (True, "Migrating"),
    ),
    "a migration whose target is taken stays on its source": Case(
        view_of(migrating(None), (_held(0), pool_pod(1, BOUND, claimed_by="other"))),
        [],
        (True, "MigrationBlocked"),
        later=Requeue(POLL, "whether CN pod pool-abc-cn-1 is back"),
    ),
    "a source waits until the target worked for the propagation delay": Case(
        view_of(migrating(NOW - 5), (_held(0), TARGET), store=WORKING, source=_held(0)),
        [],
        (True, "Migrating"),
        "Bound",
        later=Requeue(10.0, "CN pool-abc-cn-1 to have worked long enough"),
    ),
    "then the source goes back to its pool, draining": Case(
        view_of(migrating(NOW - 15), (_held(0), TARGET), store=WORKING, source=_held(0)),
        ["patch Pod pool-abc-cn-0", "set CN pool-abc-cn-0 Draining"],
        (True, "Migrating"),
        "Bound",
        later=Wait(BUSY, "CN pool-abc-cn-0 to drain"),
    ),
    "a draining source reports its sessions": Case(
        view_of(
            migrating(NOW - 60),
            (pool_pod(0, DRAINING), TARGET),
            store=WORKING,
            source=pool_pod(0, DRAINING),
            load={"connections": 3, "pipelines": 0, "replicas": 0},
        ),
        [],
        (True, "Migrating"),
        "Bound",
        later=Wait(BUSY, "the sessions left on CN pool-abc-cn-0"),
    ),
    "a source back in its pool ends the migration and says so once written": Case(
        view_of(migrating(NOW - 60), (pool_pod(0), TARGET), store=WORKING, source=pool_pod(0)),
        ["patch CNClaim c"],
        (True, "Bound"),
        "Bound",
        later=Requeue(POLL, "the store of CN pool-abc-cn-1 as HAKeeper sees it"),
        events=["Migrated"],
    ),
}


def described(intent: Any) -> str:
    if isinstance(intent, Call):
        return intent.what
    assert isinstance(intent, Patch)
    return f"patch {intent.resource.kind} {intent.name}"


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    decision = decide(case.view)
    assert [described(i) for i in decision.intents] == case.writes
    [ready] = decision.conditions
    assert (ready.type, ready.status, ready.reason) == ("Ready", *case.ready)
    assert decision.status.get("phase") == case.phase  # type: ignore[union-attr]
    assert decision.later == case.later
    assert [e.reason for e in decision.events] == case.events


def test_the_bound_store_is_reported_and_keeps_the_time_it_was_first_seen() -> None:
    c = claim("c", pod_name="pool-abc-cn-1", phase="Bound")
    c["status"].update(
        boundTime=format_time(NOW - 100),
        store={"string": "pool-abc-cn-1", "workState": 1, "boundTime": format_time(NOW - 50)},
    )
    status = decide(view_of(c, (TARGET,), store=WORKING)).status
    assert isinstance(status, Mapping)
    assert status["boundTime"] == format_time(NOW - 100)
    assert status["store"]["boundTime"] == format_time(NOW - 50)
    assert status["store"]["string"] == "pool-abc-cn-1" and status["store"]["serviceID"] == WORKING.uuid
    assert status["migrate"] is None, "no migration: its report is removed"
    moved = decide(view_of(claim("c", pod_name="pool-abc-cn-1", phase="Bound"), (TARGET,), store=WORKING))
    assert moved.status["store"]["boundTime"] == format_time(NOW)  # type: ignore[index]


def test_a_draining_source_reports_what_is_left_or_why_it_cannot() -> None:
    base = view_of(migrating(NOW - 60), (TARGET,), store=WORKING, source=pool_pod(0, DRAINING))
    left = {"connections": 3, "pipelines": 1, "replicas": 0}
    reported = decide(replace(base, load=left))
    assert reported.status["migrate"] == {"source": left}  # type: ignore[index]
    assert reported.conditions[0].message.endswith(": 3 sessions left on pool-abc-cn-0")
    silent = decide(replace(base, load="HAKeeper does not answer"))
    assert "migrate" not in silent.status, "the last report stands"
    assert "(HAKeeper does not answer)" in silent.conditions[0].message


def test_the_migration_ends_under_the_claims_version_and_announces_it_after() -> None:
    decision = decide(view_of(migrating(NOW - 60), (TARGET,), store=WORKING, source=pool_pod(0)))
    [end] = decision.intents
    assert end == Patch(
        r.CNCLAIMS, "ns", "c", {"metadata": {"resourceVersion": "5"}, "spec": {"sourcePod": None}}
    )
    assert decision.events == (
        Emit("Normal", "Migrated", "moved from CN pod pool-abc-cn-0 to pool-abc-cn-1", after_writes=True),
    )


def release(*held: Obj) -> ReleaseView:
    c = freeze(claim("c", pod_name="pool-abc-cn-0", deleting=True, additionalPodLabels={"x": "y"}))
    return ReleaseView(c, claim_spec(admit(CNClaim, c)), held, NOW, BUSY, CALLS)


def test_a_deleted_claim_gives_its_pods_back_and_goes_once_none_is_bound_to_it() -> None:
    pod = pool_pod(0, BOUND, claimed_by="c", extra_labels={"x": "y"}, rv="40")
    giving = decide_release(release(pod))
    assert not giving.finalized
    patch, drain = giving.intents
    assert isinstance(patch, Patch) and isinstance(drain, Call)
    assert patch.body["metadata"]["resourceVersion"] == "40"
    assert patch.body["metadata"]["labels"]["x"] is None
    assert patch.body["metadata"]["labels"][labels.POOL_PHASE] == DRAINING
    assert drain.what == "set CN pool-abc-cn-0 Draining"
    assert giving.events == (Emit("Normal", "Reclaimed", "CN pod pool-abc-cn-0 goes back to its pool"),)
    assert giving.later == Wait(BUSY, "the claim's pods to go back to their pool")
    done = decide_release(release())
    assert done.finalized and done.intents == () and done.events == ()
