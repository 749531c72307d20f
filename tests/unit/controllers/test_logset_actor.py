"""The LogSet actor on hand-built caches and a HAKeeper fake: the bootstrap decision
recorded before anything runs, the S3 path held before a pod exists, the objects one
round writes, that a round over what the last one wrote writes nothing, that it
publishes its discovery address and is Ready as upstream's (its objects and its pods,
no HAKeeper round trip), how it reports HAKeeper, and how a config change rolls and is
collected."""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any, cast

import pytest

from mo_operator.controllers.framework.env import Settings
from mo_operator.controllers.logset import LogSetActor
from mo_operator.controllers.specs.configmaps import CONFIG_HASH_LABEL
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.admin import (
    AdminError,
    ClientFault,
    HAKeeperPhase,
    HAKeeperState,
    NotYet,
    Unreachable,
)
from mo_operator.matrixone.bootstrap import encode_annotation, plan_bootstrap
from mo_operator.matrixone.component import Component

from .controller_fakes import NOW, FakeCaches, RecordingClient, condition, context, make_env

Obj = dict[str, Any]
NS = "ns"
API = "core.matrixorigin.io/v1alpha1"
WRITTEN = [
    ("PodDisruptionBudget", "mo-log"),
    ("ConfigMap", "mo-log-config-"),
    ("ConfigMap", "mo-log-bootstrap"),
    ("ConfigMap", "mo-log-gossip"),
    ("Service", "mo-log-headless"),
    ("Service", "mo-log-discovery"),
    ("StatefulSet", "mo-log"),
]


class FakeHAKeeper:
    """The log service's HAKeeper: answers with ``phase``, or fails with ``error``."""

    def __init__(self, phase: HAKeeperPhase | None, error: AdminError | None = None) -> None:
        self.phase = phase
        self.error = error or Unreachable("connection refused")
        self.asked: list[str] = []

    def admin(self, address: str) -> FakeHAKeeper:
        self.asked.append(address)
        return self

    async def hakeeper_state(self) -> HAKeeperState:
        if self.phase is None:
            raise self.error
        return HAKeeperState(self.phase, 1)


def a_logset(*, bootstrapped: bool = False, recorded: bool = True, **spec: Any) -> Obj:
    annotations = {labels.LOGSET_BOOTSTRAP: encode_annotation(plan_bootstrap(3))} if recorded else {}
    obj: Obj = {
        "apiVersion": API,
        "kind": "LogSet",
        "metadata": {
            "name": "mo",
            "namespace": NS,
            "uid": "uid-mo",
            "generation": 1,
            "resourceVersion": "1",
            "annotations": annotations,
        },
        "spec": {
            "replicas": 3,
            "image": "matrixorigin/matrixone:2.0.0",
            "volume": {"size": "1Gi"},
            "sharedStorage": {"fileSystem": {"path": "/data"}},
            **spec,
        },
    }
    if bootstrapped:
        obj["status"] = {"discovery": {"address": names.discovery_host("mo", NS), "port": 32001}}
    return obj


async def one_round(
    obj: Obj, *cached: Obj, hakeeper: FakeHAKeeper | None = None, actor: LogSetActor | None = None
) -> tuple[list[tuple[str, str, str, Any]], Any]:
    """One reconcile: the writes its plan made and its context."""
    env = replace(make_env(FakeCaches(*cached)), admin=cast(Any, hakeeper or FakeHAKeeper(None)))
    if actor is not None:
        actor.env = env
    ctx = context(obj)
    plan = await (actor or LogSetActor(env)).observe(ctx)
    if plan is not None:
        await plan(ctx)
    return cast(RecordingClient, env.client).calls, ctx


def applied(calls: list[Any]) -> list[Obj]:
    """What the server would hold after the round's applies."""
    return [{**copy.deepcopy(c[3]), "kind": c[1]} for c in calls if c[0] == "apply"]


