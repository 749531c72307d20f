"""A CNSet's ``decide_members``, ``decide`` and ``decide_finalize``: what a round does
to its pods and to MatrixOne from what it read (pods, HAKeeper's stores, the CNs'
loads, the TN lock service's answers), and the round's one plan around it (the shared
objects first, the claims' growth and unused configs last, the status and when to look
again), as data, with no client and no event loop."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

import pytest

from mo_operator.api.cnset import CNSet
from mo_operator.controllers.cnset.decide import CNSetDecision, decide, decide_finalize, decide_members
from mo_operator.controllers.cnset.observed import CNSetView, Desired, LockAnswer, Unserved
from mo_operator.controllers.cnset.pods import TEMPLATE_HASH, cn_labels_json
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import SetCondition
from mo_operator.controllers.framework.references import Ref
from mo_operator.controllers.framework.unseen import Applied, Key
from mo_operator.controllers.framework.writes import Apply, Call, Create, Delete, Intent, Patch
from mo_operator.controllers.specs.configmaps import CONFIG_HASH_LABEL
from mo_operator.controllers.specs.pods import format_time
from mo_operator.controllers.steps.deps import LogService, Waiting
from mo_operator.controllers.steps.podset_input import Cached, served_input
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
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.discovery import HAKeeperEndpoint
from mo_operator.settings import Settings

from .cnset_fakes import cnset, running, with_annotations
from .controller_fakes import NOW
from .pool_fakes import DISCOVERY, NS, FakeAdmin, pool_pod, store

Obj = dict[str, Any]
DIGEST = "current"
SETTINGS = Settings(rollout_stall_seconds=600.0, busy_poll_seconds=5.0, poll_seconds=60.0)
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
    made = decide_members(view_of(case), SETTINGS)
    assert _judged(made) == (case.intents, case.set_conditions, case.events, case.later, case.busy)


def test_a_pod_the_decision_creates_names_its_hakeeper_and_logset() -> None:
    made = decide_members(view_of(Case([], replicas=1)), SETTINGS)
    (create,) = made.decision.intents
    assert isinstance(create, Create) and made.created
    annotations = create.obj["metadata"]["annotations"]
    assert annotations[labels.CN_LABEL] == cn_labels_json(view_of(Case([])).spec)
    assert create.obj["metadata"]["labels"][TEMPLATE_HASH] == DIGEST


UP_TO_DATE = ("UpToDate", True, "Pooling")


def test_the_status_names_the_live_pods_their_stores_and_where_clients_connect() -> None:
    case = Case([pod(0), pod(1, ready=False), pod(2, draining=5)], stores={0: WORKING, 1: DRAINING})
    status = decide_members(view_of(case), SETTINGS).decision.status
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
    made = decide_members(view_of(case), SETTINGS)
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


# ------------------------------------------------------------------ the one plan
BOUND_CLASS = {"metadata": {"name": "fast"}, "allowVolumeExpansion": True}


def claim(index: int, size: str) -> Obj:
    """Pod ``tp-cn-<index>``'s cache volume claim, bound, asking ``size``."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": f"mo-data-tp-cn-{index}", "namespace": NS, "uid": f"uid-claim-{index}"},
        "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": size}}},
        "status": {"phase": "Bound"},
    }


