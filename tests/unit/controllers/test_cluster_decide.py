"""A MatrixOneCluster's ``decide``: the credential, the restore gate, every child in
dependency order, the children the spec dropped and the status they add up to, as
data (intents, status, conditions, Events), with no client and no event loop."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from mo_operator.api.cluster import MatrixOneCluster
from mo_operator.controllers.cluster.actor import ClusterView, decide
from mo_operator.controllers.cluster.children import RENDERINGS, child_keys, desired_children
from mo_operator.controllers.cluster.restore import restore_job
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.writes import Apply, Create, Delete, Intent, Patch, Then
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels

from .test_cluster_actor import cluster, kids, settled_world, stored

Obj = dict[str, Any]
World = Callable[[], list[Obj]]


def _none() -> list[Obj]:
    return []


def _settled() -> list[Obj]:
    return settled_world(cluster())


def _log_took_the_upgrade() -> list[Obj]:
    world = _settled()
    world[0] = stored(kids(cluster(version="1.2.4"))[0].obj)
    return world


def _log_stalled() -> list[Obj]:
    world = _settled()
    world[0] = stored(kids(cluster(version="1.2.4"))[0].obj, current=False)
    world[0]["status"]["conditions"][1].update(reason="RolloutStalled", message="pod mo-log-2 is not ready")
    return world


def _scaled_on_the_set() -> list[Obj]:
    world = _settled()
    world[2]["spec"]["replicas"] = 4
    return world


def _with_group(uid: str) -> Callable[[], list[Obj]]:
    def world() -> list[Obj]:
        gone = stored(kids(cluster())[2].obj)
        gone["metadata"].update(name="mo-old", uid="uid-old")
        gone["metadata"]["ownerReferences"] = [{**gone["metadata"]["ownerReferences"][0], "uid": uid}]
        return [*_settled(), gone]

    return world


def _restoring(obj: Obj) -> Obj:
    obj["spec"]["restoreFrom"] = "nightly-4d21b"
    obj["spec"]["logService"]["sharedStorage"] = {"s3": {"path": "bucket/mo"}}
    return obj


@dataclass
class Case:
    version: str = "1.2.3"
    world: World = _settled
    phase: str = "Ready"
    """The phase the status last said."""
    credential: bool = True
    restore: str | None = None
    """``restoreFrom`` and the RestoreJob's phase (``absent``: not made yet)."""
    intents: list[str] = field(default_factory=list)
    first: int | None = 1
    """Where the LogSet's cut (``Then``) falls among ``intents``; None: no cut (the restore gate held)."""
    events: list[str] = field(default_factory=list)
    conditions: dict[str, tuple[bool, str]] = field(default_factory=dict)
    status_phase: str = "Ready"


SETTLED = {
    "Ready": (True, "AllSetsReady"),
    "UpToDate": (True, "RolloutComplete"),
    "Upgrading": (False, "UpToDate"),
    "Scaling": (False, "AtDesiredReplicas"),
}
ROLLING = {**SETTLED, "UpToDate": (False, "Rolling"), "Upgrading": (True, "Rolling")}