def running(sts: Obj, *, not_ready: frozenset[int] = frozenset()) -> list[Obj]:
    """The StatefulSet, its roll done, and its pods: ready but those in ``not_ready``."""
    revision = "mo-log-1"
    done: Obj = copy.deepcopy(sts)
    replicas = done["spec"]["replicas"]
    done["metadata"]["generation"] = 1
    done["status"] = {
        "observedGeneration": 1,
        "replicas": replicas,
        "readyReplicas": replicas - len(not_ready),
        "updatedReplicas": replicas,
        "currentRevision": revision,
        "updateRevision": revision,
    }
    template = done["spec"]["template"]
    pods = [
        {
            "kind": "Pod",
            "metadata": {
                "name": f"mo-log-{i}",
                "namespace": NS,
                "uid": f"uid-log-{i}",
                "labels": {**template["metadata"]["labels"], "controller-revision-hash": revision},
                "creationTimestamp": format_time(NOW - 100),
            },
            "spec": copy.deepcopy(template["spec"]),
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "False" if i in not_ready else "True",
                        "lastTransitionTime": format_time(NOW - 50),
                    }
                ]
            },
        }
        for i in range(replicas)
    ]
    return [done, *pods]


def _reason(ctx: Any, ctype: str = "Ready") -> tuple[str, str, str]:
    found = condition(ctx, ctype)
    assert found is not None
    return found["status"], found["reason"], found["message"]


async def test_a_new_logset_records_its_bootstrap_decision_before_anything_else() -> None:
    calls, _ = await one_round(a_logset(recorded=False))
    (verb, kind, name, patch), *rest = calls
    assert (verb, kind, name) == ("patch", "LogSet", "mo")
    meta = patch["metadata"]
    assert labels.LOGSET_BOOTSTRAP in meta["annotations"]
    assert meta["resourceVersion"] == "1", "conditional: a decision is never recorded twice"
    assert [(c[0], c[1]) for c in rest] == [("apply", kind) for kind, _ in WRITTEN], (
        "the same plan goes on once the decision is recorded, without waiting for the update"
    )
    recorded, _ = await one_round(a_logset(recorded=True))
    assert [c[3] for c in rest] == [c[3] for c in recorded], "the objects use the decision recorded"


async def test_a_logset_writes_its_configs_services_and_statefulset_then_nothing_more() -> None:
    obj = a_logset()
    calls, ctx = await one_round(obj)
    assert [(c[0], c[1]) for c in calls] == [("apply", kind) for kind, _ in WRITTEN]
    assert all(c[2].startswith(prefix) for c, (_, prefix) in zip(calls, WRITTEN, strict=True))
    sts = calls[-1][3]
    mounted = {v.get("configMap", {}).get("name") for v in sts["spec"]["template"]["spec"]["volumes"]}
    assert {calls[1][2], "mo-log-bootstrap", "mo-log-gossip"} <= mounted
    assert _reason(ctx) == ("False", "StoresNotReady", "0/3 log stores ready")
    assert ctx.status["discovery"] == {"address": names.discovery_host("mo", NS), "port": 32001}, (
        "published once the discovery Service and the StatefulSet exist, as upstream's"
    )

    again, _ = await one_round(obj, *applied(calls))
    assert again == [], "a round over what the last one wrote writes nothing"


async def test_a_new_logset_reports_every_field_and_condition_at_once() -> None:
    _, first = await one_round(a_logset(recorded=False))
    calls, _ = await one_round(a_logset())
    cached = [*running(applied(calls)[-1]), *applied(calls)[:-1]]
    _, ready = await one_round(a_logset(), *cached, hakeeper=FakeHAKeeper(HAKeeperPhase.RUNNING))
    conditions = {c["type"] for c in first.status["conditions"]}
    assert set(first.status) | {"hakeeperState"} == set(ready.status)
    assert conditions | {"Failover"} == {c["type"] for c in ready.status["conditions"]}
    assert _reason(first, "UpToDate")[:2] == ("False", "Applying"), "its first round writes the workload"
    assert _reason(first)[:2] == ("False", "StoresNotReady")
    assert _reason(first, "HAKeeper")[:2] == ("False", "WaitingForLogStores")
    cached = [*running(applied(calls)[-1], not_ready=frozenset({2})), *applied(calls)[:-1]]
    hakeeper = FakeHAKeeper(HAKeeperPhase.BOOTSTRAPPING)
    _, some = await one_round(a_logset(), *cached, hakeeper=hakeeper)
    assert hakeeper.asked == [], "no HAKeeper before every initial member runs: nothing to ask"
    assert _reason(some, "HAKeeper")[:2] == ("False", "WaitingForLogStores")


