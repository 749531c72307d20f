"""The LogSet's ``decide``: the bootstrap record, the S3 path's claim, the objects the
skeleton writes, HAKeeper's answer and the failover, as data (intents, status,
conditions, Events, when to look again), with no client and no event loop."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from mo_operator.api.logset import LogSet
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Decision
from mo_operator.controllers.framework.writes import Apply, Create, Delete, Patch
from mo_operator.controllers.logset import FAILOVER
from mo_operator.controllers.logset.decide import LogSetView, decide
from mo_operator.controllers.logset.failover import Store
from mo_operator.controllers.steps.podset_input import Cached
from mo_operator.kube.controller.outcome import TerminalError, Wait
from mo_operator.matrixone import buckets, identity
from mo_operator.matrixone.admin import (
    AdminError,
    HAKeeperPhase,
    HAKeeperState,
    LogStore,
    NodeState,
    Unreachable,
)

from .controller_fakes import NOW
from .test_logset_actor import WRITTEN, a_logset, running

Obj = dict[str, Any]
S3 = {"type": "minio", "endpoint": "http://minio:9000", "path": "bucket/mo"}


def hakeeper(*down: int) -> HAKeeperState:
    stores = tuple(
        LogStore(
            identity.log_store_uuid(i),
            f"mo-log-{i}:32001",
            1,
            NodeState.TIMEOUT if i in down else NodeState.NORMAL,
        )
        for i in range(3)
    )
    return HAKeeperState(HAKeeperPhase.RUNNING, 1, log_stores=stores)


def view_of(obj: Obj, *cached: Obj, **fields: Any) -> LogSetView:
    """The view the actor would read of ``obj`` with ``cached`` objects."""
    pods = tuple(o for o in cached if o.get("kind") == "Pod")
    objects = {(o["kind"], o["metadata"]["name"]): o for o in cached if o.get("kind") != "Pod"}
    configs = tuple(o for o in cached if o.get("kind") == "ConfigMap")
    return LogSetView(
        obj,
        admit(LogSet, obj).spec,
        dict(obj.get("status") or {}),
        NOW,
        cached=Cached(objects),
        configs=configs,
        pods=pods,
        **fields,
    )


def converged(obj: Obj) -> list[Obj]:
    """What one round over nothing writes, as the cache would then hold it."""
    applied = [dict(i.obj) for i in decide(view_of(obj)).intents if isinstance(i, Apply)]
    sts = next(o for o in applied if o["kind"] == "StatefulSet")
    return [o for o in applied if o["kind"] != "StatefulSet"] + running(sts)


def lost(i: int) -> Store:
    return Store(f"mo-log-{i}", f"uid-log-{i}", NOW - 3600, True)


def up(i: int) -> Store:
    return Store(f"mo-log-{i}", f"uid-log-{i}", None, False)


@dataclass
class Case:
    view: Callable[[], LogSetView]
    writes: list[tuple[str, str]] = field(default_factory=list)
    """(verb, kind) of each intent, in order."""
    conditions: dict[str, tuple[bool, str]] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)
    waits: bool = False
    """Whether it looks again soon (a Wait) rather than at its poll."""


def _running_hakeeper(answer: HAKeeperState | AdminError, **fields: Any) -> LogSetView:
    obj = a_logset(bootstrapped=True)
    return view_of(obj, *converged(obj), hakeeper=answer, **fields)


CASES = {
    "a new LogSet records its bootstrap decision first, then writes its objects": Case(
        lambda: view_of(a_logset(recorded=False)),
        writes=[("patch", "LogSet"), *(("apply", kind) for kind, _ in WRITTEN)],
        conditions={"HAKeeper": (False, "WaitingForLogStores")},
    ),
    "a recorded LogSet writes its objects and no record": Case(
        lambda: view_of(a_logset()), writes=[("apply", kind) for kind, _ in WRITTEN]
    ),
    "a LogSet on S3 claims its path before it writes anything else": Case(
        lambda: view_of(a_logset(sharedStorage={"s3": S3}), s3=S3), writes=[("create", "BucketClaim")]
    ),
    "a converged LogSet whose HAKeeper runs writes nothing and looks again at its poll": Case(
        lambda: _running_hakeeper(hakeeper()),
        conditions={"HAKeeper": (True, "Running"), "Ready": (True, "AllStoresReady")},
    ),
    "a converged LogSet whose HAKeeper does not answer says so and looks again soon": Case(
        lambda: _running_hakeeper(Unreachable("connection refused"), unanswered=120.0),
        conditions={"HAKeeper": (False, "MatrixOneUnreachable")},
        waits=True,
    ),
    "a lost minority is replaced once HAKeeper runs": Case(
        lambda: _running_hakeeper(hakeeper(1), stores=(up(0), lost(1), up(2))),
        writes=[("delete", "Pod")],
        conditions={FAILOVER: (False, "RepairingStores")},
        events=["StoreLost"],
    ),
    "no store is judged while anything else is to be written": Case(
        lambda: view_of(a_logset(bootstrapped=True), hakeeper=hakeeper(1), stores=(up(0), lost(1), up(2))),
        writes=[("apply", kind) for kind, _ in WRITTEN],
        conditions={"HAKeeper": (True, "Running")},
    ),
    "a lost majority is only reported": Case(
        lambda: _running_hakeeper(hakeeper(0, 1), stores=(lost(0), lost(1), up(2))),
        conditions={FAILOVER: (False, "MajorityLost")},
        events=["MajorityLost"],
    ),
    "without HAKeeper's answer nothing is replaced": Case(
        lambda: _running_hakeeper(Unreachable("refused"), stores=(up(0), lost(1), up(2))),
        conditions={FAILOVER: (False, "HAKeeperNotAnswering")},
        waits=True,
    ),
}


def verbs(decision: Decision) -> list[tuple[str, str]]:
    names = {Apply: "apply", Create: "create", Delete: "delete", Patch: "patch"}
    return [(names.get(type(i), "call"), i.resource.kind) for i in decision.intents]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_logset_decides_its_writes_and_status_from_what_it_read(case: Case) -> None:
    decision = decide(case.view())
    assert verbs(decision) == case.writes
    got = {c.type: (c.status, c.reason) for c in decision.conditions}
    for ctype, want in case.conditions.items():
        assert got.get(ctype) == want, ctype
    assert [e.reason for e in decision.events] == case.events
    if not case.conditions.get(FAILOVER):
        assert FAILOVER not in got, "judged only with nothing else to write"
    assert isinstance(decision.later, Wait) == case.waits


def test_a_path_another_logset_holds_is_refused_naming_the_holder() -> None:
    obj = a_logset(sharedStorage={"s3": S3})
    held = {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "BucketClaim",
        "metadata": {
            "name": "bucket-other",
            "namespace": "ns",
            "resourceVersion": "3",
            "annotations": {buckets.BIND_TO: "ns/other"},
            "labels": {buckets.UNIQUE_ID: buckets.unique_id(S3)},
        },
        "spec": {"s3": dict(S3)},
        "status": {"state": "InUse"},
    }
    with pytest.raises(TerminalError) as refused:
        decide(view_of(obj, s3=S3, path_claims=(held,)))
    assert refused.value.reason == "BucketInUse"
    assert verbs(decide(view_of(obj, s3=S3))) == [("create", "BucketClaim")], "unheld: claimed"


def test_the_status_reports_discovery_and_hakeepers_phase() -> None:
    decision = decide(_running_hakeeper(hakeeper()))
    status = dict(decision.status)
    assert status["discovery"] == {"address": "mo-log-discovery.ns.svc", "port": 32001}
    assert status["hakeeperState"] == HAKeeperPhase.RUNNING.mo_name
    silent = replace(_running_hakeeper(hakeeper()), hakeeper=None)
    assert "hakeeperState" not in dict(decide(silent).status), "not asked: nothing to report"