CASES = {
    "a settled cluster writes nothing and is Ready": Case(first=0, conditions=SETTLED),
    "a new cluster makes its credential and every child, the LogSet before the rest": Case(
        world=_none,
        phase="",
        credential=False,
        intents=[
            "create Secret mo-credential",
            "apply LogSet mo",
            "apply DNSet mo",
            "apply CNSet mo-tp",
            "apply ProxySet mo",
        ],
        first=2,
        conditions={
            "Ready": (False, "LogServiceNotReady"),
            "UpToDate": (False, "Rolling"),
            "Upgrading": (False, "NoRollout"),
            "Scaling": (False, "AtDesiredReplicas"),
        },
        status_phase="NotReady",
    ),
    "an upgrade of a serving cluster reaches the log service first and is Upgrading": Case(
        version="1.2.4", intents=["apply LogSet mo"], conditions=ROLLING, status_phase="Upgrading"
    ),
    "the same upgrade of a cluster that was not serving leaves it NotReady": Case(
        version="1.2.4",
        phase="NotReady",
        intents=["apply LogSet mo"],
        conditions={**ROLLING, "Upgrading": (False, "NoRollout")},
        status_phase="NotReady",
    ),
    "the TN rolls once the log service settled": Case(
        version="1.2.4",
        world=_log_took_the_upgrade,
        intents=["apply DNSet mo"],
        first=0,
        conditions=ROLLING,
        status_phase="Upgrading",
    ),
    "a stalled roll halts where it stopped": Case(
        version="1.2.4",
        world=_log_stalled,
        first=0,
        conditions={**ROLLING, "UpToDate": (False, "RolloutHalted")},
        status_phase="Upgrading",
    ),
    "a set scaled on itself is set back, saying so": Case(
        world=_scaled_on_the_set,
        intents=["apply CNSet mo-tp"],
        first=0,
        events=["ChildReverted"],
        conditions=ROLLING,
        status_phase="Upgrading",
    ),
    "a CN group the spec no longer names is deleted in the foreground": Case(
        world=_with_group("uid-mo"),
        intents=["delete CNSet mo-old"],
        first=0,
        conditions={**SETTLED, "UpToDate": (False, "RemovingSets"), "Upgrading": (True, "Rolling")},
        status_phase="Upgrading",
    ),
    "one another cluster controls is left alone": Case(
        world=_with_group("uid-other"), first=0, conditions=SETTLED
    ),
    "a restore not made yet holds every child": Case(
        world=_none,
        phase="",
        restore="absent",
        intents=["create RestoreJob restore-mo"],
        first=None,
        events=["Restoring"],
        conditions={"Ready": (False, "Restoring")},
        status_phase="NotReady",
    ),
    "a restore that failed holds them, saying why": Case(
        world=_none,
        phase="",
        restore="Failed",
        first=None,
        events=["RestoreFailed"],
        conditions={"Ready": (False, "RestoreFailed")},
        status_phase="NotReady",
    ),
    "a completed restore is recorded and the children are made": Case(
        world=_none,
        phase="",
        restore="Completed",
        intents=[
            "patch MatrixOneCluster mo",
            "apply LogSet mo",
            "apply DNSet mo",
            "apply CNSet mo-tp",
            "apply ProxySet mo",
        ],
        first=2,
        events=["Restored"],
        conditions={
            "Ready": (False, "LogServiceNotReady"),
            "UpToDate": (False, "Rolling"),
            "Upgrading": (False, "NoRollout"),
            "Scaling": (False, "AtDesiredReplicas"),
        },
        status_phase="NotReady",
    ),
}


def _describe(intent: Intent) -> str:
    match intent:
        case Apply(resource, obj) | Create(resource, obj):
            verb = "apply" if isinstance(intent, Apply) else "create"
            return f"{verb} {resource.kind} {obj['metadata']['name']}"
        case Delete(resource, _, name):
            return f"delete {resource.kind} {name}"
        case Patch(resource, _, name):
            return f"patch {resource.kind} {name}"
        case Then():
            return "then"
    raise AssertionError(intent)