async def test_a_logset_on_s3_claims_its_path_before_it_runs_anything() -> None:
    obj = a_logset(sharedStorage={"s3": {"path": "bucket/mo"}})
    calls, _ = await one_round(obj)
    assert [(c[0], c[1]) for c in calls] == [("create", "BucketClaim")]


async def test_ready_follows_the_pods_and_hakeeper_is_reported_not_waited_on() -> None:
    first, _ = await one_round(a_logset())
    hakeeper = FakeHAKeeper(HAKeeperPhase.RUNNING)
    calls, ctx = await one_round(
        a_logset(), *running(applied(first)[-1]), *applied(first)[:-1], hakeeper=hakeeper
    )
    assert calls == []
    assert hakeeper.asked == [names.discovery_address("mo", NS)]
    assert _reason(ctx) == ("True", "AllStoresReady", "3 log stores ready")
    assert _reason(ctx, "HAKeeper") == ("True", "Running", "HAKeeper is running; 0/0 log stores up")
    assert ctx.status["hakeeperState"] == "Running"
    assert _reason(ctx, "UpToDate")[:2] == ("True", "RolloutComplete")
    assert [s["phase"] for s in ctx.status["availableStores"]] == ["Up"] * 3

    _, booting = await one_round(
        a_logset(),
        *running(applied(first)[-1]),
        *applied(first)[:-1],
        hakeeper=FakeHAKeeper(HAKeeperPhase.BOOTSTRAPPING),
    )
    assert _reason(booting)[:2] == ("True", "AllStoresReady"), "HAKeeper is no gate upstream has"
    assert _reason(booting, "HAKeeper") == ("False", "Bootstrapping", "HAKeeper is Bootstrapping")
    assert booting.requeue_after is not None and booting.requeue_after <= Settings().busy_poll_seconds


async def test_the_three_ways_hakeeper_fails_are_told_apart() -> None:
    """Not yet: wait. Unreachable: wait, and past the patience a Warning naming the address.
    The client at fault: a Warning at once."""
    first, _ = await one_round(a_logset())
    cached = [*running(applied(first)[-1]), *applied(first)[:-1]]
    actor = LogSetActor(make_env(FakeCaches()))
    address = names.discovery_address("mo", NS)

    _, ctx = await one_round(
        a_logset(), *cached, hakeeper=FakeHAKeeper(None, NotYet("no HAKeeper yet")), actor=actor
    )
    assert _reason(ctx, "HAKeeper")[:2] == ("False", "Bootstrapping")
    assert _reason(ctx)[:2] == ("True", "AllStoresReady")

    _, ctx = await one_round(a_logset(), *cached, hakeeper=FakeHAKeeper(None), actor=actor)
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "WaitingForMatrixOne") and address in message
    actor._patience._since[(NS, "mo")] -= Settings().rpc_patience_seconds  # it waited that long
    _, ctx = await one_round(a_logset(), *cached, hakeeper=FakeHAKeeper(None), actor=actor)
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "MatrixOneUnreachable")
    assert address in message and "connection refused" in message

    fault = ClientFault("checksum mismatch")
    _, ctx = await one_round(a_logset(), *cached, hakeeper=FakeHAKeeper(None, fault), actor=actor)
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "MatrixOneClientFault") and "checksum mismatch" in message
    assert _reason(ctx)[:2] == ("True", "AllStoresReady"), "Ready never bets on the operator's client"

    _, ctx = await one_round(a_logset(), *cached, hakeeper=FakeHAKeeper(HAKeeperPhase.RUNNING), actor=actor)
    assert _reason(ctx, "HAKeeper")[:2] == ("True", "Running")
    assert actor._patience._since == {}, "an answer ends the wait"


