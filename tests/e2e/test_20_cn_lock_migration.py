"""Day-2 on CNs as users of the Go operator know it: a CN leaving a MatrixOne 1.2+
cluster first has its lock tables moved by the TN lock service, and is removed
only once its remaining transactions have ended; a cordoned CN takes no new
session and is put back to work when the cordon is lifted."""

from __future__ import annotations

import json
from typing import Any

from mo_devkit.simulated.lockservice import BindStatus
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .harness import OperatorRunner, World, eventually, is_ready

Obj = dict[str, Any]


def _tp(replicas: int) -> list[Obj]:
    return [
        {
            "name": "tp",
            "replicas": replicas,
            "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 0},
        }
    ]


async def _cn_pods(world: World) -> dict[str, Obj]:
    return {p["metadata"]["name"]: p for p in await world.pods(**{labels.INSTANCE: "mo-tp"})}


def _uuid(pod: Obj) -> str:
    return str(pod["metadata"]["labels"][labels.CN_UUID])


async def _events(world: World, name: str) -> str:
    found = await world.kubectl(
        "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "yaml"
    )
    return found.stdout


async def test_scale_in_waits_for_the_lock_service_before_removing_a_cn(
    world: World, operator: OperatorRunner
) -> None:
    mo = world.cluster.mo
    assert mo is not None
    await world.apply(world.cluster_manifest("mo", version="1.2.3", cnGroups=_tp(3)))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)
    pods = await _cn_pods(world)
    locks = mo.locks
    txn_seconds, locks.txn_seconds = locks.txn_seconds, 4.0
    try:
        for pod in pods.values():
            mo.set_transactions(_uuid(pod), 8)
        patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": 2}]
        await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))

        async def marked() -> str | None:
            for name, pod in (await _cn_pods(world)).items():
                if labels.LOCK_RESTART in (pod["metadata"].get("annotations") or {}):
                    return name
            return None

        victim = await eventually(marked, timeout=30, message="a CN is marked restarting in the lock service")
        uuid = _uuid(pods[victim])
        binding = mo.lock_binding(uuid)
        assert binding is not None and binding.status is BindStatus.SERVICE_LOCK_WAITING
        assert binding.transactions > 0, "marked while transactions still hold locks"

        # While its transactions end the CN stays; it goes only once the TN lets it.
        seen: list[tuple[bool, int]] = []

        async def gone() -> bool:
            pod = await world.get(r.PODS, victim)
            found = mo.lock_binding(uuid)
            if pod is not None and found is not None:
                seen.append((bool(pod["metadata"].get("deletionTimestamp")), found.transactions))
            return pod is None

        await eventually(gone, timeout=40, message=f"CN {victim} is removed once its locks moved")
        assert any(txns > 0 for _, txns in seen), "the wait for transactions was observed"
        assert all(txns == 0 for deleting, txns in seen if deleting), "never deleted with transactions left"
    finally:
        locks.txn_seconds = txn_seconds
    calls = [c.method for c in mo.calls if c.uuid == uuid]
    assert calls.index("SetRestartService") < calls.index("DELETE_CN_STORE")
    assert max(i for i, m in enumerate(calls) if m == "CanRestartService") < calls.index("DELETE_CN_STORE")
    events = await _events(world, "mo-tp")
    assert "reason: MigratingLockTables" in events and "reason: LockTablesMigrated" in events
    assert sorted(await _cn_pods(world)) == sorted(set(pods) - {victim})
    await world.wait_settled(r.CNSETS, "mo-tp")


async def test_a_cordoned_cn_takes_no_session_until_the_cordon_is_lifted(
    world: World, operator: OperatorRunner
) -> None:
    mo = world.cluster.mo
    assert mo is not None
    await world.apply(world.cluster_manifest("mo", cnGroups=_tp(2)))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    pods = await _cn_pods(world)
    name = sorted(pods)[0]
    uuid = _uuid(pods[name])

    def work_state() -> WorkState | None:
        keeper = mo.hakeeper(world.namespace, "mo")
        record = keeper.stores[Component.CN].get(uuid) if keeper is not None else None
        return record.work_state if record is not None else None

    await world.kubectl("annotate", "pod", name, f"{labels.STORE_CORDON}=true")
    await eventually(
        lambda: work_state() is WorkState.DRAINING, message="HAKeeper holds the cordoned CN Draining"
    )

    async def fenced() -> bool:
        pod = await world.get(r.PODS, name)
        cnset = await world.get(r.CNSETS, "mo-tp")
        stores = {s["podName"]: s["state"] for s in ((cnset or {}).get("status") or {}).get("stores") or ()}
        return not is_ready(pod) and stores.get(name) == "Draining"

    await eventually(fenced, message="the cordoned CN's pod is not ready and its store shows Draining")
    assert mo.open_sessions(world.namespace, "mo", 6) == 6
    assert mo.sessions(uuid) == 0, "no new session reaches a cordoned CN"
    assert sorted(await _cn_pods(world)) == sorted(pods), "a cordoned CN stays"

    await world.kubectl("annotate", "pod", name, f"{labels.STORE_CORDON}-")
    await eventually(lambda: work_state() is WorkState.WORKING, message="the CN is back to work")
    await eventually(lambda: _ready(world, name), message="its pod is ready again")
    await world.wait_settled(r.CNSETS, "mo-tp")


async def _ready(world: World, name: str) -> bool:
    return is_ready(await world.get(r.PODS, name))
