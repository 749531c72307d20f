"""CN pools: a CNPool keeps warm CNs, CNClaims take them on demand, a
CNClaimSet keeps a number of claims (MISSION.md: "a pool of warm CNs from
which claims take pods on demand").

A cluster with a log service, a TN and a proxy and no CN group; a CNPool
with ``maxIdle: 2`` next to it. Claims bind idle pods (their stores get the
claim's labels and Working, sessions reach them), the pool refills, a deleted
claim's pod drains back to Idle, a CNClaimSet binds and releases claims, a
template change rolls the idle pods first and the bound ones only after
their claims go; and with the operator killed at random points no pod is
ever bound to two claims.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import Any

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .harness import GROUP_VERSION, OperatorRunner, Unmet, World, eventually
from .test_09_operator_kill import OPERATOR_ARGS, SEED, Chaos

Obj = dict[str, Any]
POOL = "pool"
SELECTOR = {"matchLabels": {"pool": "default"}}


def _cluster(world: World) -> Obj:
    return world.cluster_manifest(
        "mo",
        logService={"replicas": 1, "volume": {"size": "1Gi"}, "sharedStorage": {"s3": {"path": "bucket/mo"}}},
        cnGroups=[],
        proxy={"replicas": 1},
    )


def _pool(world: World, max_idle: int = 2, image: str = "matrixorigin/matrixone:2.0.0") -> Obj:
    template = world.for_cluster(
        {"kind": "CNSet", "spec": {"image": image, "scalingConfig": {"minDelaySeconds": 0}}}
    )["spec"]
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNPool",
        "metadata": {"name": POOL, "namespace": world.namespace},
        "spec": {
            "template": template,
            "podLabels": {"pool": "default"},
            "deps": {"logSet": {"metadata": {"name": "mo"}}},
            "strategy": {"updateStrategy": {}, "scaleStrategy": {"maxIdle": max_idle}},
        },
    }


def _claim(world: World, name: str, role: str) -> Obj:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNClaim",
        "metadata": {"name": name, "namespace": world.namespace},
        "spec": {"selector": SELECTOR, "cnLabels": [{"key": "role", "values": [role]}]},
    }


def _claimset(world: World, replicas: int) -> Obj:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNClaimSet",
        "metadata": {"name": "cs", "namespace": world.namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {"selector": SELECTOR, "cnLabels": [{"key": "role", "values": ["cs"]}]},
            },
        },
    }


async def _pool_pods(world: World) -> dict[str, Obj]:
    pods = await world.pods(**{labels.POOL_NAME: POOL})
    return {p["metadata"]["name"]: p for p in pods}


def _phase(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"]["labels"].get(labels.POOL_PHASE))


def _uuid(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"]["labels"][labels.CN_UUID])


async def _phases(world: World) -> dict[str, int]:
    counts: dict[str, int] = {}
    for pod in (await _pool_pods(world)).values():
        counts[_phase(pod)] = counts.get(_phase(pod), 0) + 1
    return counts


def _store(world: World, uuid: str) -> Any:
    mo = world.cluster.mo
    assert mo is not None
    keeper = mo.hakeeper(world.namespace, "mo")
    return keeper.stores[Component.CN].get(uuid) if keeper is not None else None


async def _bound(world: World, name: str) -> Obj | None:
    claim = await world.get(r.CNCLAIMS, name)
    return claim if ((claim or {}).get("status") or {}).get("phase") == "Bound" else None


async def _start(world: World) -> None:
    await world.apply(_cluster(world))
    await world.apply(_pool(world))
    await world.wait_ready(r.CNPOOLS, POOL, timeout=60)


async def test_claims_take_warm_cns_and_give_them_back(world: World, operator: OperatorRunner) -> None:
    await _start(world)
    assert await _phases(world) == {"Idle": 2}
    sets = await world.list(r.CNSETS)
    assert len(sets) == 1 and sets[0]["spec"]["podManagementPolicy"] == "Pooling"
    for pod in (await _pool_pods(world)).values():  # idle: out of service, no labels
        store = _store(world, _uuid(pod))
        assert store.work_state is WorkState.DRAINING and store.labels == {}

    # A claim binds an idle pod; its store works with the claim's labels; the pool refills.
    await world.apply(_claim(world, "c1", "a"))
    c1 = await eventually(lambda: _bound(world, "c1"), message="c1 is Bound")
    pod_name = c1["spec"]["podName"]
    pod = (await _pool_pods(world))[pod_name]
    assert pod["metadata"]["labels"][labels.POOL_CLAIMED_BY] == "c1" and _phase(pod) == "Bound"
    assert c1["status"]["store"]["serviceID"] == _uuid(pod) and c1["status"]["store"]["string"] == pod_name
    await eventually(
        lambda: _store(world, _uuid(pod)).work_state is WorkState.WORKING, message="c1's store works"
    )
    assert _store(world, _uuid(pod)).labels == {"role": ("a",)}
    await eventually(lambda: _phases_are(world, {"Bound": 1, "Idle": 2}), message="the pool refills")

    # Sessions reach the claimed CN, never an idle one.
    mo = world.cluster.mo
    assert mo is not None
    assert mo.open_sessions(world.namespace, "mo", 10) == 10
    assert mo.sessions(_uuid(pod)) == 10

    # A claim set of 3: three bound claims, each its own pod.
    await world.apply(_claimset(world, 3))
    await world.wait_ready(r.CNCLAIMSETS, "cs", timeout=30)
    claims = [c for c in await world.list(r.CNCLAIMS, app="cs")]
    assert sorted(c["metadata"]["name"] for c in claims) == ["cs-0", "cs-1", "cs-2"]
    assert len({c["spec"]["podName"] for c in claims} | {pod_name}) == 4
    await eventually(lambda: _phases_are(world, {"Bound": 4, "Idle": 2}), message="the pool refills again")

    # Deleting c1 drains its pod back to Idle: its sessions move to the other
    # working CNs, its labels go, and it is the same pod.
    await world.kubectl("delete", "cnclaim", "c1")
    await eventually(lambda: _is_idle(world, pod_name), timeout=20, message=f"{pod_name} is Idle again")
    again = (await _pool_pods(world))[pod_name]
    assert again["metadata"]["uid"] == pod["metadata"]["uid"]
    assert labels.POOL_CLAIMED_BY not in again["metadata"]["labels"]
    store = _store(world, _uuid(pod))
    assert store.work_state is WorkState.DRAINING and store.labels == {} and store.sessions == 0
    assert sum(mo.sessions(_uuid(p)) for p in (await _pool_pods(world)).values()) == 10
    await eventually(lambda: _phases_are(world, {"Bound": 3, "Idle": 2}), message="the pool scales in")

    # Scaling the claim set to 1 releases the two claims whose CNs hold the fewest sessions.
    by_claim = {c["metadata"]["name"]: c["spec"]["podName"] for c in claims}
    pods = await _pool_pods(world)
    for claim, sessions in (("cs-0", 2), ("cs-1", 8), ("cs-2", 0)):
        mo.set_sessions(_uuid(pods[by_claim[claim]]), sessions)
    await world.kubectl("scale", "cnclaimset", "cs", "--replicas=1")
    await eventually(lambda: _claims_are(world, ["cs-1"]), timeout=20, message="two claims are released")
    await eventually(lambda: _phases_are(world, {"Bound": 1, "Idle": 2}), timeout=20, message="pool shrinks")
    cs = await world.wait_ready(r.CNCLAIMSETS, "cs")
    assert cs["status"]["replicas"] == 1 and cs["status"]["readyReplicas"] == 1

    # A claim whose finalizer a human removed goes without giving its pod back: the
    # pool gives it back (a Warning says so) and the pod returns to Idle.
    await world.apply(_claim(world, "c2", "b"))
    c2 = await eventually(lambda: _bound(world, "c2"), message="c2 is Bound")
    orphan = c2["spec"]["podName"]
    await world.kubectl("annotate", "cnclaim", "c2", f"{labels.SKIP_SYNC}=true")
    await world.kubectl("patch", "cnclaim", "c2", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')
    await world.kubectl("delete", "cnclaim", "c2")
    await eventually(lambda: _is_idle(world, orphan), timeout=20, message=f"{orphan} is Idle again")
    events = await world.kubectl("get", "events", "--field-selector", "reason=OrphanReclaimed", "-o", "yaml")
    assert orphan in events.stdout, "an OrphanReclaimed event names the pod"
    await eventually(lambda: _phases_are(world, {"Bound": 1, "Idle": 2}), timeout=20, message="pool shrinks")

    # Settled, a resync of the pool, its set, the claims and the claim set writes nothing.
    op, client = operator.operator, operator.client
    assert op is not None and client is not None
    await operator.quiet()
    before = sum(client.writes.values())
    op.resync()
    await op.wait_idle()
    assert sum(client.writes.values()) == before, dict(client.writes)


async def _phases_are(world: World, expected: Mapping[str, int]) -> bool:
    return await _phases(world) == dict(expected)


async def _is_idle(world: World, name: str) -> bool | Unmet:
    pod = (await _pool_pods(world)).get(name)
    if pod is not None and _phase(pod) == "Idle":
        return True
    if pod is None:
        return Unmet(f"no pod {name}")
    meta = pod["metadata"]
    store = _store(world, _uuid(pod)) if labels.CN_UUID in meta["labels"] else None
    held = (
        ""
        if store is None
        else f", store {store.work_state.value} {store.labels} with {store.sessions} sessions"
    )
    return Unmet(
        f"pod {name} v{meta['resourceVersion']} labelled {meta['labels']}, "
        f"annotated {meta.get('annotations') or {}}{held}"
    )


async def _none_deleting(world: World) -> bool:
    return not [c for c in await world.list(r.CNCLAIMS) if c["metadata"].get("deletionTimestamp")]


async def _claim_in(world: World, name: str, phase: str) -> Mapping[str, Any] | None:
    """The claim once its status reads ``phase`` (its controller writes it after the pool labels the pod)."""
    found = await world.get(r.CNCLAIMS, name)
    return found if found is not None and (found.get("status") or {}).get("phase") == phase else None


async def _claims_are(world: World, names: list[str]) -> bool:
    return sorted(c["metadata"]["name"] for c in await world.list(r.CNCLAIMS)) == names


async def test_a_template_change_rolls_idle_pods_first_and_bound_ones_after_their_claims(
    world: World, operator: OperatorRunner
) -> None:
    await _start(world)
    await world.apply(_claim(world, "keep", "k"))
    keep = await eventually(lambda: _bound(world, "keep"), message="the claim is Bound")
    held = keep["spec"]["podName"]
    await world.apply(_claimset(world, 1))
    await world.wait_ready(r.CNCLAIMSETS, "cs", timeout=30)
    old_sets = {s["metadata"]["name"] for s in await world.list(r.CNSETS)}
    await eventually(lambda: _phases_are(world, {"Bound": 2, "Idle": 2}), message="the pool is warm")

    await world.apply(_pool(world, image="matrixorigin/matrixone:2.0.1"))

    async def rolled() -> bool:
        pods = await _pool_pods(world)
        idle = [p for p in pods.values() if _phase(p) == "Idle"]
        return len(idle) == 2 and all(p["spec"]["containers"][0]["image"].endswith(":2.0.1") for p in idle)

    await eventually(rolled, timeout=20, message="idle pods run the new template")
    # The plain claim keeps its pod (of the old template) until it goes; the claim set rolls itself.
    keep = await eventually(lambda: _claim_in(world, "keep", "Outdated"), message="the claim reads Outdated")
    assert keep["spec"]["podName"] == held
    assert (await _pool_pods(world))[held]["metadata"]["labels"][labels.POD_OUTDATED] == "y"

    async def claimset_rolled() -> bool:
        claims = await world.list(r.CNCLAIMS, app="cs")
        if len(claims) != 1 or (claims[0].get("status") or {}).get("phase") != "Bound":
            return False
        pod = (await _pool_pods(world)).get(claims[0]["spec"]["podName"])
        return pod is not None and pod["spec"]["containers"][0]["image"].endswith(":2.0.1")

    await eventually(claimset_rolled, timeout=20, message="the claim set moved to the new template")
    assert {s["metadata"]["name"] for s in await world.list(r.CNSETS)} & old_sets == old_sets

    await world.kubectl("delete", "cnclaim", "keep")
    await eventually(lambda: _gone(world, held), timeout=20, message="the outdated pod leaves once released")
    await eventually(lambda: _sets_are(world, old_sets), timeout=20, message="the old CNSet goes")
    pool = await world.wait_ready(r.CNPOOLS, POOL)
    assert pool["status"]["conditions"]
    await eventually(lambda: _phases_are(world, {"Bound": 1, "Idle": 2}), message="the pool is warm again")


async def _gone(world: World, pod: str) -> bool:
    return await world.get(r.PODS, pod) is None


async def _sets_are(world: World, old: set[str]) -> bool:
    names = {s["metadata"]["name"] for s in await world.list(r.CNSETS)}
    return len(names) == 1 and not names & old


async def _bindings(world: World) -> list[str]:
    """What is wrong with the bindings right now: a pod named by two claims, or
    a claim's pod labelled as another claim's."""
    claims = [c for c in await world.list(r.CNCLAIMS) if not c["metadata"].get("deletionTimestamp")]
    pods = await _pool_pods(world)
    wrong = []
    holders: dict[str, str] = {}
    for claim in claims:
        name, pod = claim["metadata"]["name"], (claim.get("spec") or {}).get("podName")
        if not pod:
            continue
        if pod in holders:
            wrong.append(f"pod {pod} is the podName of {holders[pod]} and {name}")
        holders[pod] = name
        held_by = (pods.get(pod) or {"metadata": {"labels": {}}})["metadata"]["labels"].get(
            labels.POOL_CLAIMED_BY
        )
        if held_by not in (None, name):
            wrong.append(f"claim {name} has pod {pod}, which is labelled claimed by {held_by}")
    return wrong


@pytest.mark.timeout(420)  # the chaos's waits below are generous on a loaded machine
async def test_killing_the_operator_never_binds_a_pod_twice(
    world: World, operator_runner: OperatorRunner
) -> None:
    seen: list[str] = []
    stop = asyncio.Event()

    async def watch() -> None:
        while not stop.is_set():
            with contextlib.suppress(Exception):
                seen.extend(await _bindings(world))
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    chaos = Chaos(operator_runner, SEED + 15)
    try:
        with chaos:
            await world.apply(_cluster(world))
            await world.apply(_pool(world))
            await world.apply(_claimset(world, 3))
            for name in ("a", "b", "c"):
                await world.apply(_claim(world, name, name))
            # Under the chaos an operator lives 0 to 2 s once it serves: on a loaded
            # machine its start takes most of each life, so progress comes in short
            # windows. The time bound is generous; what is checked is that no pod is
            # ever bound twice.
            await eventually(
                lambda: _all_bound(world, 6), timeout=150, message="every claim binds its own pod"
            )
            await world.kubectl("scale", "cnclaimset", "cs", "--replicas=1")
            await world.kubectl("delete", "cnclaim", "a", "--wait=false")
            await world.apply(_claim(world, "d", "d"))
            await eventually(lambda: _all_bound(world, 4), timeout=150, message="the claims settle")
        await chaos.stop(min_kills=4)
        await operator_runner.spawn(*OPERATOR_ARGS)
        await eventually(lambda: _all_bound(world, 4), timeout=30, message="the claims stay bound")
        await eventually(
            lambda: _phases_are(world, {"Bound": 4, "Idle": 2}), timeout=30, message="pool settles"
        )
        # A claim goes after its pod was given back (its finalizer is the last step).
        await eventually(lambda: _none_deleting(world), timeout=30, message="the deleted claim goes")
    finally:
        stop.set()
        await watcher
    assert chaos.kills >= 4, f"only {chaos.kills} kills: the test did not disturb much"
    assert seen == [], seen[:5]
    # Each bound claim holds exactly its pod, and HAKeeper agrees.
    claims = await world.list(r.CNCLAIMS)
    pods = await _pool_pods(world)
    bound = {
        p["metadata"]["labels"][labels.POOL_CLAIMED_BY]: n for n, p in pods.items() if _phase(p) == "Bound"
    }
    assert bound == {c["metadata"]["name"]: c["spec"]["podName"] for c in claims}
    for claim in claims:
        store = _store(world, _uuid(pods[claim["spec"]["podName"]]))
        role = claim["spec"]["cnLabels"][0]["values"][0]
        assert store.work_state is WorkState.WORKING and store.labels == {"role": (role,)}
    for name, pod in pods.items():
        if _phase(pod) == "Idle":
            store = _store(world, _uuid(pod))
            assert store.work_state is WorkState.DRAINING and store.labels == {}, name


async def _all_bound(world: World, count: int) -> bool:
    claims = [c for c in await world.list(r.CNCLAIMS) if not c["metadata"].get("deletionTimestamp")]
    return len(claims) == count and all((c.get("status") or {}).get("phase") == "Bound" for c in claims)
