"""The set skeleton's ``decide`` (steps/podset.py), through a ProxySet (Deployment)
and a DNSet (StatefulSet): what a set does next from what it read, as data (intents,
status fields, conditions, when to look again), with no client and no event loop."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from mo_operator.controllers.dnset import DNSetActor
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Decision
from mo_operator.controllers.framework.draft import StatusDraft
from mo_operator.controllers.framework.references import Ref
from mo_operator.controllers.framework.unseen import Applied
from mo_operator.controllers.framework.writes import Apply, Call, Delete, Intent, Patch, key_of
from mo_operator.controllers.proxyset import ProxySetActor
from mo_operator.controllers.steps.deps import LogService, Waiting, resolve
from mo_operator.controllers.steps.podset import PodSetActor
from mo_operator.controllers.steps.podset_input import Cached, SetView, shared_storage_of
from mo_operator.controllers.tnset import TNSetActor
from mo_operator.kube.controller.outcome import Requeue
from mo_operator.kube.meta.objects import name_of
from mo_operator.kube.meta.times import format_time

from .controller_fakes import NOW, FakeCaches
from .podset_fakes import a_set, landed, logset, pod

Obj = dict[str, Any]
ACTORS: dict[str, type[PodSetActor]] = {"ProxySet": ProxySetActor, "DNSet": DNSetActor, "TNSet": TNSetActor}
WORKLOAD = {"ProxySet": "Deployment", "DNSet": "StatefulSet", "TNSet": "StatefulSet"}
SERVICE = {"ProxySet": "mo-proxy", "DNSet": "mo-dn-headless", "TNSet": "mo-dn-headless"}
EXPANDABLE = {"kind": "StorageClass", "metadata": {"name": "fast"}, "allowVolumeExpansion": True}
STALL = 120.0


def view(
    kind: str,
    obj: Obj | None = None,
    *,
    objects: Sequence[Obj] = (),
    pods: Sequence[Obj] = (),
    known: Mapping[str, Any] | None = None,
    applied: Mapping[Any, Applied] | None = None,
    missing: tuple[Ref, ...] | None = None,
    waiting: bool = False,
    claims: Sequence[Obj] = (),
) -> SetView:
    obj = obj or a_set(kind)
    spec = admit(ACTORS[kind].model, obj).spec
    service: LogService | Waiting = resolve(FakeCaches(logset(bootstrapped=not waiting)), obj, spec)
    storage = shared_storage_of(service) if isinstance(service, LogService) else None
    classes = {"fast": EXPANDABLE}
    cached = Cached({(o["kind"], name_of(o)): o for o in objects}, applied or {}, tuple(claims), classes)
    configs = tuple(o for o in objects if o["kind"] == "ConfigMap")
    return SetView(
        obj, spec, known or {}, service, NOW, STALL, storage, missing, 10.0, cached, configs, tuple(pods)
    )


def decide(kind: str, v: SetView) -> Decision:
    return ACTORS[kind].decide(v)


def status_after(decision: Decision, known: Mapping[str, Any], generation: int = 1) -> dict[str, Any]:
    """The status the framework writes for ``decision`` over ``known``."""
    draft = StatusDraft(known, generation=generation, namespace="ns")
    draft.status.update(dict(decision.status))
    for c in decision.conditions:
        draft.set_condition(c.type, c.status, c.reason, c.message)
    return {**draft.status, "observedGeneration": generation}


def applies_of(decision: Decision) -> list[Obj]:
    return [dict(i.obj) for i in decision.intents if isinstance(i, Apply)]


def first(kind: str, obj: Obj | None = None) -> Decision:
    return decide(kind, view(kind, obj))


def settled(kind: str) -> tuple[list[Obj], list[Obj], dict[str, Any]]:
    """The set's objects and pods after its first round landed and rolled, and its
    status after the round that saw that."""
    round1 = first(kind)
    objects, pods = landed(applies_of(round1), 2)
    known = status_after(round1, {})
    round2 = decide(kind, view(kind, objects=objects, pods=pods, known=known))
    return objects, pods, status_after(round2, known)


def verbs(intents: Sequence[Intent]) -> list[tuple[str, str]]:
    """Each intent as (verb, what it writes)."""
    out = []
    for i in intents:
        match i:
            case Apply(resource, obj):
                out.append(("apply", f"{resource.kind} {name_of(obj)}"))
            case Delete(resource, _, name):
                out.append(("delete", f"{resource.kind} {name}"))
            case Call(_, what):
                out.append(("call", what))
            case Patch(resource, _, name):
                out.append(("patch", f"{resource.kind} {name}"))
    return out


def reasons(decision: Decision) -> dict[str, str]:
    return {c.type: c.reason for c in decision.conditions}


# ---- cases: each builds a view and says what the decision must hold ----


def waiting_for_the_logset(kind: str) -> SetView:
    return view(kind, waiting=True)


def its_logset_ready(kind: str) -> SetView:
    return view(kind)


def settled_set(kind: str) -> SetView:
    objects, pods, known = settled(kind)
    return view(kind, objects=objects, pods=pods, known=known)


def image_changed(kind: str) -> SetView:
    objects, pods, known = settled(kind)
    obj = a_set(kind)
    obj["spec"]["image"] = "matrixorigin/matrixone:2.0.1"
    obj["metadata"]["generation"] = 2
    return view(kind, obj, objects=objects, pods=pods, known=known)


def old_config_left(kind: str, *, rolled: bool = True) -> SetView:
    objects, pods, known = settled(kind)
    other = a_set(kind)
    other["spec"]["config"] = "[log]\nlevel = 'debug'\n"
    old, _ = landed([o for o in applies_of(first(kind, other)) if o["kind"] == "ConfigMap"], 2)
    if not rolled:  # the workload controller has not seen its latest spec yet
        objects = [
            {**o, "status": {**o["status"], "observedGeneration": 0}} if o["kind"] == WORKLOAD[kind] else o
            for o in objects
        ]
    return view(kind, objects=[*objects, *old], pods=pods, known=known)


def old_config_mid_roll(kind: str) -> SetView:
    return old_config_left(kind, rolled=False)


def workload_apply_on_its_way(kind: str, *, same: bool = True) -> SetView:
    workload = next(o for o in applies_of(first(kind)) if o["kind"] == WORKLOAD[kind])
    res = ACTORS[kind].workload.resource
    sent = workload if same else {**workload, "spec": {**workload["spec"], "replicas": 7}}
    return view(kind, applied={key_of(res, workload): Applied(sent, None)})


def another_apply_on_its_way(kind: str) -> SetView:
    return workload_apply_on_its_way(kind, same=False)


def a_secret_missing(kind: str) -> SetView:
    objects, pods, known = settled(kind)
    missing = (Ref("Secret", "s3", "the log service's sharedStorage.s3.secretRef"),)
    return view(kind, objects=objects, pods=pods, known=known, missing=missing)


def stuck_pod(kind: str, *, since: float = NOW - 2 * STALL) -> SetView:
    objects, pods, known = settled(kind)
    objects = [
        {**o, "status": {**o["status"], "updateRevision": "rev2", "updatedReplicas": 1}}
        if o["kind"] == "StatefulSet"
        else o
        for o in objects
    ]
    stuck = pod(1, {**pods[1]["metadata"]["labels"]}, ready=False, since=since)
    stuck["metadata"]["creationTimestamp"] = format_time(NOW - 10 * STALL)
    new = {**pods[0], "metadata": {**pods[0]["metadata"], "labels": {**pods[0]["metadata"]["labels"]}}}
    new["metadata"]["labels"]["controller-revision-hash"] = "rev2"
    return view(kind, objects=objects, pods=[new, stuck], known=known)


def cache_volume(kind: str, size: str) -> Obj:
    obj = a_set(kind)
    obj["spec"]["cacheVolume"] = {"size": size, "storageClassName": "fast"}
    return obj


def a_bigger_cache_volume(kind: str, storage_class: str = "fast") -> SetView:
    """A TN whose cache volumes were made at 1Gi, now asked at 2Gi (its config, which
    sizes the disk cache, changes with them)."""
    round1 = decide(kind, view(kind, cache_volume(kind, "1Gi")))
    objects, pods = landed(applies_of(round1), 2)
    claims = [
        {
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": f"mo-data-mo-dn-{i}", "namespace": "ns"},
            "spec": {"storageClassName": storage_class, "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}},
        }
        for i in range(2)
    ]
    known = status_after(round1, {})
    return view(kind, cache_volume(kind, "2Gi"), objects=objects, pods=pods, known=known, claims=claims)


def a_bigger_volume_of_a_missing_class(kind: str) -> SetView:
    return a_bigger_cache_volume(kind, "gone")


def a_pod_just_not_ready(kind: str) -> SetView:
    return stuck_pod(kind, since=NOW - 10)


@dataclass(frozen=True)
class Case:
    build: Callable[[str], SetView]
    kinds: tuple[str, ...]
    writes: Callable[[str], list[tuple[str, str]]]
    conditions: Mapping[str, str] = field(default_factory=dict)
    later: bool = False


def _first_writes(kind: str) -> list[tuple[str, str]]:
    workload = "mo-proxy" if kind == "ProxySet" else "mo-dn"
    return [
        ("apply", f"PodDisruptionBudget {workload}"),
        ("apply", f"ConfigMap {name_of(applies_of(first(kind))[1])}"),
        ("apply", f"Service {SERVICE[kind]}"),
        ("apply", f"{WORKLOAD[kind]} {workload}"),
    ]


BOTH = ("ProxySet", "DNSet", "TNSet")
STATEFUL = ("DNSet", "TNSet")
CASES = {
    "a set waits for its LogSet and writes nothing": Case(
        waiting_for_the_logset, BOTH, lambda k: [], {"Ready": "WaitingForLogSet", "UpToDate": "NotStarted"}
    ),
    "a set whose LogSet is ready writes its budget, config, Service and workload": Case(
        its_logset_ready, BOTH, _first_writes, {"UpToDate": "Applying"}
    ),
    "a settled set writes nothing and is up to date": Case(
        settled_set, BOTH, lambda k: [], {"UpToDate": "RolloutComplete"}
    ),
    "a new image rolls the workload": Case(
        image_changed,
        BOTH,
        lambda k: [("apply", f"{WORKLOAD[k]} {'mo-proxy' if k == 'ProxySet' else 'mo-dn'}")],
        {"UpToDate": "RollingUpdate"},
    ),
    "a config no pod mounts goes once the roll is complete": Case(
        old_config_left,
        BOTH,
        lambda k: [("delete", f"ConfigMap {name_of(old_config_left(k).configs[-1])}")],
        {"UpToDate": "RolloutComplete"},
    ),
    "a config no pod mounts stays while the roll is not complete": Case(
        old_config_mid_roll, BOTH, lambda k: []
    ),
    "the workload this process just applied is not applied again": Case(
        workload_apply_on_its_way, BOTH, lambda k: _first_writes(k)[:3]
    ),
    "an apply of something else than the workload wanted does not hold it back": Case(
        another_apply_on_its_way, BOTH, _first_writes
    ),
    "a missing Secret is reported and looked up again": Case(
        a_secret_missing, BOTH, lambda k: [], {"ResolvedRefs": "SecretNotFound"}, later=True
    ),
    "a pod stuck on an outdated revision is replaced": Case(
        stuck_pod, STATEFUL, lambda k: [("call", "replace pod mo-1, stuck on an outdated revision")]
    ),
    "a pod not ready for a short while is left to the StatefulSet": Case(
        a_pod_just_not_ready, STATEFUL, lambda k: []
    ),
    "a bigger cache volume grows the claims, then replaces the StatefulSet keeping its pods": Case(
        a_bigger_cache_volume,
        STATEFUL,
        lambda k: [
            ("patch", "PersistentVolumeClaim mo-data-mo-dn-0"),
            ("patch", "PersistentVolumeClaim mo-data-mo-dn-1"),
            ("apply", f"ConfigMap {name_of(applies_of(first(k, cache_volume(k, '2Gi')))[1])}"),
            ("call", "replace StatefulSet mo-dn (new volume claim templates, pods kept)"),
        ],
        {"VolumeExpansion": "Resizing"},
    ),
    "claims of a class that cannot expand keep the StatefulSet and say why": Case(
        a_bigger_volume_of_a_missing_class,
        STATEFUL,
        lambda k: [
            ("apply", f"ConfigMap {name_of(applies_of(first(k, cache_volume(k, '2Gi')))[1])}"),
            ("apply", "StatefulSet mo-dn"),
        ],
        {"VolumeExpansion": "StorageClassCannotExpand"},
    ),
}


@pytest.mark.parametrize(
    ("case", "kind"), [(name, kind) for name, case in CASES.items() for kind in case.kinds]
)
def test_the_skeleton_decides(case: str, kind: str) -> None:
    expected = CASES[case]
    decision = decide(kind, expected.build(kind))
    assert verbs(decision.intents) == expected.writes(kind)
    assert expected.conditions.items() <= reasons(decision).items()
    if expected.later:
        assert isinstance(decision.later, Requeue)


@pytest.mark.parametrize("kind", BOTH)
def test_a_set_reports_its_own_fields_in_the_kinds_words(kind: str) -> None:
    objects, pods, known = settled(kind)
    decision = decide(kind, view(kind, objects=objects, pods=pods, known=known))
    status = dict(decision.status)
    assert status["readiness"] == "2/2"
    ready = next(c for c in decision.conditions if c.type == "Ready")
    assert ready.status is True
    if kind == "ProxySet":
        assert (status["host"], status["readyReplicas"]) == ("mo-proxy.ns", 2)
        assert ready.reason == "AllProxiesReady"
    else:
        assert [s["podName"] for s in status["availableStores"]] == ["mo-0", "mo-1"]
        assert ready.reason == "AllStoresReady"


def test_a_decision_is_a_function_of_its_view() -> None:
    v = settled_set("DNSet")
    assert decide("DNSet", v) == decide("DNSet", replace(v))
