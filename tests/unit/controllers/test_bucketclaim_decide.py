"""A BucketClaim's ``decide`` and its finalizer's ``decide_deletion``: what the claim
reports and does from what it read, as data, with no client and no event loop."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from mo_operator.api.bucketclaim import BucketClaim, BucketClaimStatus
from mo_operator.api.k8s import Condition
from mo_operator.controllers.bucketclaim import (
    ClaimView,
    DeletionView,
    cleanup_job,
    decide,
    decide_deletion,
)
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Emit
from mo_operator.controllers.framework.writes import Create, Patch
from mo_operator.kube.controller.outcome import Wait
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import buckets

from .bucketclaim_fakes import NS, OUR_FINALIZER, Obj, claim

POLL, BUSY = 30.0, 2.0


@dataclass
class Live:
    claim: Obj
    gone: bool
    state: str
    ready: str
    recyclable: tuple[bool, str]
    released: bool = False
    """The claim is released (a patch, and an Event once it is written)."""


LIVE = {
    "a claim bound to its LogSet is in use": Live(claim(), False, "InUse", "Bound", (False, "InUse")),
    "a claim whose LogSet is gone is released, its data kept": Live(
        claim(policy="Delete"), True, "Released", "Released", (True, "Released"), released=True
    ),
    "a released claim is recyclable": Live(
        claim(bound=None), False, "Released", "Released", (True, "Released")
    ),
}


@pytest.mark.parametrize("case", LIVE.values(), ids=LIVE.keys())
def test_decide(case: Live) -> None:
    obj = freeze(case.claim)
    bound = buckets.binding(obj)
    decision = decide(ClaimView(obj, admit(BucketClaim, obj).spec, bound, case.gone))
    assert isinstance(decision.status, BucketClaimStatus)
    assert (decision.status.state, decision.status.bind_to) == (
        case.state,
        f"{NS}/mo" if case.state == "InUse" else "",
    )
    by_type = {c.type: c for c in decision.conditions}
    assert by_type["Ready"].reason == case.ready and by_type["Ready"].status is True
    assert (by_type["recyclable"].status, by_type["recyclable"].reason) == case.recyclable
    if case.released:
        assert decision.intents == (
            Patch(
                r.BUCKETCLAIMS,
                NS,
                "bucket-uid-mo",
                {"metadata": {"resourceVersion": "7", "annotations": {buckets.BIND_TO: ""}}},
            ),
        )
        assert decision.events == (
            Emit(
                "Warning",
                "LogSetGone",
                "LogSet ns/mo was deleted without releasing this claim: released, data kept",
                after_writes=True,
            ),
        )
    else:
        assert decision.intents == () and decision.events == ()


def test_a_released_claim_says_what_deleting_it_does_to_the_data() -> None:
    messages = {}
    for policy in ("Delete", "Retain"):
        obj = freeze(claim(bound=None, policy=policy))
        decision = decide(ClaimView(obj, admit(BucketClaim, obj).spec, None, False))
        messages[policy] = next(c.message for c in decision.conditions if c.type == "Ready")
    assert messages["Delete"].endswith("deleting this claim deletes the data (s3RetentionPolicy Delete)")
    assert messages["Retain"].endswith("deleting this claim keeps the data (s3RetentionPolicy Retain)")


def deletion(
    c: Obj | None = None,
    *,
    in_use: bool = False,
    writers: tuple[str, ...] = (),
    job: Obj | None = None,
    job_pods: tuple[Obj, ...] = (),
    before: Condition | None = None,
) -> DeletionView:
    obj = freeze(c if c is not None else claim(bound=None, deleting=True, policy="Delete", written=True))
    return DeletionView(
        obj,
        admit(BucketClaim, obj).spec,
        "",
        buckets.binding(obj),
        in_use,
        writers,
        job,
        job_pods,
        before,
        POLL,
        BUSY,
        "aws-cli",
    )


def job_of(condition: str | None = None, reason: str = "", owned: bool = True) -> Obj:
    c = claim(bound=None, deleting=True, policy="Delete", written=True)
    job = cleanup_job(c, admit(BucketClaim, c).spec)
    if not owned:
        job["metadata"]["ownerReferences"] = []
    if condition:
        job["status"] = {"conditions": [{"type": condition, "status": "True", "reason": reason}]}
    return job


def failed_pod() -> Obj:
    return {
        "metadata": {
            "name": "job-bucket-uid-mo-x1",
            "namespace": NS,
            "creationTimestamp": "2026-11-25T10:00:00Z",
        },
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {"name": "main", "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
            ],
        },
    }


def reported(reason: str, message: str = "") -> Condition:
    return Condition.model_validate(
        {
            "type": "Ready",
            "status": "False",
            "reason": reason,
            "message": message,
            "lastTransitionTime": "2026-11-25T10:00:00Z",
        }
    )


@dataclass
class Deleting:
    view: DeletionView
    finalized: bool
    reason: str | None = None
    """``Ready``'s reason (None: the claim goes, nothing reported)."""
    writes: list[str] = field(default_factory=list)
    events: list[tuple[str, bool]] = field(default_factory=list)
    """Each Event's reason, and whether it waits for the writes."""
    after: float | None = None


