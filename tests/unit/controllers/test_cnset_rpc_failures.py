"""A CNSet when its calls to MatrixOne fail, the three ways told apart: MatrixOne not
answering is waited for (a Warning only past the patience), the operator's own client
at fault is reported at once and the CNs' readiness then follows their pods, a drain
goes on to its timeout, and no failed call stops the rest of a round."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mo_operator.controllers.framework.env import Settings
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, ClientFault, HAKeeperState, Unreachable, WorkState

from .cnset_fakes import LockingAdmin, cnset, round_of, running, settled, uuid_of
from .controller_fakes import NOW, condition

Obj = dict[str, Any]


class Failing(LockingAdmin):
    """HAKeeper (and every other call) failing with ``error`` while it is set."""

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.error: AdminError | None = None

    async def hakeeper_state(self) -> HAKeeperState:
        if self.error is not None:
            raise self.error
        return await super().hakeeper_state()

    async def set_cn_work_state(self, uuid: str, state: WorkState, store_labels: Any = None) -> None:
        if self.error is not None:
            raise self.error
        await super().set_cn_work_state(uuid, state, store_labels)

    async def cn_load(self, uuid: str) -> Any:
        if self.error is not None:
            raise self.error
        return await super().cn_load(uuid)


async def _scene(replicas: int = 2) -> Any:
    scene = await settled(replicas)
    failing = Failing(*scene.admin.stores.values(), sessions=scene.admin.sessions)
    scene.admin = failing
    return scene


def _reason(ctx: Any, ctype: str) -> tuple[str, str, str]:
    found = condition(ctx, ctype)
    assert found is not None, f"no {ctype} condition"
    return found["status"], found["reason"], found["message"]


def _gates(calls: list[Any]) -> dict[str, tuple[str, str]]:
    found = {}
    for verb, kind, name, body in calls:
        if (verb, kind) == ("patch", "Pod") and "status" in body:
            gate = body["status"]["conditions"][0]
            found[name] = (gate["status"], gate["reason"])
    return found


async def test_an_unanswered_hakeeper_is_waited_for_then_reported_with_the_address() -> None:
    scene = await _scene()
    scene.admin.error = Unreachable("cannot connect to mo-log-discovery.ns.svc:32001: Connection refused")
    actor = scene.actor()
    calls, ctx = await round_of(actor, scene.obj)
    assert calls == [], "the CNs keep their gates: nothing says they stopped working"
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "WaitingForMatrixOne") and "Connection refused" in message
    assert _reason(ctx, "Ready")[:2] == ("False", "HAKeeperUnavailable")

    late = replace(actor.env, clock=lambda: NOW + Settings().rpc_patience_seconds)
    actor.env = late
    _, ctx = await round_of(actor, scene.obj)
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "MatrixOneUnreachable")
    assert "HAKeeper at mo-log-discovery.ns.svc:32001" in message

    scene.admin.error = None
    _, ctx = await round_of(actor, {**scene.obj, "status": ctx.status})
    assert _reason(ctx, "HAKeeper")[:2] == ("True", "Answering")
    assert _reason(ctx, "Ready")[:2] == ("True", "AllCNsReady")


async def test_the_client_at_fault_is_reported_at_once_and_readiness_follows_the_pods() -> None:
    scene = await _scene()
    pods = [running(p) for p in scene.pods]
    pods[0]["status"]["conditions"].append({"type": "ContainersReady", "status": "True"})
    # a new CN whose gate HAKeeper never let the operator set: its containers are ready
    fresh = running(pods[1])
    fresh["status"]["conditions"] = [
        {"type": "Ready", "status": "False"},
        {"type": "ContainersReady", "status": "True"},
    ]
    scene.admin.error = ClientFault("checksum mismatch")
    calls, ctx = await round_of(scene.actor(pods[0], fresh), scene.obj)
    status, reason, message = _reason(ctx, "HAKeeper")
    assert (status, reason) == ("False", "MatrixOneClientFault") and "checksum mismatch" in message
    assert _gates(calls) == {"tp-cn-0": ("True", "PodReady"), "tp-cn-1": ("True", "PodReady")}, (
        "the operator's fault keeps no CN out; the gates say what they follow"
    )
    assert _reason(ctx, "Ready")[0] == "False", "tp-cn-1 is not Ready until its gate is written"
    assert "HAKeeperUnavailable" not in _reason(ctx, "Ready")[1]


async def test_scale_in_while_hakeeper_does_not_answer_drains_and_ends_by_the_timeout() -> None:
    scene = await _scene(3)
    scene.admin.error = Unreachable("no answer within 10s")
    calls, ctx = await round_of(scene.actor(), cnset(2))
    marked = [
        c[2]
        for c in calls
        if c[0] == "patch"
        and labels.STORE_DRAINING_START in ((c[3].get("metadata") or {}).get("annotations") or {})
    ]
    assert len(marked) == 1, "drained, not deleted at once: HAKeeper did not say it has nothing"
    assert not [c for c in calls if c[0] == "delete"]
    gates = _gates(calls)
    assert gates[marked[0]] == ("False", "Draining"), "the failed Draining call did not stop the round"

    pods = [running(p, ready=p["metadata"]["name"] != marked[0]) for p in scene.pods]
    victim = next(p for p in pods if p["metadata"]["name"] == marked[0])
    victim["metadata"]["annotations"][labels.STORE_DRAINING_START] = "2020-01-01T00:00:00Z"
    scaling = {"storeDrainEnabled": True, "minDelaySeconds": 0, "storeDrainTimeout": "1000000h"}
    _, ctx = await round_of(scene.actor(*pods), cnset(2, scalingConfig=scaling))
    draining = condition(ctx, "Draining")
    assert draining is not None and draining["status"] == "True"
    expected = f"{marked[0]} waits, MatrixOne does not say what it still holds: no answer within 10s"
    assert expected in draining["message"]


async def test_a_draining_cn_says_what_it_waits_for() -> None:
    scene = await _scene(3)
    scene.admin.sessions[uuid_of(scene.pods[2])] = 2
    pods = list(scene.pods)
    started = pods[2]["metadata"]["annotations"] | {labels.STORE_DRAINING_START: "2020-01-01T00:00:00Z"}
    pods[2] = {**pods[2], "metadata": {**pods[2]["metadata"], "annotations": started}}
    actor = scene.actor(*pods, now=NOW)
    actor.env = replace(actor.env, clock=lambda: NOW)
    _, ctx = await round_of(
        actor,
        cnset(
            2,
            scalingConfig={"storeDrainEnabled": True, "minDelaySeconds": 0, "storeDrainTimeout": "1000000h"},
        ),
    )
    draining = condition(ctx, "Draining")
    assert (
        draining is not None
        and "tp-cn-2 waits for 2 sessions, 0 pipelines, 0 replicas to leave" in (draining["message"])
    )
