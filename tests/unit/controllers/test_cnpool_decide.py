"""A CNPool's ``decide``: the size of its current template's CNSet, the pods it gives
back or marks outdated, the older sets it retires and how it reports all that, as
data, with no client and no event loop."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from mo_operator.api.base import dump
from mo_operator.api.cnpool import CNPool
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Decision, SetCondition
from mo_operator.controllers.framework.unseen import Applied
from mo_operator.controllers.framework.writes import Apply, Call, Delete, Patch, Seen, Step
from mo_operator.controllers.pool.cnpool import (
    PoolView,
    cnset_of,
    decide,
    decide_removal,
    revision_of,
    set_spec_of,
)
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.controller.outcome import Wait
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels

from .controller_fakes import NOW
from .pool_fakes import claim, pool, pool_pod

Obj = dict[str, Any]
IDLE, BOUND, DRAINING = labels.POOL_PHASE_IDLE, labels.POOL_PHASE_BOUND, labels.POOL_PHASE_DRAINING


def given_back(pod: Mapping[str, Any], holder: str, patch: Obj) -> Step:
    async def step() -> None:
        raise AssertionError("a decision never runs what it plans")

    return step


def view_of(
    p: Obj,
    *,
    current: int | None = None,
    ready: bool = True,
    current_pods: tuple[Obj, ...] = (),
    old: Mapping[str, tuple[int, tuple[Obj, ...]]] | None = None,
    claims: tuple[Obj, ...] = (),
) -> PoolView:
    """``current``: the replicas of the current template's CNSet, as this pool applied it
    (None: not made yet); ``old``: the older sets, their replicas and pods, by name."""
    obj = freeze(p)
    spec = admit(CNPool, obj).spec
    set_spec = set_spec_of("pool", spec)
    deps = dump(spec.deps)
    bare = PoolView(
        obj, spec, set_spec, deps, revision_of(set_spec, deps), None, (), (), {}, (), NOW, given_back
    )
    cached = None if current is None else with_ready(cnset_of(bare, current), ready)
    old_sets = tuple(old_set(name, replicas) for name, (replicas, _) in sorted((old or {}).items()))
    old_pods = {name: pods for name, (_, pods) in (old or {}).items()}
    return PoolView(
        obj,
        spec,
        set_spec,
        deps,
        bare.revision,
        cached,
        current_pods,
        old_sets,
        old_pods,
        claims,
        NOW,
        given_back,
    )


def with_ready(cnset: Obj, ready: bool) -> Obj:
    condition = {
        "type": "Ready",
        "status": "True" if ready else "False",
        "reason": "Ready" if ready else "PodsNotReady",
        "message": "pods are ready" if ready else "1 pod is starting",
        "lastTransitionTime": format_time(NOW),
    }
    cnset["metadata"]["resourceVersion"] = "4"
    return {**cnset, "status": {"conditions": [condition]}}


def old_set(name: str, replicas: int) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "CNSet",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "1"},
        "spec": {"replicas": replicas, "image": "mo:1.0.0"},
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }


def current_name() -> str:
    return f"pool-{view_of(pool()).revision}"


def pods_of(name: str, *phases: str, holder: str = "c") -> tuple[Obj, ...]:
    return tuple(
        pool_pod(i, phase, set_name=name, claimed_by=f"{holder}{i}" if phase != IDLE else None, rv=f"2{i}")
        for i, phase in enumerate(phases)
    )


def claims_for(name: str, count: int) -> tuple[Obj, ...]:
    return tuple(claim(f"c{i}", pod_name=f"{name}-cn-{i}") for i in range(count))


WAITING = claim("w", pool="pool", claim_labels={labels.POOL_NAME: "pool"})


@dataclass
class Case:
    view: PoolView
    applied: int | None
    """The replicas of the current set applied; None: no apply (it is as desired)."""
    ready: tuple[bool, str, str]
    """``Ready``: status, reason, and a part of its message."""
    up_to_date: tuple[bool, str] = (True, "UpToDate")
    writes: list[tuple[str, str, str]] = field(default_factory=list)
    """The other intents: verb, kind and name."""


NAME = current_name()
CASES = {
    "a new pool makes its set for its idle pods and waiting claims": Case(
        view_of(pool(max_idle=2), claims=(WAITING,)), 3, (False, "Creating", f"creating CNSet {NAME}")
    ),
    "a pool as desired writes nothing": Case(
        view_of(pool(max_idle=1), current=1, current_pods=pods_of(NAME, IDLE)),
        None,
        (True, "PoolReady", "1 idle"),
    ),
    "a claim waiting grows a pool as desired": Case(
        view_of(pool(max_idle=1), current=1, current_pods=pods_of(NAME, IDLE), claims=(WAITING,)),
        2,
        (True, "PoolReady", "1 claims waiting"),
    ),
    "a set whose pods start keeps the pool not ready with its set's reason": Case(
        view_of(pool(max_idle=1), current=1, ready=False),
        None,
        (False, "PodsNotReady", "1 pod is starting"),
    ),
    "maxPods holds a waiting claim back and says so": Case(
        view_of(
            pool(max_idle=1, max_pods=2),
            current=2,
            current_pods=pods_of(NAME, BOUND, BOUND),
            claims=(*claims_for(NAME, 2), WAITING),
        ),
        None,
        (False, "MaxPodsReached", "maxPods 2 reached"),
    ),
    "a pod of a vanished claim goes back, its outdated label left for the next pass": Case(
        view_of(
            pool(max_idle=1),
            current=2,
            current_pods=(
                pool_pod(0, BOUND, set_name=NAME, claimed_by="gone", extra_labels={labels.POD_OUTDATED: "y"}),
                pool_pod(1, IDLE, set_name=NAME, extra_labels={labels.POD_OUTDATED: "y"}),
            ),
        ),
        None,
        (True, "PoolReady", ""),
        writes=[("call", "", f"{NAME}-cn-0"), ("patch", "Pod", f"{NAME}-cn-1")],
    ),
    "an older template keeps its claimed pods, marked outdated, and an empty one goes": Case(
        view_of(
            pool(max_idle=1),
            current=1,
            current_pods=pods_of(NAME, IDLE),
            old={"pool-old": (2, pods_of("pool-old", IDLE, BOUND)), "pool-gone": (0, ())},
            claims=(claim("c1", pod_name="pool-old-cn-1"),),
        ),
        None,
        (True, "PoolReady", "1 idle"),
        up_to_date=(False, "OldTemplatesDraining"),
        writes=[
            ("delete", "CNSet", "pool-gone"),
            ("patch", "Pod", "pool-old-cn-0"),
            ("patch", "Pod", "pool-old-cn-1"),
            ("patch", "CNSet", "pool-old"),
        ],
    ),
}


def described(intent: Any) -> tuple[str, str, str]:
    match intent:
        case Patch(resource, _, name):
            return ("patch", resource.kind, name)
        case Delete(resource, _, name):
            return ("delete", resource.kind, name)
        case Call(_, what):
            return ("call", "", what.split()[2])
    raise AssertionError(f"unexpected {intent}")


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    decision = decide(case.view)
    applies = [i for i in decision.intents if isinstance(i, Apply)]
    assert [a.obj["spec"]["replicas"] for a in applies] == ([] if case.applied is None else [case.applied])
    assert all(a.resource is r.CNSETS and a.obj["metadata"]["name"] == NAME for a in applies)
    others = [described(i) for i in decision.intents if not isinstance(i, Apply)]
    assert others == case.writes
    ready, up_to_date = decision.conditions
    assert (ready.type, ready.status, ready.reason) == ("Ready", *case.ready[:2])
    assert case.ready[2] in ready.message
    assert (up_to_date.type, up_to_date.status, up_to_date.reason) == ("UpToDate", *case.up_to_date)
    assert decision.status == {} and decision.events == () and decision.later is None


def test_the_pods_given_back_and_marked_are_written_under_the_version_decided_on() -> None:
    orphan = pool_pod(0, BOUND, set_name=NAME, claimed_by="gone", rv="31")
    seen: list[tuple[str, str, Obj]] = []

    def give_back(pod: Mapping[str, Any], holder: str, patch: Obj) -> Step:
        seen.append((pod["metadata"]["name"], holder, patch))
        return given_back(pod, holder, patch)

    base = view_of(pool(max_idle=1), current=1, old={"pool-old": (1, pods_of("pool-old", IDLE))})
    view = PoolView(**{**base.__dict__, "current_pods": (orphan,), "give_back": give_back})
    decision: Decision = decide(view)
    [(pod, holder, patch)] = seen
    assert (pod, holder, patch["metadata"]["resourceVersion"]) == (f"{NAME}-cn-0", "gone", "31")
    assert patch["metadata"]["labels"][labels.POOL_PHASE] == DRAINING
    assert patch["metadata"]["annotations"] == {labels.RECLAIMED_AT: format_time(NOW)}
    [marked] = [i for i in decision.intents if isinstance(i, Patch) and i.resource is r.PODS]
    assert marked.body == {"metadata": {"resourceVersion": "20", "labels": {labels.POD_OUTDATED: "y"}}}


def test_a_pool_is_up_to_date_only_without_claimed_pods_of_older_templates() -> None:
    """The same older set, its pod Bound or Idle, flips ``UpToDate``."""
    conditions = {}
    for phase in (BOUND, IDLE):
        holder = claim("c0", pod_name="pool-old-cn-0")
        view = view_of(pool(), current=2, old={"pool-old": (1, pods_of("pool-old", phase))}, claims=(holder,))
        conditions[phase] = decide(view).conditions[1]
    assert conditions[BOUND] == SetCondition(
        "UpToDate",
        False,
        "OldTemplatesDraining",
        "1 pods of older templates are still claimed or draining: pool-old-cn-0",
    )
    assert conditions[IDLE].status is True


def test_a_deleted_pool_deletes_its_sets_first_and_goes_once_none_is_left() -> None:
    going = {
        **old_set("pool-b", 1),
        "metadata": {**old_set("pool-b", 1)["metadata"], "deletionTimestamp": "x"},
    }
    decision = decide_removal(pool(), [old_set("pool-a", 1), going], 2.0)
    assert decision.intents == (Delete(r.CNSETS, "ns", "pool-a", uid="uid-pool-a"),), (
        "one going is left to go"
    )
    assert decision.later == Wait(2.0, "CNSets of pool to go first") and not decision.finalized
    assert decide_removal(pool(), [], 2.0) == Decision(finalized=True)


GROWN = view_of(pool(max_idle=1), current=1, current_pods=pods_of(NAME, IDLE), claims=(WAITING,))
"""A pool whose set, cached at version 4 with one pod, a waiting claim grows to two."""
KEY = ("CNSet", "ns", NAME)
UNSEEN_CASES = {
    "an apply of ours the cache has not shown yet is not sent again": (
        {KEY: Applied(cnset_of(GROWN, 2), "4")},
        [],
    ),
    "an apply the cache has caught up with is decided again": ({KEY: Applied(cnset_of(GROWN, 2), "3")}, [2]),
    "an apply of other replicas than wanted now is no reason to wait": (
        {KEY: Applied(cnset_of(GROWN, 3), "4")},
        [2],
    ),
    "an apply of another object leaves this one to be applied": (
        {("CNSet", "ns", "pool-other"): Applied(cnset_of(GROWN, 2), "4")},
        [2],
    ),
    "with no apply of ours on its way the set is applied": ({}, [2]),
}


@pytest.mark.parametrize("applied, replicas", UNSEEN_CASES.values(), ids=UNSEEN_CASES.keys())
def test_an_apply_on_its_way_to_the_cache_is_left_out(
    applied: Mapping[Any, Applied], replicas: list[int]
) -> None:
    decision = decide(dataclasses.replace(GROWN, applied=applied))
    applies = [i for i in decision.intents if isinstance(i, Apply)]
    assert [a.obj["spec"]["replicas"] for a in applies] == replicas
    assert [a.seen for a in applies] == [Seen("4")] * len(replicas), "noted against the version decided on"
    assert decision.conditions[0].reason == "PoolReady", "the status is the same either way"