def view(case: Case, **given: Any) -> ClusterView:
    """The view ``read`` gathers, from the case's objects."""
    raw = cluster(version=case.version)
    if case.restore is not None:
        raw = _restoring(raw)
    raw["status"] = {"phase": case.phase} if case.phase else {}
    obj = freeze(raw)
    spec = admit(MatrixOneCluster, obj).spec
    world = [freeze(o) for o in case.world()]
    found = {(o["kind"], o["metadata"]["name"]): o for o in world}
    restore = None
    if case.restore not in (None, "absent"):
        job = restore_job(raw, spec)
        job["metadata"]["uid"] = "uid-restore"
        job["status"] = {"phase": case.restore}
        restore = freeze(job)
    fields: dict[str, Any] = {
        "cluster": obj,
        "spec": spec,
        "known": raw["status"],
        "credential": freeze({"kind": "Secret"}) if case.credential else None,
        "password": "s3cret",
        "restore": restore,
        "named": {(res.kind, name): found.get((res.kind, name)) for res, name in child_keys("mo", spec)},
        "labelled": {
            key: o for key, o in found.items() if o["metadata"].get("labels") == {labels.CLUSTER: "mo"}
        },
    }
    return ClusterView(**{**fields, **given})


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide_leaves_the_shared_rendering_of_the_children_as_it_found_it(case: Case) -> None:
    given = view(case)
    rendering = RENDERINGS.of(given.cluster, given.spec, given.labelled)
    before = copy.deepcopy(([c.obj for c in rendering.children], dict(rendering.wants)))
    decide(given)
    assert RENDERINGS.of(given.cluster, given.spec, given.labelled) is rendering
    assert ([c.obj for c in rendering.children], dict(rendering.wants)) == before


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_decide(case: Case) -> None:
    decision = decide(view(case))
    expected = list(case.intents)
    if case.first is not None:
        expected.insert(case.first, "then")
    assert [_describe(i) for i in decision.intents] == expected
    assert all(i.uid for i in decision.intents if isinstance(i, Delete)), "deletes are conditional"
    assert [e.reason for e in decision.events] == case.events
    assert {c.type: (c.status, c.reason) for c in decision.conditions} == case.conditions
    assert isinstance(decision.status, dict)
    assert decision.status["phase"] == case.status_phase


def test_the_read_names_every_child_the_decision_makes() -> None:
    obj = cluster()
    obj["spec"]["webui"] = {"replicas": 1}
    spec = admit(MatrixOneCluster, freeze(obj)).spec
    made = [(c.resource.kind, c.name) for c in desired_children(obj, spec, {})]
    assert [(res.kind, name) for res, name in child_keys("mo", spec)] == made


def test_the_status_reports_each_child_and_removes_what_the_spec_dropped() -> None:
    case = CASES["a settled cluster writes nothing and is Ready"]
    status = decide(view(case)).status
    assert isinstance(status, dict)
    assert status["cnGroups"]["groups"] == [
        {"name": "tp", "host": "mo-tp-cn.ns", "ready": True, "synced": False}
    ]
    assert status["host"] == "mo-proxy.ns" and status["port"] == 6001
    assert status["readiness"] == "4/4" and status["message"] == ""
    assert status["webui"] is None, "a console the spec does not ask for is removed from the status"
    assert status["logService"]["observedGeneration"] == 7


def test_a_restored_cluster_takes_the_credential_of_the_cluster_its_backup_was_taken_from() -> None:
    case = Case(world=_none, phase="", credential=False, restore="Completed")
    backup = freeze(
        {
            "apiVersion": "core.matrixorigin.io/v1alpha1",
            "kind": "Backup",
            "metadata": {"name": "nightly-4d21b"},
            "meta": {
                "id": "4d21b228",
                "location": {"s3": {"path": "b/p"}},
                "atTime": "2023-11-14T22:13:20Z",
                "completeTime": "2023-11-14T22:13:21Z",
                "sourceRef": "matrixonecluster/prod/source",
                "raw": "4d21b228,1",
            },
        }
    )
    source = freeze({"kind": "Secret", "data": {"username": "dXNlcg==", "password": "cHc="}})
    decision = decide(view(case, backup=backup, source_credential=source))
    (secret,) = [i for i in decision.intents if isinstance(i, Create)]
    assert secret.obj["data"] == {"username": "dXNlcg==", "password": "cHc="}
    assert "CredentialNotRestored" not in [e.reason for e in decision.events]
    # without the source's Secret: a fresh credential, and a Warning saying the passwords stay the source's
    decision = decide(view(case, backup=backup))
    (secret,) = [i for i in decision.intents if isinstance(i, Create)]
    assert secret.obj["data"]["password"] == "czNjcmV0"
    assert [e.reason for e in decision.events][:1] == ["CredentialNotRestored"]
    assert "matrixonecluster/prod/source" in decision.events[0].message
