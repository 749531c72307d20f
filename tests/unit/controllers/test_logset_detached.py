"""The log stores a taken-over LogSet keeps itself, below a reserved ordinal (the
Go operator's failover retired store 1 of 0, 1, 2: stores 0, 2, 3 run; our StatefulSet
runs 2 and 3 from ``ordinals.start: 2``, the LogSet keeps 0): how each is made, made
again and replaced, and how the StatefulSet's roll waits for it, one store down at a
time. Decisions only, no client."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mo_operator.controllers.logset import detached
from mo_operator.controllers.specs.statefulsets import Rollout
from mo_operator.matrixone import labels, reserved

Obj = dict[str, Any]
NS = "ns"
OWNER: Obj = {
    "apiVersion": "core.matrixorigin.io/v1alpha1",
    "kind": "LogSet",
    "metadata": {"name": "mo", "namespace": NS, "uid": "logset-uid"},
}
SELECTOR = {"matrixorigin.io/instance": "mo", "matrixorigin.io/component": "LogSet"}
HOLE = reserved.numbering({1}, 3)


def _sts(image: str = "mo:1") -> Obj:
    return {
        "metadata": {"name": "mo-log", "namespace": NS},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": SELECTOR},
            "serviceName": "mo-log-headless",
            "ordinals": {"start": 2},
            "template": {
                "metadata": {"labels": dict(SELECTOR), "annotations": {"a": "b"}},
                "spec": {
                    "containers": [{"name": "main", "image": image}],
                    "volumes": [{"name": "config", "configMap": {"name": "mo-log-config"}}],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "mo-data", "labels": {"x": "y"}},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    }


def _pod(
    ordinal: int,
    sts: Obj | None = None,
    *,
    ready: bool = True,
    controller: Obj | None = OWNER,
    deleting: bool = False,
) -> Obj:
    made = copy.deepcopy(detached.pod(OWNER, sts or _sts(), ordinal))
    meta = made["metadata"]
    meta["uid"], meta["resourceVersion"] = f"uid-{ordinal}", f"rv-{ordinal}"
    if controller is not OWNER:
        meta["ownerReferences"] = [] if controller is None else [{**controller, "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    made["status"] = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return made


def _decide(
    *pods: Obj, rolled: bool = True, claims: dict[str, Obj] | None = None, sts: Obj | None = None
) -> detached.Plan:
    have = {"mo-data-mo-log-0": {"metadata": {"name": "mo-data-mo-log-0"}}} if claims is None else claims
    return detached.decide(OWNER, sts or _sts(), HOLE, list(pods), have.get, statefulset_rolled=rolled)


def test_a_detached_pod_is_made_as_the_statefulset_would_make_it_but_controlled_by_the_logset() -> None:
    made = detached.pod(OWNER, _sts(), 0)
    meta, spec = made["metadata"], made["spec"]
    assert meta["name"] == "mo-log-0" and meta["namespace"] == NS
    assert SELECTOR.items() <= meta["labels"].items(), "the Services select it"
    assert meta["labels"][detached.STATEFULSET_POD_NAME] == "mo-log-0"
    assert meta["labels"][labels.LOGSET_TEMPLATE_HASH] == detached.template_hash(_sts())
    assert meta["annotations"] == {"a": "b"}
    assert [(r["kind"], r["uid"], r["controller"]) for r in meta["ownerReferences"]] == [
        ("LogSet", "logset-uid", True)
    ]
    assert (spec["hostname"], spec["subdomain"]) == ("mo-log-0", "mo-log-headless"), "same DNS name"
    assert {"name": "mo-data", "persistentVolumeClaim": {"claimName": "mo-data-mo-log-0"}} in spec["volumes"]
    assert {"name": "config", "configMap": {"name": "mo-log-config"}} in spec["volumes"]
    (claim,) = detached.claims(OWNER, _sts(), 0)
    assert claim["metadata"]["name"] == "mo-data-mo-log-0"
    assert claim["metadata"]["labels"] == {"x": "y", **SELECTOR}
    assert claim["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert "ownerReferences" not in claim["metadata"], "kept when the LogSet goes (Retain)"


def test_a_template_change_changes_the_hash_a_stale_pod_is_seen_by() -> None:
    assert detached.template_hash(_sts("mo:1")) != detached.template_hash(_sts("mo:2"))
    assert detached.template_hash(_sts()) == detached.template_hash(copy.deepcopy(_sts()))


def test_a_converged_detached_store_needs_nothing_and_holds_nothing() -> None:
    plan = _decide(_pod(0))
    assert plan == detached.Plan(ready=1)


@pytest.mark.parametrize(
    ("claims", "made_claims"),
    [
        ({"mo-data-mo-log-0": {"metadata": {"name": "mo-data-mo-log-0"}}}, []),
        ({}, ["mo-data-mo-log-0"]),
    ],
    ids=["its claim kept", "its claim made first"],
)
def test_a_missing_detached_pod_is_made_again_and_holds_the_statefulset(
    claims: dict[str, Obj], made_claims: list[str]
) -> None:
    plan = _decide(claims=claims)
    assert [c["metadata"]["name"] for c in plan.create_claims] == made_claims
    assert [p["metadata"]["name"] for p in plan.create_pods] == ["mo-log-0"]
    assert plan.hold and not plan.delete_pods


def test_a_pod_is_not_made_while_its_old_claim_is_still_going() -> None:
    going = {"mo-data-mo-log-0": {"metadata": {"name": "mo-data-mo-log-0", "deletionTimestamp": "t"}}}
    plan = _decide(claims=going)
    assert plan.hold and not plan.create_pods and not plan.create_claims


@pytest.mark.parametrize(
    ("controller", "adopted"),
    [
        (None, True),
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "mo-log", "uid": "s"}, True),
        ({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "other", "uid": "x"}, False),
        (
            {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "mo-log", "uid": "k"},
            False,
        ),
    ],
    ids=["orphan", "our StatefulSet's", "someone else's", "the Go operator's, still orphaning"],
)
def test_a_pod_at_a_detached_ordinal_not_ours_is_adopted_only_when_free_or_our_statefulsets(
    controller: Obj | None, adopted: bool
) -> None:
    plan = _decide(_pod(0, controller=controller))
    assert plan.hold and not plan.create_pods and not plan.delete_pods
    assert plan.adopt == ([detached.Adopt("mo-log-0", "uid-0", "rv-0")] if adopted else [])
    assert plan.foreign == ([] if adopted else ["mo-log-0"]), "either way the StatefulSet waits"


@pytest.mark.parametrize(
    ("pod", "rolled", "hold", "replaced"),
    [
        (_pod(0, ready=False), True, True, False),
        (_pod(0, deleting=True), True, True, False),
        (_pod(0, _sts("mo:0")), False, False, False),
        (_pod(0, _sts("mo:0")), True, True, True),
        (_pod(0, _sts("mo:0"), ready=False), False, True, True),
    ],
    ids=[
        "not ready: the StatefulSet waits",
        "going: the StatefulSet waits",
        "stale while the StatefulSet rolls: the StatefulSet first",
        "stale once the StatefulSet rolled and all are ready: replaced",
        "stale and not ready: replaced at once, down already (a reverted template reaches it)",
    ],
)
def test_the_roll_takes_one_store_down_at_a_time_across_both_kinds(
    pod: Obj, rolled: bool, hold: bool, replaced: bool
) -> None:
    plan = _decide(pod, rolled=rolled)
    assert plan.hold is hold
    assert plan.delete_pods == ([("mo-log-0", "uid-0")] if replaced else [])
    assert not plan.create_pods


def test_only_one_stale_detached_store_is_replaced_at_a_time() -> None:
    two = reserved.numbering({2}, 3)  # stores 0, 1, 3: the LogSet keeps 0 and 1
    old = _sts("mo:0")
    plan = detached.decide(
        OWNER, _sts(), two, [_pod(0, old), _pod(1, old)], lambda _: {"metadata": {}}, statefulset_rolled=True
    )
    assert plan.delete_pods == [("mo-log-0", "uid-0")] and plan.stale == 2 and plan.hold


def _deleting_claims() -> Obj:
    sts = _sts()
    sts["spec"]["persistentVolumeClaimRetentionPolicy"] = {"whenDeleted": "Delete", "whenScaled": "Delete"}
    return sts


@pytest.mark.parametrize(
    ("sts", "claims_deleted"),
    [(_sts(), []), (_deleting_claims(), [("mo-data-mo-log-0", "claim-uid")])],
    ids=["claims retained", "claims deleted with the pod (whenScaled: Delete)"],
)
def test_a_detached_store_scaled_away_is_deleted(sts: Obj, claims_deleted: list[tuple[str, str]]) -> None:
    # replicas 0 after a scale to zero: no detached store is wanted
    claim = {"metadata": {"name": "mo-data-mo-log-0", "uid": "claim-uid"}}
    plan = detached.decide(
        OWNER,
        sts,
        reserved.numbering({1}, 0),
        [_pod(0, sts)],
        {"mo-data-mo-log-0": claim}.get,
        statefulset_rolled=True,
    )
    assert plan.delete_pods == [("mo-log-0", "uid-0")] and not plan.create_pods
    assert plan.delete_claims == claims_deleted


def test_a_made_claim_goes_with_the_logset_when_the_sets_claims_do() -> None:
    (claim,) = detached.claims(OWNER, _deleting_claims(), 0)
    (ref,) = claim["metadata"]["ownerReferences"]
    assert (ref["kind"], ref["uid"], ref["controller"]) == ("LogSet", "logset-uid", False)


def test_the_roll_counts_both_kinds_of_store() -> None:
    sts_roll = Rollout(replicas=2, ready=2, updated=2, complete=True)
    assert detached.combined(sts_roll, _decide(_pod(0)), HOLE) == Rollout(3, 3, 3, True)
    stale = detached.combined(sts_roll, _decide(_pod(0, _sts("mo:0")), rolled=False), HOLE)
    assert (stale.replicas, stale.ready, stale.updated, stale.complete) == (3, 3, 2, False)
    no_hole = reserved.numbering({0}, 3)
    assert detached.combined(sts_roll, detached.Plan(), no_hole) is sts_roll