async def test_a_logset_with_pods_not_ready_counts_them() -> None:
    first, _ = await one_round(a_logset())
    cached = [*running(applied(first)[-1], not_ready=frozenset({2})), *applied(first)[:-1]]
    hakeeper = FakeHAKeeper(HAKeeperPhase.RUNNING)
    _, ctx = await one_round(a_logset(bootstrapped=True), *cached, hakeeper=hakeeper)
    assert _reason(ctx) == ("False", "StoresNotReady", "2/3 log stores ready")
    assert ctx.status["failedStores"] == [], "a store still starting has not failed"
    assert len(ctx.status["availableStores"]) == 2


async def test_a_config_change_keeps_the_old_config_mid_roll_and_collects_it_after() -> None:
    first, _ = await one_round(a_logset())
    old = applied(first)
    changed = a_logset(bootstrapped=True, config="[log]\nlevel = 'debug'\n")
    hakeeper = FakeHAKeeper(HAKeeperPhase.RUNNING)
    calls, ctx = await one_round(changed, *running(old[-1]), *old[:-1], hakeeper=hakeeper)
    [config] = [c[2] for c in calls if c[1] == "ConfigMap"]
    first_config = next(c[2] for c in first if c[1] == "ConfigMap")
    assert config != first_config, "a new hashed ConfigMap"
    assert [c[1] for c in calls] == ["ConfigMap", "StatefulSet"]
    assert not [c for c in calls if c[0] == "delete"], "the old config stays while pods may need it"
    assert _reason(ctx, "UpToDate")[:2] == ("False", "RollingUpdate")

    new = applied(calls)
    rolled = running(new[-1])
    cached_old = [cm for cm in old[:-1] if cm["kind"] == "ConfigMap"]
    assert cached_old[0]["metadata"]["labels"][CONFIG_HASH_LABEL] == "mo-log-config"
    stored = [
        {**cm, "metadata": {**cm["metadata"], "uid": f"uid-{cm['metadata']['name']}"}} for cm in cached_old
    ]
    kept = [o for o in old[:-1] if o["kind"] in ("Service", "PodDisruptionBudget")]
    calls, _ = await one_round(changed, *rolled, *stored, *kept, new[0], hakeeper=hakeeper)
    assert [(c[0], c[1], c[2]) for c in calls] == [("delete", "ConfigMap", first_config)]


async def test_a_logset_scaled_to_zero_is_stopped_not_ready() -> None:
    """Upstream admits replicas 0 (its way to stop a cluster): no store runs, so neither
    does the log service; it used to report Ready=True, "0 log stores ready, HAKeeper running"."""
    first, _ = await one_round(a_logset())
    sts = applied(first)[-1]
    stopped = copy.deepcopy(sts)
    stopped["spec"]["replicas"] = 0
    cached = [*running(stopped), *applied(first)[:-1]]
    _, ctx = await one_round(
        a_logset(bootstrapped=True, replicas=0), *cached, hakeeper=FakeHAKeeper(HAKeeperPhase.RUNNING)
    )
    assert _reason(ctx) == ("False", "Stopped", "replicas is 0: the log service is stopped")
    assert ctx.requeue_after == Settings().poll_seconds, "nothing to poll for at the busy pace"


