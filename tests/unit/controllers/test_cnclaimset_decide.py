"""A CNClaimSet's ``decide``: what the set does next from what it read, as data
(intents, status, Ready), with no client and no event loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from mo_operator.api.cnclaim import CNClaimSet
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import SetCondition
from mo_operator.controllers.framework.writes import Create, Delete
from mo_operator.controllers.pool.cnclaimset import ClaimSetView, decide
from mo_operator.controllers.pool.decisions import ClaimVictim
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels

from .pool_fakes import claim, claimset

Obj = dict[str, Any]


def member(index: int, phase: str | None = None, *, deleting: bool = False, indexed: bool = True) -> Obj:
    found = {labels.CLAIM_INSTANCE_ID: str(index)} if indexed else {}
    return claim(
        f"cs-{index}",
        phase=phase,
        deleting=deleting,
        owner=claimset(1),
        claim_labels={"app": "cs", labels.CLAIMSET: "cs", **found},
    )


def victim(index: int, phase: str, **pod: Any) -> ClaimVictim:
    return ClaimVictim(f"cs-{index}", index, phase, **pod)


@dataclass
class Case:
    replicas: int
    claims: list[Obj]
    victims: list[ClaimVictim] = field(default_factory=list)
    creates: list[str] = field(default_factory=list)
    deletes: list[str] = field(default_factory=list)
    kept: int = 0
    ready: tuple[bool, str, str] = (True, "AllClaimsBound", "")
    """``Ready``'s status, reason and message."""


CASES = {
    "a new set makes its claims at the lowest indexes": Case(
        2, [], creates=["cs-0", "cs-1"], ready=(False, "ClaimsPending", "0/2 claims bound")
    ),
    "a set at its size does nothing": Case(
        2,
        [member(0, "Bound"), member(1, "Bound")],
        kept=2,
        ready=(True, "AllClaimsBound", "2/2 claims bound"),
    ),
    "a Lost claim is deleted and replaced at a free index": Case(
        2,
        [member(0, "Lost"), member(1, "Bound")],
        creates=["cs-2"],
        deletes=["cs-0"],
        kept=1,
        ready=(False, "ClaimsPending", "1/2 claims bound"),
    ),
    "a claim without an index is not counted and goes": Case(
        1,
        [member(7, "Bound", indexed=False)],
        creates=["cs-0"],
        deletes=["cs-7"],
        ready=(False, "ClaimsPending", "0/1 claims bound"),
    ),
    "scale-in deletes the claim that matters least: the one without a pod": Case(
        1,
        [member(0, "Bound"), member(1, "Bound")],
        victims=[victim(0, "Bound", has_pod=True, ready=True, sessions=3), victim(1, "Bound")],
        deletes=["cs-1"],
        kept=1,
        ready=(True, "AllClaimsBound", "1/1 claims bound"),
    ),
    "scale-in spares the claim with sessions": Case(
        1,
        [member(0, "Bound"), member(1, "Bound")],
        victims=[
            victim(0, "Bound", has_pod=True, scheduled=True, pod_phase="Running", ready=True, sessions=0),
            victim(1, "Bound", has_pod=True, scheduled=True, pod_phase="Running", ready=True, sessions=5),
        ],
        deletes=["cs-0"],
        kept=1,
        ready=(True, "AllClaimsBound", "1/1 claims bound"),
    ),
    "a claim being deleted is left to go and its index stays taken": Case(
        1,
        [member(0, deleting=True)],
        creates=["cs-1"],
        ready=(False, "ClaimsPending", "0/1 claims bound"),
    ),
    "an Outdated claim rolls: one more claim while it holds an old pod": Case(
        1,
        [member(0, "Outdated")],
        creates=["cs-1"],
        kept=1,
        ready=(True, "AllClaimsBound", "1/1 claims bound"),
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    obj = freeze(claimset(case.replicas))
    view = ClaimSetView(obj, admit(CNClaimSet, obj).spec, tuple(case.claims), tuple(case.victims))  # type: ignore[arg-type]
    decision = decide(view)
    creates = [i.obj["metadata"]["name"] for i in decision.intents if isinstance(i, Create)]
    deletes = [i.name for i in decision.intents if isinstance(i, Delete)]
    assert (creates, deletes) == (case.creates, case.deletes)
    assert all(i.resource is r.CNCLAIMS for i in decision.intents)  # type: ignore[union-attr]
    assert all(i.uid == f"uid-{i.name}" for i in decision.intents if isinstance(i, Delete)), "on condition"
    assert decision.status["replicas"] == case.kept
    assert decision.conditions == (SetCondition("Ready", *case.ready),)
    assert decision.events == () and decision.later is None
    assert decision.status["labelSelector"] == "matrixorigin.io/claimset=cs,pool.matrixorigin.io/phase=Bound"


def test_a_created_claim_follows_the_template_and_names_its_set() -> None:
    obj = freeze(claimset(1))
    decision = decide(ClaimSetView(obj, admit(CNClaimSet, obj).spec, ()))  # type: ignore[arg-type]
    (made,) = decision.intents
    assert isinstance(made, Create)
    assert made.obj["metadata"]["labels"] == {
        "app": "cs",
        labels.CLAIMSET: "cs",
        labels.CLAIM_INSTANCE_ID: "0",
    }
    assert made.obj["metadata"]["ownerReferences"][0]["uid"] == "uid-cs"
    assert made.obj["spec"] == {"selector": {"matchLabels": {"pool": "default"}}, "ownerName": "cs"}
