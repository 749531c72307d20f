"""What the takeover scenarios (test_23 by the command, test_24 by the running
operator) watch and check: a client's view sampled every 100 ms, the claims,
the end state, and an operator killed at seeded moments.

The probe fails a sample that misses any of: a ready endpoint behind the proxy
Service, a ready CN Working in HAKeeper, a log quorum; or where a set had more
than one pod down (log and TN) or fewer ready pods than replicas (CN and
proxy, which surge). It also records the CNs seen draining, so a CN that went
without a drain is caught.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mo_operator.controllers.adoption.guard import CONDITION as ADOPTED
from mo_operator.controllers.cnset import pods as cnpods
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.conditions import is_true
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .harness import OperatorRunner, World, condition
from .upstream_cluster import CLONESETS, KRUISE_STATEFULSETS, SETS

Obj = dict[str, Any]
ENDPOINTS = Resource("", "v1", "Endpoints", "endpoints", True)
REPLICAS = {Component.LOG: 3, Component.TN: 1, Component.CN: 2, Component.PROXY: 1}
SET_OBJECTS = ((r.LOGSETS, "mo"), (r.DNSETS, "mo"), (r.CNSETS, "mo-tp"), (r.PROXYSETS, "mo"))


async def sample_forever(sample: Callable[[], Awaitable[None]]) -> None:
    """``sample`` every 100 ms until cancelled, riding out an API server that is away."""
    while True:
        with contextlib.suppress(ConnectionError, OSError):
            await sample()
        await asyncio.sleep(0.1)


@dataclass
class Probe:
    """What a client would see, every 100 ms, and what went wrong in any sample."""

    world: World
    failures: list[str] = field(default_factory=list)
    samples: int = 0
    drain_seen: set[str] = field(default_factory=set)
    """CN pods seen draining (annotation set) while still running."""
    went_undrained: set[str] = field(default_factory=set)

    async def run(self) -> None:
        await sample_forever(self.sample)

    def assert_no_outage(self) -> None:
        """Enough samples were taken, none failed, and no CN went without its drain."""
        assert self.samples >= 20, f"the probe looked only {self.samples} times"
        assert self.failures == [], self.failures[:10]
        assert not self.went_undrained, f"CNs removed without a drain: {self.went_undrained}"

    async def sample(self) -> None:
        world, ns = self.world, self.world.namespace
        self.samples += 1
        pods = await world.pods(**{labels.CLUSTER: "mo"})
        endpoints = await world.get(ENDPOINTS, "mo-proxy")
        ready_addresses = [
            a for s in (endpoints or {}).get("subsets") or () for a in s.get("addresses") or ()
        ]
        problems = []
        if not ready_addresses:
            problems.append("the proxy Service has no ready endpoint")
        keeper = world.cluster.mo.hakeeper(ns, "mo") if world.cluster.mo else None
        if keeper is None or not keeper.available:
            problems.append("the log service has no quorum")
        ready = {
            p["metadata"]["name"] for p in pods if is_ready(p) and not p["metadata"].get("deletionTimestamp")
        }
        working = [
            s
            for s in (keeper.stores[Component.CN].values() if keeper else ())
            if s.work_state is WorkState.WORKING and s.pod[1] in ready
        ]
        if not working:
            problems.append("no ready CN is Working in HAKeeper")
        for component, set_name in SETS:
            mine = [
                p
                for p in pods
                if p["metadata"]["labels"].get(labels.INSTANCE) == set_name
                and p["metadata"]["labels"].get(labels.COMPONENT) == component.kind
            ]
            up = sum(1 for p in mine if p["metadata"]["name"] in ready)
            floor = REPLICAS[component] - (1 if component in (Component.LOG, Component.TN) else 0)
            if up < floor:
                problems.append(f"{component.kind}: {up} ready pods, fewer than {floor}")
        self._drains(pods)
        if problems:
            self.failures.append(f"sample {self.samples}: {'; '.join(problems)}")

    def _drains(self, pods: list[Obj]) -> None:
        for pod in pods:
            if pod["metadata"]["labels"].get(labels.COMPONENT) != "CNSet":
                continue
            name = pod["metadata"]["name"]
            if labels.STORE_DRAINING_START in (pod["metadata"].get("annotations") or {}):
                self.drain_seen.add(name)
            if pod["metadata"].get("deletionTimestamp") and name not in self.drain_seen:
                self.went_undrained.add(name)


def is_ready(pod: Obj) -> bool:
    return is_true((pod.get("status") or {}).get("conditions"), "Ready")


async def claim_uids(world: World) -> dict[str, str]:
    """Every volume claim's uid, by name."""
    return {c["metadata"]["name"]: c["metadata"]["uid"] for c in await world.list(r.PVCS)}


