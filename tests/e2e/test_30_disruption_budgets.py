"""PodDisruptionBudgets (docs/day2.md): every set of a cluster keeps one, owned by the
set, so that the Eviction API (``kubectl drain``, node-pool upgrades, cluster
autoscalers) never takes down more than MatrixOne can lose: the log service keeps a
majority of its stores, TN, CN and proxy sets lose one pod at a time."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually
from .test_31_quiet_routine import operator_events, shown

Obj = dict[str, Any]

REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."


async def evict(world: World, pod: str) -> tuple[bool, str]:
    """POST the pod's Eviction as a user can with kubectl; (evicted, what kubectl printed)."""
    body = {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": pod, "namespace": world.namespace},
    }
    path = f"/api/v1/namespaces/{world.namespace}/pods/{pod}/eviction"
    done = await world.kubectl("create", "--raw", path, "-f", "-", input=json.dumps(body), check=False)
    return done.returncode == 0, (done.stderr or done.stdout).strip()


async def budget(world: World, name: str) -> Obj:
    found = await world.get(r.PDBS, name)
    assert found is not None, f"no PodDisruptionBudget {name}"
    return found


async def counted(world: World, name: str, healthy: int, allowed: int) -> Obj | None:
    """The budget once the disruption controller counts ``healthy`` pods, ``allowed`` to go."""
    pdb = await budget(world, name)
    status = pdb.get("status") or {}
    seen = status.get("observedGeneration") == pdb["metadata"]["generation"]
    if seen and (status.get("currentHealthy"), status.get("disruptionsAllowed")) == (healthy, allowed):
        return pdb
    return None


async def drain(world: World, pods: list[str]) -> int:
    """Evict every pod at once, each retrying while a budget refuses it (as ``kubectl
    drain`` does); how many times the budgets refused."""
    refusals = 0

    async def one(pod: str) -> None:
        nonlocal refusals
        while True:
            evicted, said = await evict(world, pod)
            if evicted or "NotFound" in said:
                return
            assert REFUSED in said, said
            refusals += 1
            await asyncio.sleep(0.5)

    async with asyncio.timeout(180), asyncio.TaskGroup() as tg:
        for pod in pods:
            tg.create_task(one(pod))
    return refusals


async def test_evictions_keep_the_log_quorum_and_a_drain_completes(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    owners = {
        "mo-log": ("LogSet", "mo", {"maxUnavailable": 1}),
        "mo-dn": ("DNSet", "mo", {"maxUnavailable": 1}),
        "mo-tp-cn": ("CNSet", "mo-tp", {"maxUnavailable": 1}),
    }
    for name, (kind, owner, bound) in owners.items():
        pdb = await budget(world, name)
        [ref] = pdb["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["name"], ref.get("controller")) == (kind, owner, True), ref
        assert {k: v for k, v in pdb["spec"].items() if k != "selector"} == bound, pdb["spec"]

    log = await eventually(
        lambda: counted(world, "mo-log", 3, 1), 60, message="the log budget counts 3 healthy stores"
    )
    assert (log["status"]["desiredHealthy"], log["status"]["expectedPods"]) == (2, 3), log["status"]
    await eventually(lambda: counted(world, "mo-tp-cn", 2, 1), 90, message="the CN budget counts 2 pods")

    # one log store may go; a second at the same time would leave 1 of 3: no quorum
    evicted, said = await evict(world, "mo-log-0")
    assert evicted, said
    evicted, said = await evict(world, "mo-log-1")
    assert not evicted and REFUSED in said, said
    assert "TooManyRequests" in said, said

    model, ns = world.cluster.mo.model if world.cluster.mo else None, world.namespace
    if model is not None:
        # HAKeeper expires a store faster than its pod is replaced, as on a real cluster
        # where a store takes seconds to come back: a drained store shows down (and not so
        # fast that a live store's heartbeat late under load shows down too)
        model.settings.store_timeout = 1.0
    quiet = {e["metadata"]["uid"] for e in await operator_events(world)}
    lost: list[str] = []

    async def watch_quorum() -> None:
        while True:
            if model is not None and not model.available((ns, "mo")):
                lost.append("HAKeeper lost its quorum")
            ready = [p for p in await world.pods(**{labels.COMPONENT: "LogSet"}) if _ready(p)]
            if len(ready) < 2:
                lost.append(f"{len(ready)}/3 log stores ready")
            await asyncio.sleep(0.1)

    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await world.pods(**{labels.CLUSTER: "mo"})}
    watcher = asyncio.create_task(watch_quorum())
    try:
        refusals = await drain(world, sorted(before))
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    assert refusals > 0, "the budgets held some evictions back"
    assert not lost, lost[:5]
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    after = {p["metadata"]["uid"] for p in await world.pods(**{labels.CLUSTER: "mo"})}
    assert not after & set(before.values()), "every pod of the cluster was evicted and replaced"
    # a drain is planned work: told in Normal Events only
    warnings = [e for e in await operator_events(world) if e["metadata"]["uid"] not in quiet]
    warnings = [e for e in warnings if e.get("type") == "Warning"]
    assert not warnings, "\n".join(shown(warnings))


def _ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )
