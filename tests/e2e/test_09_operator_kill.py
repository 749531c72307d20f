"""Scenario 9: the operator is killed (SIGKILL: no clean-up, no lease
release) at seeded random moments while a user drives a cluster through
creation, scaling, reconfiguration, an upgrade and CN group changes, and
things change while it is down (a pod dies, the spec changes, a child object
is deleted by hand). After the last restart everything converges to the end
state an undisturbed run reaches: nothing lost, nothing duplicated, nothing
stuck Terminating, every finalizer accounted for.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import Mapping
from typing import Any

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from .harness import OperatorRunner, World, eventually

SEED = int(os.environ.get("MO_TEST_CHAOS_SEED", "20261123"))
OPERATOR_ARGS = ("--no-leader-elect",)  # one replica; leader handover is scenario 10
FINALIZERS = {
    "LogSet": "matrixorigin.io/logset",
    "DNSet": "matrixorigin.io/dnset",
    "CNSet": "matrixorigin.io/cnset",
    "ProxySet": "matrixorigin.io/proxyset",
}


STARTUP_KILLS = 0.25
"""The share of kills timed from the operator's start, which on a slow machine land
before its caches have synced; the others come at a random moment of its work."""


class Chaos:
    """Runs the operator as a child process and kills it at random moments: some
    while it starts, most once it serves (its ``/readyz``), so that each of those
    lives reconciles something however long a start takes on a loaded machine."""

    def __init__(self, runner: OperatorRunner, seed: int) -> None:
        self.runner = runner
        self.rng = random.Random(seed)
        self.kills = 0
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _loop(self) -> None:
        while not self._stop.is_set():
            await self.runner.spawn(*OPERATOR_ARGS)
            if self.rng.random() < STARTUP_KILLS:
                life = self.rng.uniform(0.3, 2.5)
            else:
                with contextlib.suppress(TimeoutError):
                    await self.runner.wait_serving()
                life = self.rng.uniform(0.0, 2.0)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), life)
            if self._stop.is_set():
                break
            await self.runner.kill()
            self.kills += 1
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))

    def __enter__(self) -> Chaos:
        self._task = asyncio.create_task(self._loop(), name="chaos")
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:  # the test failed: stop at once (stop() finishes the normal end)
            self._stop.set()

    async def stop(self, min_kills: int = 5) -> None:
        """Stop the chaos (once it killed at least ``min_kills`` times) and its last
        operator: the test starts the one it checks with."""
        while self.kills < min_kills and self._task is not None and not self._task.done():
            await asyncio.sleep(0.1)
        self._stop.set()
        if self._task is not None:
            await self._task
        await self.runner.kill()


async def _patch(world: World, patch: str, kind: str = "json") -> None:
    await world.kubectl("patch", "mo", "mo", "--type", kind, "-p", patch)


async def _settled(world: World, timeout: float = 120) -> None:
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=timeout)


async def assert_clean_end_state(world: World, cn_groups: Mapping[str, int], version: str) -> None:
    """Exactly the objects the spec asks for, nothing more, nothing stuck."""
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    assert not cluster["metadata"].get("finalizers"), "the cluster's deletion waits for nothing"
    for res, kind in (
        (r.LOGSETS, "LogSet"),
        (r.DNSETS, "DNSet"),
        (r.CNSETS, "CNSet"),
        (r.PROXYSETS, "ProxySet"),
    ):
        for obj in await world.list(res):
            assert obj["metadata"].get("finalizers") == [FINALIZERS[kind]], obj["metadata"]
            assert not obj["metadata"].get("deletionTimestamp"), f"{kind} {obj['metadata']['name']} stuck"
    assert sorted(o["metadata"]["name"] for o in await world.list(r.CNSETS)) == sorted(
        f"mo-{g}" for g in cn_groups
    )

    async def none_terminating() -> list[Any] | None:
        # a rollout's last replaced pod may still run out its grace period as the cluster
        # settles; stuck is one that outlives it
        pods = await world.list(r.PODS, **{labels.CLUSTER: "mo"})
        return None if any(p["metadata"].get("deletionTimestamp") for p in pods) else pods

    pods = await eventually(none_terminating, timeout=60, message="no pod stuck Terminating")
    counts: dict[str, int] = {}
    for pod in pods:
        key = f"{pod['metadata']['labels'][labels.INSTANCE]}/{pod['metadata']['labels'][labels.COMPONENT]}"
        counts[key] = counts.get(key, 0) + 1
        assert pod["spec"]["containers"][0]["image"].endswith(f":{version}")
    expected = {"mo/LogSet": 3, "mo/DNSet": 1, "mo/ProxySet": 1} | {
        f"mo-{g}/CNSet": n for g, n in cn_groups.items()
    }
    assert counts == expected
    for pod in pods:
        if pod["metadata"]["labels"][labels.COMPONENT] == "CNSet":
            assert pod["metadata"]["finalizers"] == [labels.CN_DRAINING_FINALIZER]

    # One hashed config per set, the one its pods run; the log service's two mutable ones.
    in_use = {v["configMap"]["name"] for p in pods for v in p["spec"]["volumes"] if v.get("configMap")}
    config_maps = {c["metadata"]["name"] for c in await world.list(r.CONFIGMAPS, **{labels.CLUSTER: "mo"})}
    assert config_maps == in_use, (config_maps - in_use, in_use - config_maps)
    assert [s["metadata"]["name"] for s in await world.list(r.SECRETS, **{labels.CLUSTER: "mo"})] == [
        "mo-credential"
    ]

    # HAKeeper knows exactly the CNs that run: no store was lost or left behind.
    mo = world.cluster.mo
    assert mo is not None
    keeper = mo.hakeeper(world.namespace, "mo")
    assert keeper is not None
    cn_uuids = {
        p["metadata"]["labels"][labels.CN_UUID] for p in pods if labels.CN_UUID in p["metadata"]["labels"]
    }
    assert set(keeper.stores[Component.CN]) == cn_uuids


# Seven waits to settle (120 s each), the end check's and the teardown's: a run on a
# real server takes 20 to 50 s plus 16 s of teardown, and a slow one must fail on
# the wait that names what did not settle, not on the test's own clock.
@pytest.mark.timeout(300)
async def test_killing_the_operator_at_random_loses_and_duplicates_nothing(
    world: World, operator_runner: OperatorRunner
) -> None:
    chaos = Chaos(operator_runner, SEED)
    with chaos:
        tp = {"name": "tp", "replicas": 2, "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 0}}
        await world.apply(world.cluster_manifest("mo", cnGroups=[tp], proxy={"replicas": 1}))
        await _settled(world)
        mo = world.cluster.mo
        assert mo is not None
        mo.open_sessions(world.namespace, "mo", 20)
        await _patch(world, '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":3}]')
        await _settled(world)
        await _patch(world, '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":2}]')
        await _settled(world)
        pessimistic = {**tp, "config": '[cn.txn]\nmode = "pessimistic"\n'}
        await _patch(world, _json({"spec": {"cnGroups": [world.runnable_set(pessimistic)]}}), "merge")
        await _settled(world)
        await _patch(world, '{"spec":{"version":"2.1.0"}}', "merge")
        await _settled(world)
        ap = {"name": "ap", "replicas": 1, "scalingConfig": {"minDelaySeconds": 0}}
        await _patch(
            world, f'[{{"op":"add","path":"/spec/cnGroups/-","value":{_json(world.runnable_set(ap))}}}]'
        )
        await _settled(world)
        await _patch(world, '[{"op":"remove","path":"/spec/cnGroups/1"}]')
        await _settled(world)
    await chaos.stop()
    assert chaos.kills >= 5, f"only {chaos.kills} kills: the test did not disturb much"

    # While the operator is down: a pod dies, the spec changes, a child is deleted by hand.
    await world.kubectl("delete", "pod", "mo-log-1", "--wait=false")
    await world.kubectl("delete", "service", "mo-tp-cn")
    await world.kubectl("delete", "statefulset", "mo-dn", "--wait=false")
    await _patch(world, '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":3}]')
    await operator_runner.spawn(*OPERATOR_ARGS)
    await eventually(
        lambda: world.get(r.SERVICES, "mo-tp-cn"), timeout=60, message="the Service is recreated"
    )
    await assert_clean_end_state(world, {"tp": 3}, "2.1.0")


def _json(value: Any) -> str:
    import json

    return json.dumps(value, separators=(",", ":"))


@pytest.mark.timeout(300)
async def test_killing_the_operator_during_backup_restore_and_deletion(
    world: World, operator_runner: OperatorRunner
) -> None:
    """Scenarios 6 and 7 under the same chaos: exactly one Backup, a restored cluster
    that runs, and deletions that remove exactly what their policies say."""
    from .test_06_delete import _cluster_gone, _log_pvcs, _log_service, _nothing_terminating, _objects
    from .test_07_backup_restore import backup_job

    chaos = Chaos(operator_runner, SEED + 1)
    with chaos:
        small = {"tn": {"replicas": 1}, "cnGroups": [{"name": "tp", "replicas": 1}], "proxy": {"replicas": 1}}
        source = world.cluster_manifest("src", logService=_log_service("src", policy="Delete"), **small)
        await world.apply(source)
        await _wait(world, "src")
        await world.apply(backup_job(world, "nightly", "src", "backups/nightly"))

        async def backed_up() -> str | None:
            job = await world.get(r.BACKUPJOBS, "nightly")
            return (
                ((job or {}).get("status") or {}).get("backup")
                if (job or {}).get("status", {}).get("phase") == "Completed"
                else None
            )

        backup = await eventually(backed_up, timeout=120, message="the backup completes")
        copy = world.cluster_manifest(
            "copy", logService=_log_service("copy", policy="Delete"), restoreFrom=backup, **small
        )
        await world.apply(copy)
        await _wait(world, "copy")
        for name in ("src", "copy"):
            await world.kubectl("delete", "matrixonecluster", name, "--wait=false")
        for name in ("src", "copy"):
            await eventually(
                lambda name=name: _cluster_gone(world, name), timeout=120, message=f"{name} is gone"
            )
    await chaos.stop()
    assert chaos.kills >= 5, f"only {chaos.kills} kills: the test did not disturb much"
    await operator_runner.spawn(*OPERATOR_ARGS)

    mo = world.cluster.mo
    assert mo is not None
    assert len(mo.model.backups.backups) == 1, "one backup, however often the operator died"
    assert [b["metadata"]["name"] for b in (await world.client.list(r.BACKUPS)).items] == [backup]
    await eventually(lambda: _nothing_terminating(world), timeout=60, message="nothing stuck Terminating")
    for name in ("src", "copy"):
        assert await _log_pvcs(world, name) == [], f"{name}'s volumes follow the Delete policy"
        await eventually(
            lambda name=name: not _objects(world).holds_data(f"bucket/{name}"),
            timeout=60,
            message=f"{name}'s data deleted",
        )
    assert await world.list(r.BUCKETCLAIMS) == []


async def _wait(world: World, name: str) -> None:
    await world.wait_settled(r.MATRIXONE_CLUSTERS, name, timeout=120)
