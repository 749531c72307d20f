"""A CNSet's ``decide`` and ``decide_finalize``: what a round does to its pods and to
MatrixOne from what it read (pods, HAKeeper's stores, the CNs' loads, the TN lock
service's answers), as data, with no client and no event loop."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

import pytest

from mo_operator.api.cnset import CNSet
from mo_operator.controllers.cnset.decide import CNSetDecision, Settings, decide, decide_finalize
from mo_operator.controllers.cnset.observed import CNSetView, Desired, LockAnswer
from mo_operator.controllers.cnset.pods import TEMPLATE_HASH, cn_labels_json
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.writes import Call, Create, Delete, Intent, Patch
from mo_operator.controllers.specs.pods import format_time
from mo_operator.controllers.steps.deps import LogService
from mo_operator.controllers.steps.rpchealth import Trouble
from mo_operator.kube.controller.outcome import Requeue, Wait
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import (
    AdminError,
    CNLoad,
    Failure,
    HAKeeperPhase,
    HAKeeperState,
    StoreNotFound,
    WorkState,
)
from mo_operator.matrixone.discovery import HAKeeperEndpoint

from .cnset_fakes import cnset, running, with_annotations
from .controller_fakes import NOW
from .pool_fakes import DISCOVERY, NS, FakeAdmin, pool_pod, store

Obj = dict[str, Any]
DIGEST = "current"
SETTINGS = Settings(rollout_stall_seconds=600.0, busy_poll_seconds=5.0)
WORKING, DRAINING = WorkState.WORKING, WorkState.DRAINING


def pod(index: int, *, ready: bool = True, outdated: bool = False, draining: float | None = None) -> Obj:
    """CN pod ``tp-cn-<index>``, running; ``draining``: for that many seconds."""
    found = running(
        {
            "metadata": {
                "name": f"tp-cn-{index}",
                "namespace": NS,
                "labels": {
                    labels.CN_UUID: f"uuid-tp-cn-{index}",
                    TEMPLATE_HASH: "old" if outdated else DIGEST,
                },
                "annotations": {labels.CN_LABEL: "[]"},
            }
        },
        ready=ready and draining is None,
    )
    if draining is not None:
        found = with_annotations(found, **{labels.STORE_DRAINING_START: format_time(NOW - draining)})
    return found


@dataclass
class Case:
    pods: list[Obj]
    replicas: int = 2
    stores: dict[int, WorkState] = field(default_factory=dict)
    """Work state per pod index; a pod not named has no store. None: HAKeeper did not answer."""
    loads: dict[int, CNLoad | AdminError] = field(default_factory=dict)
    locks: dict[int, LockAnswer] = field(default_factory=dict)
    spec: Obj = field(default_factory=dict)
    conditions: frozenset[str] = frozenset()
    trouble: Trouble | None = None
    look: float | None = None
    intents: list[str] = field(default_factory=list)
    set_conditions: list[tuple[str, bool, str]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    later: tuple[type, str] | None = None
    busy: bool = False


def view_of(case: Case, *, hakeeper: bool = True) -> CNSetView:
    obj = cnset(case.replicas, **case.spec)
    spec = admit(CNSet, freeze(obj)).spec
    template: Obj = {"metadata": {"labels": {"app": "tp"}}, "spec": {"containers": []}}
    want = Desired(obj, spec, LogService(HAKeeperEndpoint(DISCOVERY)), {}, {}, {}, template, DIGEST, "ns/mo")
    pods = tuple(case.pods)
    by_index = {int(p["metadata"]["name"].rpartition("-")[2]): p for p in pods}
    state = (
        HAKeeperState(
            HAKeeperPhase.RUNNING, 1, cn_stores=tuple(store(by_index[i], s) for i, s in case.stores.items())
        )
        if hakeeper and case.trouble is None
        else None
    )
    name = {i: p["metadata"]["name"] for i, p in by_index.items()}
    return CNSetView(
        obj,
        spec,
        pods,
        state,
        cast(Any, FakeAdmin()),
        NOW,
        300.0,
        case.trouble,
        want,
        loads={name[i]: load for i, load in case.loads.items()},
        sessions_known=frozenset(name[i] for i in case.loads),
        locks={name[i]: answer for i, answer in case.locks.items()},
        registration_look=case.look,
        conditions=case.conditions,
    )


def said(intent: Intent) -> str:
    """An intent as the plan says it."""
    match intent:
        case Create(resource, obj):
            return f"create {resource.kind} {obj['metadata']['name']}"
        case Delete(resource, _, name, uid):
            return f"delete {resource.kind} {name} uid={uid}"
        case Patch(what=what) | Call(what=what):
            return str(what)
    raise AssertionError(intent)


SERVING = {
    "a new set makes its pods at the lowest indexes": Case(
        [], intents=["create Pod tp-cn-0", "create Pod tp-cn-1"], busy=True
    ),
    "a settled set does nothing and asks nothing": Case([pod(0), pod(1)], stores={0: WORKING, 1: WORKING}),
    "a registered CN not yet Working is put to work and marked so": Case(
        [pod(0), pod(1, ready=False)],
        stores={0: WORKING, 1: DRAINING},
        intents=["put CN tp-cn-1 to work"],
        busy=True,
    ),
    "scale-in drains the CN with the fewest sessions": Case(
        [pod(0), pod(1)],
        replicas=1,
        stores={0: WORKING, 1: WORKING},
        loads={0: CNLoad(sessions=0), 1: CNLoad(sessions=4)},
        intents=["start draining CN tp-cn-0", "set CN tp-cn-0 Draining", "take CN tp-cn-0 out of service"],
        busy=True,
    ),
    "scale-in drains the other CN when the sessions are the other way round": Case(
        [pod(0), pod(1)],
        replicas=1,
        stores={0: WORKING, 1: WORKING},
        loads={0: CNLoad(sessions=4), 1: CNLoad(sessions=0)},
        intents=["start draining CN tp-cn-1", "set CN tp-cn-1 Draining", "take CN tp-cn-1 out of service"],
        busy=True,
    ),
    "with draining off a leaving CN is deleted at once": Case(
        [pod(0), pod(1)],
        replicas=1,
        spec={"scalingConfig": {"storeDrainEnabled": False}},
        stores={0: WORKING, 1: WORKING},
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        busy=True,
    ),
    "a drained CN whose lock tables moved is removed": Case(
        [pod(0), pod(1, draining=60)],
        replicas=1,
        stores={0: WORKING, 1: DRAINING},
        loads={1: CNLoad(sessions=0)},
        locks={1: LockAnswer(True)},
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        busy=True,
    ),
    "a drained CN whose lock tables have not moved is marked restarting": Case(
        [pod(0), pod(1, draining=60)],
        replicas=1,
        stores={0: WORKING, 1: DRAINING},
        loads={1: CNLoad(sessions=0)},
        locks={1: LockAnswer(False, "2 transactions remain")},
        intents=[
            "mark CN tp-cn-1 restarting in the lock service",
            "record that CN tp-cn-1 is restarting in the lock service",
        ],
        set_conditions=[("Draining", True, "Draining")],
        events=["MigratingLockTables"],
        busy=True,
    ),
    "a drained CN on MatrixOne before 1.2 goes without asking the lock service": Case(
        [pod(0), pod(1, draining=60)],
        replicas=1,
        spec={"image": "matrixorigin/matrixone:1.1.0"},
        stores={0: WORKING, 1: DRAINING},
        loads={1: CNLoad(sessions=0)},
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        busy=True,
    ),
    "a draining CN with sessions waits for them, held Draining": Case(
        [pod(0), pod(1, draining=60)],
        replicas=1,
        stores={0: WORKING, 1: WORKING},
        loads={1: CNLoad(sessions=3)},
        intents=["set CN tp-cn-1 Draining"],
        set_conditions=[("Draining", True, "Draining")],
        busy=True,
    ),
    "a draining CN MatrixOne no longer knows is removed": Case(
        [pod(0), pod(1, draining=60)],
        replicas=1,
        stores={0: WORKING},
        loads={1: StoreNotFound("uuid-tp-cn-1")},
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        busy=True,
    ),
    "a drain past its timeout removes the CN with a warning": Case(
        [pod(0), pod(1, draining=400)],
        replicas=1,
        stores={0: WORKING, 1: DRAINING},
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        events=["DrainTimeout"],
        busy=True,
    ),
    "the last drain over turns the Draining condition False": Case(
        [pod(0), pod(1, draining=400)],
        replicas=1,
        stores={0: WORKING, 1: DRAINING},
        conditions=frozenset({"Draining"}),
        intents=["delete Pod tp-cn-1 uid=uid-tp-cn-1"],
        set_conditions=[("Draining", False, "NoDrain")],
        events=["DrainTimeout"],
        busy=True,
    ),
    "a CN still draining is put back when the set grows": Case(
        [pod(0), pod(1, draining=5)],
        stores={0: WORKING, 1: DRAINING},
        intents=["put CN tp-cn-1 back to work", "stop draining CN tp-cn-1"],
        events=["DrainCancelled"],
        busy=True,
    ),
    "a roll makes a new pod before an outdated one goes": Case(
        [pod(0, outdated=True), pod(1, outdated=True)],
        stores={0: WORKING, 1: WORKING},
        intents=["create Pod tp-cn-2"],
        busy=True,
    ),
    "HAKeeper not answering is said in its condition and holds the stores": Case(
        [pod(0), pod(1)],
        stores={0: WORKING, 1: WORKING},
        trouble=Trouble(Failure.UNREACHABLE, "HAKeeperUnreachable", "no answer"),
        set_conditions=[("HAKeeper", False, "HAKeeperUnreachable")],
        busy=True,
    ),
    "HAKeeper answering again turns its condition True": Case(
        [pod(0), pod(1)],
        stores={0: WORKING, 1: WORKING},
        conditions=frozenset({"HAKeeper"}),
        set_conditions=[("HAKeeper", True, "Answering")],
    ),
    "a CN that runs but has not registered is looked for again soon": Case(
        [pod(0), pod(1)],
        stores={0: WORKING},
        look=0.1,
        intents=["mark CN tp-cn-1 NotRegistered"],
        later=(Wait, "CN stores to register with HAKeeper"),
        busy=True,
    ),
}


def _judged(made: CNSetDecision) -> tuple[Any, ...]:
    d = made.decision
    later = (type(d.later), d.later.reason) if d.later is not None else None
    return (
        [said(i) for i in d.intents],
        [(c.type, c.status, c.reason) for c in d.conditions],
        [e.reason for e in d.events],
        later,
        made.report.busy,
    )


@pytest.mark.parametrize("case", SERVING.values(), ids=SERVING.keys())
def test_a_serving_set_decides_from_what_it_read(case: Case) -> None:
    made = decide(view_of(case), SETTINGS)
    assert _judged(made) == (case.intents, case.set_conditions, case.events, case.later, case.busy)


def test_a_pod_the_decision_creates_names_its_hakeeper_and_logset() -> None:
    made = decide(view_of(Case([], replicas=1)), SETTINGS)
    (create,) = made.decision.intents
    assert isinstance(create, Create) and made.created
    annotations = create.obj["metadata"]["annotations"]
    assert annotations[labels.CN_LABEL] == cn_labels_json(view_of(Case([])).spec)
    assert create.obj["metadata"]["labels"][TEMPLATE_HASH] == DIGEST


UP_TO_DATE = ("UpToDate", True, "Pooling")


def test_the_status_names_the_live_pods_their_stores_and_where_clients_connect() -> None:
    case = Case([pod(0), pod(1, ready=False), pod(2, draining=5)], stores={0: WORKING, 1: DRAINING})
    status = decide(view_of(case), SETTINGS).decision.status
    assert status == {
        "stores": [
            {"uuid": "uuid-tp-cn-0", "podName": "tp-cn-0", "state": "Up"},
            {"uuid": "uuid-tp-cn-1", "podName": "tp-cn-1", "state": "Unknown"},
            {"uuid": "uuid-tp-cn-2", "podName": "tp-cn-2", "state": "Draining"},
        ],
        "replicas": 3,
        "readyReplicas": 1,
        "labelSelector": "",
        "host": "tp-cn.ns",
        "port": 6001,
    }


def pool_case(*pods: Obj, stores: dict[int, WorkState], ready: tuple[bool, str], **kw: Any) -> Case:
    """A pooling set's case; ``ready``: its ``Ready`` condition's status and reason."""
    conditions = [("Ready", *ready), UP_TO_DATE]
    spec = {"podManagementPolicy": "Pooling"}
    return Case(list(pods), replicas=len(pods), stores=stores, spec=spec, set_conditions=conditions, **kw)


def pooled(index: int, phase: str, **kw: Any) -> Obj:
    """A pool pod named as the ``tp`` set's pods."""
    return pool_pod(index, phase, set_name="tp", **kw)