DELETING = {
    "a claim its LogSet still uses waits": Deleting(
        deletion(claim(deleting=True, policy="Delete", written=True), in_use=True), False, "InUse", after=POLL
    ),
    "a retained claim goes at once": Deleting(
        deletion(claim(bound=None, deleting=True), writers=("mo-log-0",)), True
    ),
    "a claim never written goes at once": Deleting(
        deletion(claim(bound=None, deleting=True, policy="Delete"), writers=("mo-log-0",)), True
    ),
    "a claim waits for the pods that write to its path": Deleting(
        deletion(writers=("mo-log-0",)), False, "WaitingForPods", after=BUSY
    ),
    "with no writer left the cleanup Job starts, announced once made": Deleting(
        deletion(), False, "DeletingData", ["create Job"], [("DeletingData", True)], BUSY
    ),
    "a Job the claim does not own blocks the cleanup": Deleting(
        deletion(job=job_of(owned=False)), False, "CleanupBlocked", after=POLL
    ),
    "a running Job is followed": Deleting(deletion(job=job_of()), False, "DeletingData", after=BUSY),
    "a Job's first failed pod is a warning": Deleting(
        deletion(job=job_of(), job_pods=(failed_pod(),)),
        False,
        "CleanupFailed",
        events=[("CleanupFailed", False)],
        after=POLL,
    ),
    "a failure reported already is not warned of again": Deleting(
        deletion(job=job_of(), job_pods=(failed_pod(),), before=reported("CleanupFailed")),
        False,
        "CleanupFailed",
        after=POLL,
    ),
    "a Job that gave up is warned of once more": Deleting(
        deletion(job=job_of("Failed", "BackoffLimitExceeded"), before=reported("CleanupFailed")),
        False,
        "CleanupFailed",
        events=[("CleanupFailed", False)],
        after=POLL,
    ),
    "a completed Job lets the claim go": Deleting(
        deletion(job=job_of("Complete")), True, events=[("DataDeleted", False)]
    ),
}


@pytest.mark.parametrize("case", DELETING.values(), ids=DELETING.keys())
def test_decide_deletion(case: Deleting) -> None:
    decision = decide_deletion(case.view)
    assert decision.finalized is case.finalized
    ready = next((c for c in decision.conditions if c.type == "Ready"), None)
    assert (ready.reason if ready is not None else None) == case.reason
    if case.reason is not None:
        assert decision.status == BucketClaimStatus(state="Deleting", bind_to=case.view.bound or "")
        assert ready is not None and ready.status is False
    writes = [f"create {i.obj['kind']}" for i in decision.intents if isinstance(i, Create)]
    assert writes == case.writes
    assert [(e.reason, e.after_writes) for e in decision.events] == case.events
    assert (decision.later.after if isinstance(decision.later, Wait) else None) == case.after


def test_a_claim_gone_through_drops_the_go_operators_finalizers_first() -> None:
    c = claim(bound=None, deleting=True)
    c["metadata"]["finalizers"] = [OUR_FINALIZER, "matrixorigin.io/CN-abc1234"]
    decision = decide_deletion(deletion(c))
    assert not decision.finalized
    assert decision.intents == (
        Patch(
            r.BUCKETCLAIMS,
            NS,
            "bucket-uid-mo",
            {"metadata": {"finalizers": [OUR_FINALIZER], "resourceVersion": "7"}},
        ),
    )
    assert decision.later == Wait(BUSY, "the claim's finalizer to come off")


def test_an_invalid_claim_cannot_start_its_cleanup_and_says_why() -> None:
    view = replace(deletion(), spec=None, invalid="metadata.name: too long")
    decision = decide_deletion(view)
    ready = decision.conditions[0]
    assert (ready.reason, ready.message) == (
        "CleanupBlocked",
        "metadata.name: too long: fix the claim to delete s3://bucket/mo/",
    )
    assert decision.intents == ()