async def test_a_taken_over_logset_keeps_its_reserved_ordinals_free_of_stores() -> None:
    # the Go operator's failover retired store 0: the live stores are mo-log-1..3
    obj = a_logset()
    obj["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] = "[0]"
    calls, _ = await one_round(obj)
    written = {c[2]: c[3] for c in calls if c[0] == "apply"}
    assert written["mo-log"]["spec"]["ordinals"] == {"start": 1}
    assert written["mo-log"]["spec"]["replicas"] == 3
    gossip = written["mo-log-gossip"]["data"]["gossip.toml"]
    assert all(f"mo-log-{i}.mo-log-headless" in gossip for i in (1, 2, 3)), gossip
    assert "mo-log-0." not in gossip, "no store is sought at a reserved ordinal"

    plain, _ = await one_round(a_logset())
    assert "ordinals" not in next(c[3] for c in plain if c[2] == "mo-log")["spec"]


def _hole_running(calls: list[Any], obj: Obj, *, detached_ready: bool = True) -> list[Obj]:
    """What the cluster holds once a LogSet with reserved ordinal 1 started: the objects
    applied, the StatefulSet's stores 2 and 3 ready, the LogSet's store 0 and its claim."""
    written = applied(calls)
    sts = next(o for o in written if o["kind"] == "StatefulSet")
    done, *pods = running(sts)
    for pod, ordinal in zip(pods, (2, 3), strict=True):
        pod["metadata"]["name"], pod["metadata"]["uid"] = f"mo-log-{ordinal}", f"uid-log-{ordinal}"
    store = copy.deepcopy(next(c[3] for c in calls if c[:2] == ("create", "Pod")))
    store["metadata"]["uid"] = "uid-log-0"
    store["status"] = {"conditions": [{"type": "Ready", "status": "True" if detached_ready else "False"}]}
    claim = {**copy.deepcopy(next(c[3] for c in calls if c[:2] == ("create", "PersistentVolumeClaim")))}
    return [*(o for o in written if o["kind"] != "StatefulSet"), done, *pods, store, claim]


async def test_a_reserved_ordinal_between_live_stores_leaves_the_store_below_it_to_the_logset() -> None:
    # the Go operator's failover retired store 1 of 0, 1, 2: the live stores are 0, 2, 3
    obj = a_logset()
    obj["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] = "[1]"
    calls, _ = await one_round(obj)
    written = {(c[1], c[2]): c[3] for c in calls}
    sts = written["StatefulSet", "mo-log"]["spec"]
    assert (sts["ordinals"], sts["replicas"]) == ({"start": 2}, 2)
    assert sts["updateStrategy"]["rollingUpdate"]["partition"] == 2, "held while store 0 is not ready"
    gossip = written["ConfigMap", "mo-log-gossip"]["data"]["gossip.toml"]
    assert all(f"mo-log-{i}.mo-log-headless" in gossip for i in (0, 2, 3)), gossip
    assert "mo-log-1." not in gossip, "no store is sought at a reserved ordinal"
    made = [(c[0], c[1], c[2]) for c in calls if c[0] == "create"]
    assert made == [("create", "PersistentVolumeClaim", "mo-data-mo-log-0"), ("create", "Pod", "mo-log-0")]
    store = written["Pod", "mo-log-0"]
    assert store["metadata"]["ownerReferences"][0]["kind"] == "LogSet"
    assert store["spec"]["subdomain"] == "mo-log-headless"

    released, _ = await one_round(obj, *_hole_running(calls, obj))
    assert [(c[0], c[2]) for c in released] == [("apply", "mo-log")], "store 0 ready: the roll is free"
    assert released[0][3]["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
    done = running(applied(released)[0])[0]
    cached = [done if o["kind"] == "StatefulSet" else o for o in _hole_running(calls, obj)]
    again, ctx = await one_round(obj, *cached)
    assert again == [], "a converged LogSet with a detached store writes nothing"
    assert _reason(ctx) == ("True", "AllStoresReady", "3 log stores ready")


async def test_a_malformed_record_of_reserved_ordinals_stops_the_logset_with_the_reason() -> None:
    obj = a_logset()
    obj["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] = "{1}"
    with pytest.raises(TerminalError, match="JSON list") as stopped:
        await one_round(obj)
    assert stopped.value.reason == "InvalidReservedOrdinals"


async def test_a_store_below_a_reserved_ordinal_is_taken_before_the_statefulset_is_written() -> None:
    # a takeover: the Go operator's workload orphaned mo-log-0, which our StatefulSet
    # (starting at 2) would adopt and delete
    obj = a_logset()
    obj["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] = "[1]"
    orphan = {
        "kind": "Pod",
        "metadata": {
            "name": "mo-log-0",
            "namespace": NS,
            "uid": "uid-log-0",
            "resourceVersion": "7",
            "labels": labels.sub_resource_labels(Component.LOG, "mo", NS),
        },
        "spec": {},
    }
    calls, _ = await one_round(obj, orphan)
    assert [(c[0], c[1], c[2]) for c in calls] == [("patch", "Pod", "mo-log-0")]
    meta = calls[0][3]["metadata"]
    assert meta["resourceVersion"] == "7", "taken only as it was judged"
    assert [(ref["kind"], ref["controller"]) for ref in meta["ownerReferences"]] == [("LogSet", True)]