RECLAIMED = {labels.RECLAIMED_AT: format_time(NOW - 20)}
POOLING = {
    "a registered new pod becomes Idle": pool_case(
        pooled(0, labels.POOL_PHASE_UNKNOWN),
        stores={0: DRAINING},
        ready=(False, "CNsNotReady"),
        intents=["mark CN tp-cn-0 Idle", "set the readiness of CN tp-cn-0: Idle"],
    ),
    "a new pod not registered yet waits, not ready": pool_case(
        pooled(0, labels.POOL_PHASE_UNKNOWN),
        stores={},
        ready=(False, "CNsNotReady"),
        intents=["set the readiness of CN tp-cn-0: NotRegistered"],
        busy=True,
    ),
    "a reclaimed pod with no session left returns to Idle": pool_case(
        pooled(0, labels.POOL_PHASE_DRAINING, annotations=RECLAIMED),
        stores={0: DRAINING},
        ready=(True, "AllCNsReady"),
        loads={0: CNLoad(sessions=0)},
        intents=[
            "set the readiness of CN tp-cn-0: Reclaiming",
            "mark CN tp-cn-0 Idle",
            "set the readiness of CN tp-cn-0: Idle",
        ],
    ),
    "a reclaimed pod still holding sessions waits": pool_case(
        pooled(0, labels.POOL_PHASE_DRAINING, annotations=RECLAIMED),
        stores={0: DRAINING},
        ready=(True, "AllCNsReady"),
        loads={0: CNLoad(sessions=2)},
        intents=["set the readiness of CN tp-cn-0: Reclaiming"],
        busy=True,
    ),
    "a reclaimed pod within minDelaySeconds is looked at again once they pass": pool_case(
        pooled(0, labels.POOL_PHASE_DRAINING, annotations={labels.RECLAIMED_AT: format_time(NOW - 5)}),
        stores={0: DRAINING},
        ready=(True, "AllCNsReady"),
        intents=["set the readiness of CN tp-cn-0: Reclaiming"],
        later=(Requeue, "CN tp-cn-0 to have drained for minDelaySeconds"),
        busy=True,
    ),
}


