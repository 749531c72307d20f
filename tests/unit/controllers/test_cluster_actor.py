"""The MatrixOneCluster's roll decisions (controllers/cluster/actor.py): when a
child has *settled*, and how ``observe`` releases a pod-changing change one
component at a time (log → TN → CN → proxy) while changes that roll nothing
apply at once; a settled cluster makes no write at all."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Mapping
from typing import Any, cast

from mo_operator.api.base import parse
from mo_operator.api.cluster import MatrixOneCluster, MatrixOneClusterSpec
from mo_operator.controllers.cluster.actor import MatrixOneClusterActor, settled
from mo_operator.controllers.cluster.children import Child, desired_children
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.desired import stamped, up_to_date
from mo_operator.controllers.steps.status import UP_TO_DATE
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import labels

from .controller_fakes import FakeCaches, RecordingClient, condition, context, make_env, run

Obj = dict[str, Any]
API = "core.matrixorigin.io/v1alpha1"
AT = {"lastTransitionTime": "2023-11-14T22:13:20Z"}
"""As every condition the API server stores has (metav1.Condition requires it)."""


def typed(spec: dict[str, Any]) -> MatrixOneClusterSpec:
    """A cluster spec (as admitted) in the typed form the controller reads."""
    return parse(MatrixOneClusterSpec, spec)


def cluster(version: str = "1.2.3", cn_replicas: int = 2) -> Obj:
    return {
        "apiVersion": API,
        "kind": "MatrixOneCluster",
        "metadata": {
            "name": "mo",
            "namespace": "ns",
            "uid": "uid-mo",
            "generation": 3,
            "resourceVersion": "5",
        },
        "spec": {
            "version": version,
            "logService": {
                "replicas": 3,
                "sharedStorage": {"fileSystem": {"path": "/data"}},
                "volume": {"size": "10Gi"},
            },
            "tn": {"replicas": 1},
            "cnGroups": [{"name": "tp", "replicas": cn_replicas}],
            "proxy": {"replicas": 1},
        },
    }


def credential() -> Obj:
    return {"kind": "Secret", "metadata": {"name": "mo-credential", "namespace": "ns"}}


def stored(
    desired: Obj, *, ready: bool = True, current: bool = True, observed: bool = True, **status: Any
) -> Obj:
    """``desired`` as stored once applied and reconciled by its own controller."""
    out = copy.deepcopy(stamped(desired))
    out["metadata"].update(
        uid=f"uid-{out['kind']}-{out['metadata']['name']}", generation=7, resourceVersion="9"
    )
    out["status"] = {
        "observedGeneration": 7 if observed else 6,
        "conditions": [
            {"type": "Ready", "status": "True" if ready else "False", "reason": "R", "message": "m", **AT},
            {
                "type": UP_TO_DATE,
                "status": "True" if current else "False",
                "reason": "U",
                "message": "u",
                **AT,
            },
        ],
        **status,
    }
    return out


def kids(obj: Obj) -> list[Child]:
    return desired_children(obj, admit(MatrixOneCluster, obj).spec, {})


def settled_world(obj: Obj) -> list[Obj]:
    return [stored(c.obj) for c in kids(obj)]


# ------------------------------------------------------------------ settled
def _settled(cached: Obj | None, want: Obj) -> bool:
    return settled(cached, up_to_date(cached, want))


def test_a_child_settles_once_it_took_the_spec_rolled_and_is_ready() -> None:
    child = kids(cluster())[0].obj
    want = stamped(child)
    assert _settled(stored(child), want)
    assert not _settled(None, want)
    assert not _settled(stored(child, ready=False), want)
    assert not _settled(stored(child, current=False), want)  # still rolling
    assert not _settled(stored(child, observed=False), want)  # its controller has not seen it yet
    no_conditions = stored(child)
    no_conditions["status"]["conditions"] = []
    assert not _settled(no_conditions, want)
    drifted = stored(child)
    drifted["spec"]["replicas"] = 1
    assert not _settled(drifted, want)
    upgraded = kids(cluster(version="1.2.4"))[0].obj
    assert not _settled(stored(child), stamped(upgraded))  # took an older spec


# ------------------------------------------------------------------ observe
async def observe(obj: Obj, world: list[Obj]) -> tuple[list[tuple[str, str, str, Any]], Any]:
    env = make_env(FakeCaches(obj, credential(), *world))
    ctx = context(obj)
    plan = await MatrixOneClusterActor(env).observe(ctx)
    return (await run(plan) if plan else []), ctx


async def test_a_settled_cluster_makes_no_write() -> None:
    obj = cluster()
    calls, ctx = await observe(obj, settled_world(obj))
    assert calls == []
    ready, current = condition(ctx, "Ready"), condition(ctx, UP_TO_DATE)
    assert ready is not None and (ready["status"], ready["reason"]) == ("True", "AllSetsReady")
    assert current is not None and (current["status"], current["reason"]) == ("True", "RolloutComplete")
    assert ctx.status["phase"] == "Ready"
    assert ctx.status["cnGroups"]["readyGroups"] == 1


async def test_a_new_cluster_creates_its_credential_and_every_child() -> None:
    obj = cluster()
    env = make_env(FakeCaches(obj))
    ctx = context(obj)
    plan = await MatrixOneClusterActor(env).observe(ctx)
    assert plan is not None
    calls = await run(plan)
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [
        ("create", "Secret", "mo-credential"),
        ("apply", "LogSet", "mo"),
        ("apply", "DNSet", "mo"),
        ("apply", "CNSet", "mo-tp"),
        ("apply", "ProxySet", "mo"),
    ]
    ready = condition(ctx, "Ready")
    assert ready is not None and ready["reason"] == "LogServiceNotReady"


class SlowApplies(RecordingClient):
    """Applies that take a few turns of the loop, saying when each starts and ends."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    async def apply(self, obj: Mapping[str, Any], *, resource: Resource, force: bool = False) -> Obj:
        self.order.append(f"start {resource.kind}")
        for _ in range(3):
            await asyncio.sleep(0)
        self.order.append(f"end {resource.kind}")
        return await super().apply(obj, resource=resource, force=force)


