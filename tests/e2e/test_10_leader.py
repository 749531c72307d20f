"""Scenario 10: two replicas with leader election. Only the leader writes;
killing it hands over within the lease duration; a leader frozen (SIGSTOP)
past its lease does not write when it wakes up, and exits.

Writes are counted from each replica's own client metrics (``/metrics``),
which works on any API server; on the embedded one the server's request log
confirms it from the other side.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time

import aiohttp

from mo_devkit.testing import free_port
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.settings import LEASE_NAME

from .harness import REAL_KUBECONFIG, OperatorRunner, World, eventually

LEASES = Resource("coordination.k8s.io", "v1", "Lease", "leases", True)
LEASE_DURATION = 3.0
ARGS = ("--lease-duration", str(LEASE_DURATION), "--renew-deadline", "2", "--retry-period", "0.3")
_WRITE_VERBS = ("create", "update", "patch", "apply", "delete")
_METRIC = re.compile(r"^api_client_requests_total\{(?P<labels>[^}]*)\} (?P<value>[0-9.e+]+)$", re.M)


class Replica:
    def __init__(self, world: World, identity: str) -> None:
        self.runner = OperatorRunner(world)
        self.identity = identity
        self.port = free_port()

    async def start(self) -> None:
        await self.runner.spawn(
            *ARGS,
            "--health-probe-bind-address",
            f"127.0.0.1:{self.port}",
            "--lease-namespace",
            self.runner.world.namespace,
            identity=self.identity,
        )

    async def writes(self) -> int:
        """Writes this replica's operator client sent (the lease's own are not counted)."""
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{self.port}/metrics") as resp,
        ):
            text = await resp.text()
        total = 0
        for m in _METRIC.finditer(text):
            found = dict(kv.split("=", 1) for kv in m["labels"].split(","))
            verb, resource = found["verb"].strip('"'), found["resource"].strip('"')
            if verb in _WRITE_VERBS and not resource.startswith("leases"):
                total += int(float(m["value"]))
        return total

    async def serving_metrics(self) -> bool:
        try:
            await self.writes()
        except aiohttp.ClientError:
            return False
        return True


async def _holder(world: World) -> str | None:
    lease = await world.client.get_or_none(LEASES, LEASE_NAME, world.namespace)
    return ((lease or {}).get("spec") or {}).get("holderIdentity")


async def _scale(world: World, replicas: int) -> None:
    patch = f'[{{"op":"replace","path":"/spec/cnGroups/0/replicas","value":{replicas}}}]'
    await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", patch)


async def _cn_pods(world: World) -> int:
    return len(await world.pods(**{"matrixorigin.io/instance": "mo-tp"}))


async def test_only_the_leader_writes_and_a_dead_leader_hands_over_within_the_lease(world: World) -> None:
    a, b = Replica(world, "replica-a"), Replica(world, "replica-b")
    try:
        await a.start()
        await eventually(lambda: _holder(world), timeout=30, message="a leader is elected")
        await b.start()
        await eventually(b.serving_metrics, message="replica b serves its metrics")
        await world.apply(world.cluster_manifest("mo"))
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)

        leader, follower = (a, b) if await _holder(world) == "replica-a" else (b, a)
        assert await leader.writes() > 0
        assert await follower.writes() == 0, "a follower wrote"
        if not REAL_KUBECONFIG:
            log = world.cluster.control_plane.server.faults  # type: ignore[union-attr]
            agent = f"mo-operator/{follower.identity}"
            assert [w for w in log.writes(user_agent=agent) if not w.resource.startswith("leases")] == []

        killed = time.monotonic()
        await leader.runner.kill()
        await _scale(world, 3)
        await eventually(
            lambda: _holder_is(world, follower.identity),
            timeout=LEASE_DURATION * 3,
            message="the follower leads",
        )
        handover = time.monotonic() - killed
        assert handover <= LEASE_DURATION + 2.0, f"handover took {handover:.1f}s"
        await eventually(lambda: _cn_pods_are(world, 3), timeout=60, message="the new leader scales")
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
        assert await follower.writes() > 0
    finally:
        await a.runner.kill()
        await b.runner.kill()


async def test_a_frozen_leader_does_not_write_when_it_wakes(world: World) -> None:
    a, b = Replica(world, "replica-a"), Replica(world, "replica-b")
    try:
        await a.start()
        await eventually(lambda: _holder_is(world, "replica-a"), timeout=30, message="a leads")
        await b.start()
        await world.apply(world.cluster_manifest("mo"))
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)
        await eventually(b.serving_metrics, message="replica b serves its metrics")
        assert a.runner.process is not None
        frozen_writes = await a.writes()
        a.runner.process.send_signal(signal.SIGSTOP)
        await eventually(
            lambda: _holder_is(world, "replica-b"), timeout=LEASE_DURATION * 3, message="b takes over"
        )
        await _scale(world, 3)
        await eventually(lambda: _cn_pods_are(world, 3), timeout=60, message="b scales")

        # A write the leader sent just before it froze may reach the server's log
        # after the freeze; a stopped process sends nothing, so what counts is what
        # it writes once it runs again.
        woke_at = time.time()
        a.runner.process.send_signal(signal.SIGCONT)
        code = await asyncio.wait_for(a.runner.process.wait(), 30)
        assert code == 1, "a leader that lost its lease exits"
        if not REAL_KUBECONFIG:
            log = world.cluster.control_plane.server.faults  # type: ignore[union-attr]
            late = [
                w
                for w in log.writes(user_agent="mo-operator/replica-a", since=woke_at)
                if not w.resource.startswith("leases")
            ]
            assert late == [], f"the frozen leader wrote after waking: {late}"
        assert frozen_writes > 0
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    finally:
        await a.runner.kill()
        await b.runner.kill()


async def _holder_is(world: World, identity: str) -> bool:
    return await _holder(world) == identity


async def _cn_pods_are(world: World, count: int) -> bool:
    return await _cn_pods(world) == count
