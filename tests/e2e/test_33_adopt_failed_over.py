"""Scenario 12, the Go-operator clusters the plain takeover (test_23) does not
cover, in one cluster: its log failover ran (the Go operator replaced log
store 1 by store 3 and keeps ordinal 1 in its Advanced StatefulSet's
``reserveOrdinals``, so the stores are ``mo-log-0``, ``-2`` and ``-3``, with a
hole no apps/v1 StatefulSet can run), and it runs a CN
pool (a CNPool whose CNSet's CloneSet runs one idle CN and one a CNClaim
holds, with sessions).

``mo-operator adopt`` takes it over with the client probe of test_23 (every
100 ms: a ready proxy endpoint, a Working CN, a log quorum, never more than one
log or TN pod down). The log stores stay where they are: no pod is ever made
at the reserved ordinal, every store keeps its name (its identity) and its
claim, our StatefulSet runs ordinals 2 and 3, the LogSet keeps store 0 itself,
and the stores find each other without the reserved one. An upgrade of the log
service then rolls all three stores, one at a time across both kinds, the
probe still sampling. The pool's claimed CN is not replaced: the same pod
(by uid) becomes its CNSet's, the claim keeps its pod, its store keeps Working
with the claim's labels and its sessions; our CNPool, which never names a set
as upstream does, counts the taken-over set as an older template's, so its
idle CN gives way to one of ours.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from mo_operator.cli.adopt import adopt
from mo_operator.controllers.adoption.guard import CONDITION as ADOPTED
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .adoption_probe import Probe, assert_claims_kept_and_resync_quiet, claim_uids, is_ready, sample_forever
from .harness import OperatorRunner, World, condition, eventually
from .upstream_cluster import CLAIM, CLONESETS, KRUISE_STATEFULSETS, POOL, build

STORES = ("mo-log-0", "mo-log-2", "mo-log-3")
LOG_IMAGE = "matrixorigin/matrixone:2.0.1"


@dataclass
class LogPods:
    """The names of the log pods seen, every 100 ms."""

    world: World
    seen: set[str] = field(default_factory=set)
    uids: set[str] = field(default_factory=set)
    made: list[str] = field(default_factory=list)
    """The pods seen made, in the order they first appeared (after the first sample)."""

    async def run(self) -> None:
        await sample_forever(self.sample)

    async def sample(self) -> None:
        pods = await self.world.pods(**labels.sub_resource_labels(Component.LOG, "mo", self.world.namespace))
        self.seen.update(p["metadata"]["name"] for p in pods)
        first = not self.uids
        for pod in pods:
            if pod["metadata"]["uid"] not in self.uids:
                self.uids.add(pod["metadata"]["uid"])
                if not first:
                    self.made.append(pod["metadata"]["name"])


async def _log_budget(world: World) -> bool:
    """The disruption controller counts the LogSet's own store (minAvailable: a LogSet has
    no scale subresource, which maxUnavailable would need)."""
    pdb = await world.get(r.PDBS, "mo-log")
    status = (pdb or {}).get("status") or {}
    counts = (status.get("expectedPods"), status.get("desiredHealthy"), status.get("disruptionsAllowed"))
    return pdb is not None and pdb["spec"].get("minAvailable") == 2 and counts == (3, 2, 1)


def _set_of(pod: dict[str, Any]) -> str:
    return str(pod["metadata"]["labels"][labels.INSTANCE])


async def test_a_failed_over_log_set_and_a_cn_pool_are_taken_over_keeping_stores_claims_and_sessions(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner, reserved=(1,), pool=True)
    mo = world.cluster.mo
    assert mo is not None
    claim = await world.get(r.CNCLAIMS, CLAIM)
    assert claim is not None
    bound_pod = claim["spec"]["podName"]
    uuid = claim["status"]["store"]["serviceID"]
    pool_pods = {p["metadata"]["name"]: p for p in await world.pods(**{labels.POOL_NAME: POOL})}
    for pod in pool_pods.values():
        owners = [ref["kind"] for ref in pod["metadata"]["ownerReferences"] if ref.get("controller")]
        assert owners == ["CloneSet"], (pod["metadata"]["name"], owners)
    old_set = pool_pods[bound_pod]["metadata"]["labels"][labels.INSTANCE]
    mo.set_sessions(uuid, 5)
    # Upstream names its pool's CNSet after its own hash of the template, never ours: to our
    # CNPool that set is an older template's, as after a template change, which stands for it.
    template = {"template": {"scalingConfig": {"minDelaySeconds": 1}}}
    await world.client.patch(r.CNPOOLS, POOL, {"spec": template}, world.namespace)
    kruise = await world.get(KRUISE_STATEFULSETS, "mo-log")
    assert kruise is not None and kruise["spec"]["reserveOrdinals"] == [1]
    claims = await claim_uids(world)
    assert {f"mo-data-{s}" for s in STORES} <= claims.keys(), sorted(claims)

    lines: list[str] = []
    assert await adopt(world.client, world.namespace, dry_run=True, echo=lines.append) == 0, lines
    assert any("ordinals [1] stay reserved" in line for line in lines), lines
    assert any("the LogSet itself keeps mo-log-0 (below a reserved ordinal)" in line for line in lines), lines
    assert any("keeps its pods as they are" in line for line in lines), lines

    await operator_runner.start()
    probe, log_pods = Probe(world), LogPods(world)
    tasks = [asyncio.create_task(probe.run()), asyncio.create_task(log_pods.run())]
    try:
        lines.clear()
        assert await adopt(world.client, world.namespace, timeout=120, echo=print) == 0
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    probe.assert_no_outage()
    assert log_pods.seen == set(STORES), f"log pods seen during the takeover: {sorted(log_pods.seen)}"

    logset = await world.wait_settled(r.LOGSETS, "mo")
    assert logset["metadata"]["annotations"][labels.LOGSET_RESERVED_ORDINALS] == "[1]"
    assert await world.get(KRUISE_STATEFULSETS, "mo-log") is None
    sts = await world.get(r.STATEFULSETS, "mo-log")
    assert sts is not None and sts["spec"].get("ordinals") == {"start": 2}, sts["spec"]
    assert sts["spec"]["replicas"] == 2
    pods = await world.pods(**labels.sub_resource_labels(Component.LOG, "mo", world.namespace))
    assert sorted(p["metadata"]["name"] for p in pods) == list(STORES)
    owners = {p["metadata"]["name"]: [ref["kind"] for ref in p["metadata"]["ownerReferences"]] for p in pods}
    assert owners == {"mo-log-0": ["LogSet"], "mo-log-2": ["StatefulSet"], "mo-log-3": ["StatefulSet"]}
    await eventually(
        lambda: _log_budget(world),
        timeout=30,
        message="the log PodDisruptionBudget expects 3 stores, 2 healthy, allows 1 disruption",
    )
    gossip = await world.get(r.CONFIGMAPS, names.log_gossip_config_map_name("mo"))
    assert gossip is not None
    seeds = gossip["data"]["gossip.toml"]
    assert all(f"{s}.mo-log-headless" in seeds for s in STORES) and "mo-log-1." not in seeds, seeds

    # The pool: its claimed CN is the same pod, now its CNSet's, with its claim, its store's
    # labels and its sessions; the idle CN of the older template gives way to one of ours.
    assert await world.get(CLONESETS, names.workload_name(Component.CN, old_set)) is None
    # (no Adopted condition at all when the command released the set before the operator first saw it)
    settled = await world.wait_settled(r.CNSETS, old_set)
    assert condition(settled, ADOPTED).get("status") != "False", settled.get("status")

    async def pool_settled() -> dict[str, Any] | None:
        pods = {p["metadata"]["name"]: p for p in await world.pods(**{labels.POOL_NAME: POOL})}
        phases = sorted(p["metadata"]["labels"].get(labels.POOL_PHASE) for p in pods.values())
        return pods if phases == ["Bound", "Idle"] and len({_set_of(p) for p in pods.values()}) == 2 else None

    after = await eventually(
        pool_settled, timeout=30, message="the pool holds the claimed CN and one idle CN"
    )
    bound = after[bound_pod]
    assert bound["metadata"]["uid"] == pool_pods[bound_pod]["metadata"]["uid"], (
        "the claimed CN was not replaced"
    )
    owners = [ref["kind"] for ref in bound["metadata"]["ownerReferences"] if ref.get("controller")]
    assert owners == ["CNSet"] and _set_of(bound) == old_set, owners
    claim = await world.get(r.CNCLAIMS, CLAIM)
    assert claim is not None and claim["spec"]["podName"] == bound_pod
    assert claim["status"]["phase"] == "Outdated", "bound to a pod of an older template, as upstream says"
    store = mo.hakeeper(world.namespace, "mo").stores[Component.CN][uuid]  # type: ignore[union-attr]
    assert store.work_state is WorkState.WORKING and store.labels == {"role": ("a",)}
    assert mo.sessions(uuid) == 5, "the claimed CN kept its sessions"
    await _upgrade_the_log_service(world, operator_runner)
    await assert_claims_kept_and_resync_quiet(world, operator_runner, claims)


async def _upgrade_the_log_service(world: World, operator_runner: OperatorRunner) -> None:
    """A new log image rolls the StatefulSet's stores, highest first, then the LogSet's
    own, the probe seeing a quorum and never two stores down throughout."""
    probe, log_pods = Probe(world), LogPods(world)
    tasks = [asyncio.create_task(probe.run()), asyncio.create_task(log_pods.run())]
    try:
        patch = {"spec": {"logService": {"image": LOG_IMAGE}}}
        await world.client.patch(r.MATRIXONE_CLUSTERS, "mo", patch, world.namespace)

        async def rolled() -> bool:
            pods = await world.pods(**labels.sub_resource_labels(Component.LOG, "mo", world.namespace))
            return sorted(p["metadata"]["name"] for p in pods) == list(STORES) and all(
                p["spec"]["containers"][0]["image"] == LOG_IMAGE and is_ready(p) for p in pods
            )

        await eventually(rolled, timeout=120, message=f"every log store runs {LOG_IMAGE}")
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    # the simulated stores restart within a second: fewer samples than a takeover's
    assert probe.samples >= 5 and probe.failures == [], (probe.samples, probe.failures[:10])
    assert log_pods.seen == set(STORES), f"log pods seen during the upgrade: {sorted(log_pods.seen)}"
    assert log_pods.made == ["mo-log-3", "mo-log-2", "mo-log-0"], (
        "the StatefulSet's stores first, then the LogSet's"
    )
