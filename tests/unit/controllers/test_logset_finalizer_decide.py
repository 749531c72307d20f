"""The LogSet finalizer's ``decide_deletion``: which claims of its S3 path it releases or
deletes, what it marks on them and what it announces, as data, with no client and no
event loop; and its read, which asks HAKeeper only when a claim may need it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.decision import Emit
from mo_operator.controllers.framework.writes import Call, Patch
from mo_operator.controllers.logset import LogSetActor
from mo_operator.controllers.logset.finalizer import DeletionView, decide_deletion
from mo_operator.matrixone import buckets
from mo_operator.matrixone.admin import HAKeeperPhase

from .bucketclaim_fakes import NS, FakeClient, Obj, claim, logset
from .controller_fakes import FakeCaches, context, events, make_env
from .test_logset_actor import FakeHAKeeper


@dataclass
class Case:
    claims: list[Obj] = field(default_factory=list)
    policy: str = "Retain"
    written: bool = False
    patched: list[str] = field(default_factory=list)
    """The claims released by a merge patch (data)."""
    called: list[str] = field(default_factory=list)
    """The claims released and deleted by a step (its delete depends on the patch's answer)."""
    marked_written: bool = False
    announced: list[str] = field(default_factory=list)


CASES = {
    "a LogSet without a claim to release goes at once, writing nothing": Case(),
    "under Retain its claim is released by a patch, its data kept": Case(
        claims=[claim()],
        patched=["bucket-uid-mo"],
        announced=["BucketClaim bucket-uid-mo released (data kept)"],
    ),
    "under Delete its claim is released and deleted in one step": Case(
        claims=[claim()],
        policy="Delete",
        called=["release and delete BucketClaim bucket-uid-mo"],
        announced=["BucketClaim bucket-uid-mo deleted (its data is deleted next)"],
    ),
    "a path MatrixOne wrote to is marked so on the released claim": Case(
        claims=[claim()],
        written=True,
        patched=["bucket-uid-mo"],
        marked_written=True,
        announced=["BucketClaim bucket-uid-mo released (data kept)"],
    ),
    "every claim to release is released, each announced": Case(
        claims=[claim(), claim("bucket-two")],
        patched=["bucket-uid-mo", "bucket-two"],
        announced=[
            "BucketClaim bucket-uid-mo released (data kept)",
            "BucketClaim bucket-two released (data kept)",
        ],
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_finalizer_releases_the_claims_of_its_path_then_goes(case: Case) -> None:
    view = DeletionView(tuple(case.claims), case.policy, case.written)
    decision = decide_deletion(view)
    assert decision.finalized, "the finalizer goes once its writes succeed"
    patches = [i for i in decision.intents if isinstance(i, Patch)]
    assert [p.name for p in patches] == case.patched
    assert all(p.resource is r.BUCKETCLAIMS and p.namespace == NS for p in patches)
    assert [i.what for i in decision.intents if isinstance(i, Call)] == case.called
    for p in patches:
        annotations = p.body["metadata"]["annotations"]
        assert annotations[buckets.BIND_TO] == "", "unbound"
        assert p.body["metadata"]["resourceVersion"] == "7", "only as seen: a claim taken meanwhile stays"
        assert (buckets.ANY_INSTANCE_RUNNING in annotations) == case.marked_written
    assert decision.events == tuple(
        Emit("Normal", "BucketReleased", message, after_writes=True) for message in case.announced
    )
    assert decision.status == {} and decision.conditions == ()


def test_a_release_under_delete_is_bound_to_the_client_only_when_read() -> None:
    """A view built without a client (this table's) carries a release that fails if run,
    so a decision cannot pass for acted on without its read."""
    decision = decide_deletion(DeletionView((claim(),), "Delete", False))
    (call,) = decision.intents
    assert isinstance(call, Call)
    with pytest.raises(RuntimeError, match="no release bound"):
        asyncio.run(call.step())


async def finalize(ls: Obj, *claims: Obj, hakeeper: FakeHAKeeper) -> tuple[bool, list[Any], Any]:
    client = FakeClient()
    env = replace(make_env(FakeCaches(*claims)), client=cast(Any, client), admin=cast(Any, hakeeper))
    ctx = context(ls)
    done = await LogSetActor(env).finalize(ctx)
    return done, client.calls, ctx


async def test_a_deleted_logset_asks_hakeeper_whether_it_wrote_only_with_a_claim_to_release() -> None:
    hakeeper = FakeHAKeeper(HAKeeperPhase.RUNNING)
    done, calls, _ = await finalize(logset(), hakeeper=hakeeper)
    assert done and calls == [] and hakeeper.asked == []
    done, calls, _ = await finalize(logset(discovery=True), claim(), hakeeper=hakeeper)
    assert done and hakeeper.asked == [], "its status says it ran: nothing to ask"
    assert [(c[0], c[1]) for c in calls] == [("patch", "BucketClaim")]
    assert calls[0][2]["metadata"]["annotations"][buckets.ANY_INSTANCE_RUNNING] == "true"


async def test_a_deleted_logset_that_never_recorded_its_bootstrap_learns_it_from_hakeeper() -> None:
    ls = logset()
    ls["spec"]["sharedStorage"]["s3"]["s3RetentionPolicy"] = "Delete"
    hakeeper = FakeHAKeeper(HAKeeperPhase.RUNNING)
    done, calls, ctx = await finalize(ls, claim(), hakeeper=hakeeper)
    assert done and len(hakeeper.asked) == 1
    assert [(c[0], c[1]) for c in calls] == [("patch", "BucketClaim"), ("delete", "BucketClaim")]
    assert calls[0][2]["metadata"]["annotations"][buckets.ANY_INSTANCE_RUNNING] == "true"
    assert [e[1] for e in events(ctx)] == ["BucketReleased"]
    _, calls, _ = await finalize(ls, claim(), hakeeper=FakeHAKeeper(None))
    assert buckets.ANY_INSTANCE_RUNNING not in calls[0][2]["metadata"]["annotations"], "HAKeeper silent"
