"""Quiet routine (docs/day2-operations.md): planned work — an upgrade, a scale — is
told in Normal Events and in conditions with its progress; a Warning Event is for
what needs a person, so a planned upgrade and a scale bring none from the operator. A
change made on a set the cluster owns gets an admission warning, and is set back with
a Normal Event, both naming the cluster's field to change instead."""

from __future__ import annotations

from typing import Any

from lightkube.resources.core_v1 import Event

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually

EVENTS = Resource.of(Event)
Obj = dict[str, Any]


async def operator_events(world: World) -> list[Obj]:
    events = (await world.client.list(EVENTS, world.namespace)).items
    return [e for e in events if (e.get("source") or {}).get("component", "").startswith("mo-operator")]


def shown(events: list[Obj]) -> list[str]:
    return [
        f"{e.get('type')} {e.get('reason')} {e['involvedObject'].get('kind')}/{e['involvedObject'].get('name')}: "
        f"{e.get('message')}"
        for e in events
    ]


async def test_an_upgrade_and_a_scale_bring_no_warning_event(world: World, operator: OperatorRunner) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    settled = {e["metadata"]["uid"] for e in await operator_events(world)}
    if world.cluster.mo is not None:
        # HAKeeper expires a store faster than its pod restarts, as on a real cluster
        # where a store takes seconds to come back: a rolled store shows down
        world.cluster.mo.model.settings.store_timeout = 0.3

    await world.kubectl("patch", "mo", "mo", "--type", "merge", "-p", '{"spec":{"version":"2.1.0"}}')
    progress: list[str] = []
    phases: list[str] = []
    upgrading: set[str] = set()

    async def upgraded() -> bool:
        log = await world.get(r.LOGSETS, "mo")
        for c in (log or {}).get("status", {}).get("conditions") or ():
            if c["type"] == "UpToDate" and c["status"] == "False":
                progress.append(str(c.get("message")))
        upgrading.update(_true(log, "Upgrading"))
        cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo") or {}
        upgrading.update(f"cluster {m}" for m in _true(cluster, "Upgrading"))
        status = cluster.get("status") or {}
        phases.append(str(status.get("phase")))
        return (
            status.get("phase") == "Ready"
            and status.get("observedGeneration") == (cluster["metadata"]["generation"])
        )

    await eventually(upgraded, timeout=120, interval=0.1, message="the upgrade completes")
    assert "Upgrading" in phases and set(phases) <= {"Ready", "Upgrading"}, phases
    assert any(m.endswith("/3 updated") for m in progress), progress
    # the sets and the cluster say a planned rollout runs, with how far it got
    assert any(m.endswith("/3 log stores updated") and "cluster" not in m for m in upgrading), upgrading
    assert any(m.startswith("cluster LogSet mo: ") for m in upgrading), upgrading
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    assert (
        await _shown(world, "logset", "mo", "Upgrading")
        == "False UpToDate the log stores run the current spec"
    )
    assert await _shown(world, "mo", "mo", "Upgrading") == "False UpToDate every set runs the current spec"

    patch = '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":3}]'
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", patch)
    scaling: set[str] = set()

    async def scaled() -> bool:
        cnset = await world.get(r.CNSETS, "mo-tp")
        scaling.update(_true(cnset, "Scaling"))
        return await _cn_replicas(world, 3)

    await eventually(scaled, timeout=60, interval=0.1, message="the CN group scales to 3")
    assert any(m.endswith(" CNs ready (scaling 2 -> 3)") for m in scaling), scaling
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    await eventually(
        lambda: _shows(
            world, "cnset", "mo-tp", "Scaling", "False AtDesiredReplicas at the 3 replicas the spec asks for"
        ),
        timeout=30,
        message="the scale is told done",
    )
    assert await _shown(world, "mo", "mo", "Scaling") == (
        "False AtDesiredReplicas every set has the replicas its spec asks for"
    )

    # a change on the set itself: the cluster sets it back and says where to change it
    scaled = await world.kubectl("scale", "cnset", "mo-tp", "--replicas=4")
    assert (
        "Warning: CNSet mo-tp belongs to MatrixOneCluster mo, which sets spec.replicas back: "
        "change spec.cnGroups[name=tp].replicas of MatrixOneCluster mo instead"
    ) in scaled.stderr, scaled.stderr
    reverted = await eventually(
        lambda: _event(world, "ChildReverted"), timeout=30, message="the revert is told"
    )
    assert reverted["type"] == "Normal" and reverted["message"] == (
        "CNSet mo-tp: spec.replicas changed on the set itself is set back to what MatrixOneCluster mo "
        "says: change spec.cnGroups[name=tp].replicas of the MatrixOneCluster instead"
    ), reverted
    await eventually(lambda: _cn_spec_replicas(world, 3), timeout=30, message="the CNSet is set back to 3")
    await eventually(lambda: _cn_pods(world, 3), timeout=60, message="the CN started meanwhile goes")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)

    events = [e for e in await operator_events(world) if e["metadata"]["uid"] not in settled]
    warnings = [e for e in events if e.get("type") == "Warning"]
    assert not warnings, "\n".join(
        shown(sorted(events, key=lambda e: str(e.get("lastTimestamp") or e.get("eventTime"))))
    )
    assert {"RolloutComplete", "AllCNsReady"} <= {e.get("reason") for e in events}, shown(events)


def _true(obj: Obj | None, ctype: str) -> list[str]:
    """The message of condition ``ctype`` of ``obj`` while it is True."""
    conditions = ((obj or {}).get("status") or {}).get("conditions") or ()
    return [str(c.get("message")) for c in conditions if c["type"] == ctype and c["status"] == "True"]


async def _shown(world: World, kind: str, name: str, ctype: str) -> str:
    """Condition ``ctype`` as ``kubectl get`` shows it: status, reason and message."""
    path = f'{{.status.conditions[?(@.type=="{ctype}")]}}'
    fields = ["status", "reason", "message"]
    shown = await world.kubectl(
        "get", kind, name, "-o", "jsonpath=" + " ".join(path.replace("}", f".{f}}}") for f in fields)
    )
    return shown.stdout.strip()


async def _shows(world: World, kind: str, name: str, ctype: str, expected: str) -> bool:
    return await _shown(world, kind, name, ctype) == expected


async def _event(world: World, reason: str) -> Obj | None:
    return next((e for e in await operator_events(world) if e.get("reason") == reason), None)


async def _cn_spec_replicas(world: World, count: int) -> bool:
    cnset = await world.get(r.CNSETS, "mo-tp")
    return ((cnset or {}).get("spec") or {}).get("replicas") == count


async def _cn_pods(world: World, count: int) -> bool:
    return len(await world.pods(**{labels.INSTANCE: "mo-tp"})) == count


async def _cn_replicas(world: World, count: int) -> bool:
    cnset = await world.get(r.CNSETS, "mo-tp")
    return ((cnset or {}).get("status") or {}).get("readyReplicas") == count