async def test_the_log_service_is_made_first_and_the_other_sets_together_after_it() -> None:
    obj = cluster()
    env = make_env(FakeCaches(obj))
    client = SlowApplies()
    env.client = cast(Any, client)
    plan = await MatrixOneClusterActor(env).observe(context(obj))
    assert plan is not None
    await run(plan)
    assert client.order[:2] == ["start LogSet", "end LogSet"], "its sets find it when they first look"
    assert client.order[2:5] == ["start DNSet", "start CNSet", "start ProxySet"], "then the rest at once"


async def test_children_are_made_with_their_own_controllers_finalizer() -> None:
    obj = cluster()
    calls, _ = await observe(obj, [])
    finalizers = {
        kind: body["metadata"].get("finalizers") for verb, kind, _, body in calls if verb == "apply"
    }
    assert finalizers == {
        "LogSet": ["matrixorigin.io/logset"],
        "DNSet": ["matrixorigin.io/dnset"],
        "CNSet": ["matrixorigin.io/cnset"],
        "ProxySet": ["matrixorigin.io/proxyset"],
    }


async def test_a_childs_finalizer_is_applied_while_it_carries_it_and_never_added_back() -> None:
    obj = cluster(version="1.2.4")
    world = settled_world(cluster())
    world[0]["metadata"]["finalizers"] = ["matrixorigin.io/logset", "someone/else"]
    calls, _ = await observe(obj, world)
    [(_, _, _, log)] = [c for c in calls if c[1] == "LogSet"]
    assert log["metadata"]["finalizers"] == ["matrixorigin.io/logset"], "kept: dropping it would remove it"
    world[0]["metadata"]["finalizers"] = ["someone/else"]
    calls, _ = await observe(obj, world)
    [(_, _, _, log)] = [c for c in calls if c[1] == "LogSet"]
    assert "finalizers" not in log["metadata"], "its controller removed it: an apply must not add it back"


async def test_a_settled_child_whose_controller_added_its_finalizer_needs_no_write() -> None:
    obj = cluster()
    world = settled_world(obj)
    for child in world:
        child["metadata"]["finalizers"] = [labels.finalizer(child["kind"].lower())]
    calls, _ = await observe(obj, world)
    assert calls == []