async def assert_claims_kept_and_resync_quiet(
    world: World, runner: OperatorRunner, claims: dict[str, str]
) -> None:
    """After a takeover: every claim of ``claims`` (name to uid) is still there with
    its uid, and a resync of the settled operator makes no write."""
    after = await claim_uids(world)
    assert {k: v for k, v in after.items() if k in claims} == claims, "no claim was deleted or replaced"
    await runner.quiet()
    client, op = runner.client, runner.operator
    assert client is not None and op is not None
    writes = sum(client.writes.values())
    op.resync()
    await op.wait_idle()
    assert sum(client.writes.values()) == writes, dict(client.writes)


async def set_states(world: World) -> str:
    """Each set's conditions and each pod's owners, for the message of a failed takeover."""
    lines = []
    for res, name in SET_OBJECTS:
        obj = await world.get(res, name) or {}
        for c in (obj.get("status") or {}).get("conditions") or ():
            lines.append(f"{res.kind} {name} {c['type']}={c['status']} {c.get('reason')}: {c.get('message')}")
    for pod in await world.pods(**{labels.CLUSTER: "mo"}):
        meta = pod["metadata"]
        owners = [ref["kind"] for ref in meta.get("ownerReferences") or ()]
        drain = (meta.get("annotations") or {}).get(labels.STORE_DRAINING_START)
        lines.append(
            f"pod {meta['name']} owners={owners} ready={is_ready(pod)} deleting={bool(meta.get('deletionTimestamp'))}"
            f" finalizers={meta.get('finalizers')} draining_since={drain}"
        )
    return "\n".join(lines)


async def assert_ours(world: World) -> None:
    """What a cluster our operator created looks like: our workloads, our config, no Kruise."""
    assert await world.get(KRUISE_STATEFULSETS, "mo-log") is None
    assert await world.get(CLONESETS, "mo-tp-cn") is None
    for name in ("mo-log", "mo-dn"):
        sts = await world.get(r.STATEFULSETS, name)
        assert sts is not None and sts["status"].get("currentRevision") == sts["status"].get("updateRevision")
    pods = await world.pods(**{labels.CLUSTER: "mo"})
    names = sorted(p["metadata"]["name"] for p in pods)
    assert [n for n in names if not n.startswith("mo-proxy-")] == [
        "mo-dn-0",
        "mo-log-0",
        "mo-log-1",
        "mo-log-2",
        "mo-tp-cn-0",
        "mo-tp-cn-1",
    ], names
    for pod in pods:
        refs = pod["metadata"].get("ownerReferences") or []
        kinds = {ref["kind"] for ref in refs if ref.get("controller")}
        assert kinds <= {"StatefulSet", "CNSet", "ReplicaSet"} and kinds, (pod["metadata"]["name"], refs)
        assert all(ref["apiVersion"].split("/")[0] != "apps.kruise.io" for ref in refs)
        if pod["metadata"]["labels"][labels.COMPONENT] == "CNSet":
            assert cnpods.TEMPLATE_HASH in pod["metadata"]["labels"]
    config_maps = {c["metadata"]["name"] for c in await world.list(r.CONFIGMAPS)}
    for stale in ("mo-log-config", "mo-dn-config", "mo-tp-cn-config", "mo-proxy-config"):
        assert stale not in config_maps, f"the Go operator's ConfigMap {stale} was not collected"
    for res, name in SET_OBJECTS:
        obj = await world.wait_settled(res, name)
        assert condition(obj, ADOPTED).get("status") != "False", (name, obj["status"])


class OperatorChaos:
    """The operator as a child process (``mo-operator run`` with ``args``), SIGKILLed and
    restarted ``kills`` times, each a seeded moment after the takeover made a step (a pod
    of the namespace came or went), so every kill lands mid-takeover however fast the
    machine is; the last operator it starts keeps running."""

    def __init__(
        self, world: World, runner: OperatorRunner, rng: random.Random, kills: int, args: tuple[str, ...] = ()
    ) -> None:
        self.world = world
        self.runner = runner
        self.rng = rng
        self.planned = kills
        self.args = ("--no-leader-elect", *args)
        self.kills = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name="operator-chaos")

    async def _pods(self) -> frozenset[str]:
        return frozenset(p["metadata"]["uid"] for p in await self.world.pods())

    async def _loop(self) -> None:
        await self.runner.spawn(*self.args)
        seen = await self._pods()
        while self.kills < self.planned:
            now = await self._pods()
            if now == seen:
                await asyncio.sleep(0.1)
                continue
            seen = now
            await asyncio.sleep(self.rng.uniform(0.0, 1.0))
            await self.runner.kill()
            self.kills += 1
            await self.runner.spawn(*self.args)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.runner.kill()