def config_map(name: str) -> Obj:
    """A hashed ConfigMap of the set that no pod mounts."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "labels": {CONFIG_HASH_LABEL: "tp-cn-config"},
            "ownerReferences": [{"kind": "CNSet", "name": "tp", "uid": "uid-tp", "controller": True}],
        },
        "data": {},
    }


def round_view(
    case: Case,
    *,
    cached: Sequence[tuple[str, Obj]] = (),
    applied: Mapping[Key, Applied] | None = None,
    configs: Sequence[Obj] = (),
    claims: Sequence[Obj] = (),
) -> CNSetView:
    """``view_of(case)`` as the actor reads a whole round: the set's real config and
    Services (its pods keep the case's template hash), and what the cache holds of them."""
    view = view_of(case)
    want = view.want
    assert want is not None
    given = served_input(view.obj, Component.CN, view.spec, want.service)
    want = replace(want, selector=given.selector, obj_labels=given.labels, config=given.config)
    objects = {(kind, o["metadata"]["name"]): o for kind, o in cached}
    objects.update((("ConfigMap", c["metadata"]["name"]), c) for c in configs)
    classes = {"fast": BOUND_CLASS} if claims else {}
    return replace(
        view,
        want=want,
        known={"conditions": []},
        cached=Cached(objects, applied or {}, tuple(claims), classes),
        configs=tuple(configs),
    )


def said_whole(intent: Intent) -> str:
    """``said``, and an apply as the plan says it."""
    if isinstance(intent, Apply):
        return f"apply {intent.resource.kind} {intent.obj['metadata']['name']}"
    return said(intent)


def shared_of(case: Case) -> list[tuple[str, Obj]]:
    """The shared objects a round of ``case`` applies, as the cache holds them once written."""
    first = decide(round_view(case), SETTINGS)
    return [(i.resource.kind, dict(i.obj)) for i in first.intents if isinstance(i, Apply)]


SETTLED = Case([pod(0), pod(1)], stores={0: WORKING, 1: WORKING})
SHARED = [
    "apply PodDisruptionBudget tp-cn",
    "apply ConfigMap tp-cn-config-",
    "apply Service tp-cn-headless",
    "apply Service tp-cn",
]


def test_a_new_set_plans_its_shared_objects_before_its_pods() -> None:
    intents = [said_whole(i) for i in decide(round_view(Case([])), SETTINGS).intents]
    shared = [i.rpartition("-")[0] + "-" if "ConfigMap" in i else i for i in intents[:4]]
    assert (shared, intents[4:]) == (SHARED, ["create Pod tp-cn-0", "create Pod tp-cn-1"])


def test_a_converged_set_decides_zero_intents_and_polls_hakeeper() -> None:
    decision = decide(round_view(SETTLED, cached=shared_of(SETTLED)), SETTINGS)
    assert decision.intents == ()
    assert decision.later == Requeue(60.0, "the CN stores as HAKeeper sees them")


def test_a_set_whose_cache_lost_a_service_applies_it_alone() -> None:
    cached = [
        (kind, o) for kind, o in shared_of(SETTLED) if (kind, o["metadata"]["name"]) != ("Service", "tp-cn")
    ]
    decision = decide(round_view(SETTLED, cached=cached), SETTINGS)
    assert [said_whole(i) for i in decision.intents] == ["apply Service tp-cn"]
    assert decision.later == Wait(5.0, "the CNs' work under way (drains, registrations, labels)")


def _unseen(before: str | None) -> tuple[list[tuple[str, Obj]], dict[Key, Applied]]:
    """The shared objects cached, but the client Service's apply of ours on its way:
    the cache shows version ``1`` of an older one, and we applied the desired one over
    ``before``."""
    cached = shared_of(SETTLED)
    kind, service = next((k, o) for k, o in cached if (k, o["metadata"]["name"]) == ("Service", "tp-cn"))
    older = {**service, "metadata": {**service["metadata"], "resourceVersion": "1", "annotations": {}}}
    rest = [(k, o) for k, o in cached if o is not service]
    return [*rest, (kind, older)], {("Service", NS, "tp-cn"): Applied(service, before)}


UNSEEN = {
    "an apply the cache has not shown yet is left out": ("1", []),
    "an apply the cache has moved past is written again": ("0", ["apply Service tp-cn"]),
}


@pytest.mark.parametrize(("before", "intents"), UNSEEN.values(), ids=UNSEEN.keys())
def test_our_applies_on_their_way_to_the_cache_are_not_sent_twice(before: str, intents: list[str]) -> None:
    cached, applied = _unseen(before)
    decision = decide(round_view(SETTLED, cached=cached, applied=applied), SETTINGS)
    assert [said_whole(i) for i in decision.intents] == intents


GROW = {"cacheVolume": {"size": "2Gi", "storageClassName": "fast"}}
TAIL = {
    "a config no pod mounts goes last, once the set converged": (
        Case([pod(0), pod(1)], stores={0: WORKING, 1: WORKING}),
        [],
        ["delete ConfigMap tp-cn-config-old uid=uid-tp-cn-config-old"],
    ),
    "a config no pod mounts stays while a pod is created": (
        Case([pod(0)], stores={0: WORKING}),
        [],
        ["create Pod tp-cn-1"],
    ),
    "a cache claim grows after the pods' intents, and the old config waits for it": (
        Case([pod(0), pod(1, ready=False)], stores={0: WORKING, 1: DRAINING}, spec=GROW),
        [claim(0, "1Gi")],
        ["put CN tp-cn-1 to work", "grow PersistentVolumeClaim mo-data-tp-cn-0 to 2Gi"],
    ),
    "a cache claim at its size leaves the old config to go": (
        Case([pod(0), pod(1, ready=False)], stores={0: WORKING, 1: DRAINING}, spec=GROW),
        [claim(0, "2Gi")],
        ["put CN tp-cn-1 to work", "delete ConfigMap tp-cn-config-old uid=uid-tp-cn-config-old"],
    ),
}


@pytest.mark.parametrize(("case", "claims", "intents"), TAIL.values(), ids=TAIL.keys())
def test_the_plan_ends_with_the_claims_growth_and_the_unused_configs(
    case: Case, claims: list[Obj], intents: list[str]
) -> None:
    view = round_view(case, cached=shared_of(case), configs=[config_map("tp-cn-config-old")], claims=claims)
    assert [said_whole(i) for i in decide(view, SETTINGS).intents] == intents


STARTING = pool_case(
    pooled(0, labels.POOL_PHASE_UNKNOWN, ready=False), stores={0: DRAINING}, ready=(False, "CNsNotReady")
)
"""A pool pod not ready for 100 s."""
LATER = {
    "work under way looks again at the busy pace": (
        Case([pod(0), pod(1, draining=60)], stores={0: WORKING, 1: DRAINING}, loads={1: CNLoad(sessions=3)}),
        SETTINGS,
        Wait(5.0, "the CNs' work under way (drains, registrations, labels)"),
    ),
    "a quiet set polls HAKeeper": (SETTLED, SETTINGS, Requeue(60.0, "the CN stores as HAKeeper sees them")),
    "a starting CN is looked at again when it would stall": (
        STARTING,
        Settings(rollout_stall_seconds=600.0, busy_poll_seconds=1000.0, poll_seconds=1000.0),
        Requeue(500.0, "whether a starting CN is stalled"),
    ),
    "a starting CN far from stalling waits at the busy pace": (
        STARTING,
        Settings(rollout_stall_seconds=6000.0, busy_poll_seconds=1000.0, poll_seconds=1000.0),
        Wait(1000.0, "the CNs' work under way (drains, registrations, labels)"),
    ),
}


@pytest.mark.parametrize(("case", "settings", "later"), LATER.values(), ids=LATER.keys())
def test_the_round_looks_again_as_soon_as_its_work_asks(case: Case, settings: Settings, later: Any) -> None:
    view = round_view(case, cached=shared_of(case))
    assert decide(view, settings).later == later


def test_the_round_drafts_the_pods_status_then_the_roll_and_writes_no_status_itself() -> None:
    decision = decide(round_view(SETTLED, cached=shared_of(SETTLED)), SETTINGS)
    assert isinstance(decision.status, Mapping)
    assert (decision.status["readyReplicas"], decision.status["replicas"]) == (2, 2)
    assert ("Ready", True, "AllCNsReady") in [(c.type, c.status, c.reason) for c in decision.conditions]


def test_a_set_waiting_for_its_log_service_reports_every_field_and_writes_nothing() -> None:
    view = view_of(SETTLED)
    waiting = Unserved(view.obj, view.spec, {}, Waiting("LogSetNotReady", "waiting for LogSet mo"))
    decision = decide(waiting, SETTINGS)
    assert (decision.intents, decision.later) == ((), None)
    assert decision.conditions[0] == SetCondition("Ready", False, "LogSetNotReady", "waiting for LogSet mo")
    assert decision.status["replicas"] == 0 and decision.status["host"] == "tp-cn.ns"


REFS = {
    "a missing Secret comes first in the status and is looked up again": (
        (Ref("Secret", "s3-creds", "spec.overlay.env[0]"),),
        ("ResolvedRefs", False, "SecretNotFound"),
        Requeue(30.0, "whether the missing references exist now"),
    ),
    "nothing missing, nothing said of references": (
        (),
        ("Ready", True, "AllCNsReady"),
        Requeue(60.0, "the CN stores as HAKeeper sees them"),
    ),
}


@pytest.mark.parametrize(("missing", "first", "later"), REFS.values(), ids=REFS.keys())
def test_the_references_are_reported_before_the_roll(
    missing: tuple[Ref, ...], first: tuple[str, bool, str], later: Any
) -> None:
    view = replace(round_view(SETTLED, cached=shared_of(SETTLED)), missing=missing, recheck_refs=30.0)
    decision = decide(view, SETTINGS)
    assert (
        decision.conditions[0].type,
        decision.conditions[0].status,
        decision.conditions[0].reason,
    ) == first
    assert decision.later == later