async def test_an_upgrade_reaches_the_log_service_first_and_holds_the_rest() -> None:
    world = settled_world(cluster())
    calls, ctx = await observe(cluster(version="1.2.4"), world)
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [("apply", "LogSet", "mo")]
    assert calls[0][3]["spec"]["image"] == "matrixorigin/matrixone:1.2.4"
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and current["status"] == "False" and current["reason"] == "Rolling"
    assert "waiting: DNSet mo, CNSet mo-tp, ProxySet mo" in current["message"]


async def test_the_next_component_rolls_once_the_one_before_settled() -> None:
    old, new = cluster(), cluster(version="1.2.4")
    world = settled_world(old)
    world[0] = stored(kids(new)[0].obj)  # the log service took 1.2.4, rolled, and is ready
    calls, _ = await observe(new, world)
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [("apply", "DNSet", "mo")]
    # while the TN rolls, CNs and the proxy wait
    world[1] = stored(kids(new)[1].obj, current=False)
    calls, ctx = await observe(new, world)
    assert calls == []
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and "DNSet mo" in current["message"]


async def test_a_halted_roll_is_reported_where_it_stopped() -> None:
    new = cluster(version="1.2.4")
    world = settled_world(cluster())
    world[0] = stored(kids(new)[0].obj, current=False)
    world[0]["status"]["conditions"][1].update(
        reason="RolloutStalled", message="pod mo-log-2 is not ready after 300s: x"
    )
    calls, ctx = await observe(new, world)
    assert calls == []
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and current["reason"] == "RolloutHalted"
    assert current["message"].startswith("LogSet mo: RolloutStalled: pod mo-log-2 is not ready after 300s")


async def test_changes_that_roll_nothing_apply_at_once_even_mid_roll() -> None:
    world = settled_world(cluster())
    calls, _ = await observe(cluster(version="1.2.4", cn_replicas=5), world)
    applied = {(kind, name): body for verb, kind, name, body in calls if verb == "apply"}
    assert set(applied) == {("LogSet", "mo"), ("CNSet", "mo-tp")}
    cn = applied[("CNSet", "mo-tp")]
    assert cn["spec"]["replicas"] == 5
    assert cn["spec"]["image"] == "matrixorigin/matrixone:1.2.3"  # the upgrade waits its turn


async def test_cn_groups_no_longer_named_are_deleted_if_this_cluster_controls_them() -> None:
    obj = cluster()
    gone = stored(kids(cluster())[2].obj)
    gone["metadata"].update(name="mo-old", uid="uid-old")
    foreign = copy.deepcopy(gone)
    foreign["metadata"].update(name="mo-foreign", uid="uid-foreign")
    foreign["metadata"]["ownerReferences"] = [
        {**foreign["metadata"]["ownerReferences"][0], "uid": "uid-other"}
    ]
    assert foreign["metadata"]["labels"] == {labels.CLUSTER: "mo"}
    calls, ctx = await observe(obj, [*settled_world(obj), gone, foreign])
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [("delete", "CNSet", "mo-old")]
    assert calls[0][3]["uid"] == "uid-old"
    assert calls[0][3]["propagation_policy"] == "Foreground"  # gone only once its pods are
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and (current["status"], current["reason"]) == ("False", "RemovingSets")
    assert "CNSet mo-old" in current["message"]


async def test_a_removed_group_being_deleted_keeps_the_cluster_not_up_to_date_until_it_is_gone() -> None:
    obj = cluster()
    going = stored(kids(cluster())[2].obj)
    going["metadata"].update(name="mo-old", uid="uid-old", deletionTimestamp="2026-01-01T00:00:00Z")
    calls, ctx = await observe(obj, [*settled_world(obj), going])
    assert calls == []  # already being deleted: nothing to write
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and (current["status"], current["reason"]) == ("False", "RemovingSets")
    _, ctx = await observe(obj, settled_world(obj))
    current = condition(ctx, UP_TO_DATE)
    assert current is not None and current["status"] == "True"


async def test_a_proxy_or_console_the_spec_drops_is_deleted() -> None:
    with_all = cluster()
    with_all["spec"]["webui"] = {"replicas": 1}
    world = settled_world(with_all)
    assert {c["kind"] for c in world} >= {"ProxySet", "WebUI"}
    without = cluster()
    del without["spec"]["proxy"]
    calls, _ = await observe(without, world)
    deleted = sorted((kind, name) for verb, kind, name, _ in calls if verb == "delete")
    assert deleted == [("ProxySet", "mo"), ("WebUI", "mo")]