@pytest.mark.parametrize("case", POOLING.values(), ids=POOLING.keys())
def test_a_pooling_set_decides_from_what_it_read(case: Case) -> None:
    made = decide(view_of(case), SETTINGS)
    assert _judged(made) == (case.intents, case.set_conditions, case.events, case.later, case.busy)


FINALIZE = {
    "every CN not draining yet starts to drain": (
        Case([pod(0), pod(1, draining=5)]),
        ["start draining CN tp-cn-0", "set CN tp-cn-0 Draining", "take CN tp-cn-0 out of service"],
    ),
    "a drained CN goes while the set waits for the rest": (
        Case(
            [pod(0, draining=60), pod(1, draining=5)],
            loads={0: CNLoad(sessions=0)},
            locks={0: LockAnswer(True)},
        ),
        ["delete Pod tp-cn-0 uid=uid-tp-cn-0"],
    ),
    "a CN with sessions holds the set": (
        Case([pod(0, draining=60)], loads={0: CNLoad(sessions=1)}),
        [],
    ),
}


@pytest.mark.parametrize(("case", "intents"), FINALIZE.values(), ids=FINALIZE.keys())
def test_a_set_with_the_drain_policy_goes_once_its_cns_drained(case: Case, intents: list[str]) -> None:
    decision = decide_finalize(view_of(case, hakeeper=False), SETTINGS)
    assert [said(i) for i in decision.intents] == intents
    assert not decision.finalized
    assert decision.later == Wait(5.0, "the CNs to drain before the set goes")
    assert ("Draining", True) in [(c.type, c.status) for c in decision.conditions]
