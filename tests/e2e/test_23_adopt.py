"""Scenario 12: take over a running cluster the Go operator built (OpenKruise
workloads) with no loss of quorum, no lost data and no client outage.

A probe samples every 100 ms what a client sees: the proxy Service has a
ready endpoint, a CN behind it is Working in HAKeeper, and a quorum of log
stores is up. The takeover passes when no sample misses any of the three,
no set ever had more than one pod down (log and TN) or fewer ready pods than
replicas (CN and proxy, which surge), no claim went, every CN was drained
before it went, and the end state is one our operator settles on without a
write: each set's TOML the same as the Go operator's ConfigMap held (but for
the differences ``TOML_DIFFERENCES`` lists), the Go operator's ConfigMaps
collected, and its finalizers blocking nothing: deleting the cluster
completes, and its BucketClaim, released, goes when deleted.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
from collections.abc import Callable
from typing import Any

import pytest

from mo_operator.cli.adopt import REFUSED, adopt
from mo_operator.controllers.adoption.guard import CONDITION as ADOPTED
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.matrixone import buckets, labels
from mo_operator.matrixone.component import Component

from . import upstream_shapes as shapes
from .adoption_probe import (
    SET_OBJECTS,
    OperatorChaos,
    Probe,
    assert_claims_kept_and_resync_quiet,
    assert_ours,
    claim_uids,
    set_states,
)
from .harness import OperatorRunner, World, condition, eventually
from .upstream_cluster import (
    CLONESETS,
    KRUISE_STATEFULSETS,
    build,
    upstream_claim_finalizers,
    upstream_tomls,
)

Obj = dict[str, Any]
SEED = int(os.environ.get("MO_TEST_CHAOS_SEED", "20261125"))
TOML_DIFFERENCES: dict[Component, dict[str, object]] = {}
"""Per component, the dotted TOML keys where our rendering differs from the Go operator's,
and our value (docs/migrating.md says why)."""


def _echo(lines: list[str]) -> Callable[[str], None]:
    """Keep the command's output for the assertions, and show it in a failing test's log."""

    def echo(line: str) -> None:
        lines.append(line)
        print(line)

    return echo


async def test_dry_run_prints_the_plan_and_refuses_an_unsafe_cluster(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner)
    lines: list[str] = []
    assert await adopt(world.client, world.namespace, dry_run=True, echo=lines.append) == 0
    text = "\n".join(lines)
    assert "LogSet mo: apps.kruise.io/v1beta1 StatefulSet mo-log" in text, text
    assert "CNSet mo-tp: apps.kruise.io/v1alpha1 CloneSet mo-tp-cn" in text, text
    assert "drained" in text and "propagationPolicy=Orphan" in text, text
    assert await world.get(KRUISE_STATEFULSETS, "mo-log") is not None, "a dry run changes nothing"

    # A reserved ordinal where a store runs (mo-log-1): Kruise would run 0, 2, 3, so the pods are not where it says.
    await world.client.patch(
        KRUISE_STATEFULSETS, "mo-log", {"spec": {"reserveOrdinals": [1]}}, world.namespace
    )
    lines.clear()
    assert await adopt(world.client, world.namespace, echo=lines.append) == REFUSED
    text = "\n".join(lines)
    assert "LogSet mo: REFUSED" in text and "reserveOrdinals [1]" in text, text
    assert "nothing was changed" in text
    assert await world.get(KRUISE_STATEFULSETS, "mo-log") is not None
    assert await world.get(CLONESETS, "mo-tp-cn") is not None


async def test_takeover_keeps_quorum_clients_and_data(world: World, operator_runner: OperatorRunner) -> None:
    await build(world, operator_runner)
    claims = await claim_uids(world)
    upstream = await upstream_tomls(world)
    claim = await _bucket_claim(world)
    assert claim["metadata"]["finalizers"] == upstream_claim_finalizers(world.namespace)
    mo = world.cluster.mo
    assert mo is not None and mo.open_sessions(world.namespace, "mo", 20) == 20
    old_cn = {p["metadata"]["name"] for p in await world.pods(**{labels.INSTANCE: "mo-tp"})}

    await operator_runner.start()
    # Started on the Go operator's cluster, ours collides with nothing: it waits for the takeover.
    logset = await eventually(
        lambda: _held(world), timeout=30, message="the LogSet says a Kruise workload holds it"
    )
    assert "mo-operator adopt" in condition(logset, ADOPTED)["message"]
    assert await world.get(r.STATEFULSETS, "mo-log") is None

    probe = Probe(world)
    task = asyncio.create_task(probe.run())
    try:
        lines: list[str] = []
        rc = await adopt(world.client, world.namespace, timeout=120, echo=_echo(lines))
        assert rc == 0, lines
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    probe.assert_no_outage()
    assert old_cn <= probe.drain_seen

    await assert_ours(world)
    await _assert_same_toml(world, upstream)
    await assert_claims_kept_and_resync_quiet(world, operator_runner, claims)
    await _delete_cluster_and_claim(world, claim["metadata"]["name"])


async def _bucket_claim(world: World) -> Obj:
    found = await world.list(r.BUCKETCLAIMS)
    assert len(found) == 1, [c["metadata"]["name"] for c in found]
    return found[0]


def _flat(doc: object, prefix: str = "") -> dict[str, object]:
    """A parsed TOML as dotted keys; named tables (``[[fileservice]]``) keyed by name,
    since MatrixOne finds them by name, not by place."""
    if isinstance(doc, dict):
        out: dict[str, object] = {}
        for key, value in doc.items():
            out.update(_flat(value, f"{prefix}{key}."))
        return out
    if isinstance(doc, list) and doc and all(isinstance(d, dict) and "name" in d for d in doc):
        out = {}
        for item in doc:
            out.update(_flat(item, f"{prefix}{item['name']}."))
        return out
    return {prefix.rstrip("."): doc}


async def _assert_same_toml(world: World, upstream: dict[tuple[Component, str], Obj]) -> None:
    """Each set's pods run the TOML the Go operator's ConfigMap held, but for the keys
    ``TOML_DIFFERENCES`` lists (with our value)."""
    for (component, set_name), theirs in upstream.items():
        pods = await world.pods(**labels.sub_resource_labels(component, set_name, world.namespace))
        mounted = {
            v["configMap"]["name"] for p in pods for v in p["spec"]["volumes"] if v["name"] == "config"
        }
        assert len(mounted) == 1, (component, set_name, mounted)
        cm = await world.get(r.CONFIGMAPS, mounted.pop())
        assert cm is not None
        ours, want = _flat(shapes.parsed_toml(cm, component)), _flat(theirs)
        expected = TOML_DIFFERENCES.get(component, {})
        differ = {k for k in ours.keys() | want.keys() if ours.get(k) != want.get(k)}
        assert differ == set(expected), (
            component,
            set_name,
            {k: (want.get(k), ours.get(k)) for k in sorted(differ)},
        )
        assert {k: ours.get(k) for k in expected} == expected, (component, set_name)


async def _delete_cluster_and_claim(world: World, claim: str) -> None:
    """Deleting the taken-over cluster completes, none of the Go operator's finalizers
    holding anything; its BucketClaim, released as our own would be (Retain), goes
    when deleted, the Go operator's finalizers on it with ours."""
    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")

    async def cluster_gone() -> bool:
        left = [await world.get(res, name) for res, name in SET_OBJECTS]
        left.append(await world.get(r.MATRIXONE_CLUSTERS, "mo"))
        pods = await world.list(r.PODS, **{labels.CLUSTER: "mo"})
        return all(x is None for x in left) and not pods

    await eventually(cluster_gone, timeout=90, message="the cluster, its sets and pods go")

    async def released() -> Obj | None:
        found = await world.get(r.BUCKETCLAIMS, claim)
        return found if (found or {}).get("status", {}).get("state") == buckets.RELEASED else None

    await eventually(released, timeout=30, message="the BucketClaim is released")
    await world.kubectl("delete", "bucketclaim", claim, "--wait=false")
    await eventually(
        lambda: _gone(world, r.BUCKETCLAIMS, claim), timeout=30, message="the released BucketClaim goes"
    )


async def _gone(world: World, res: Resource, name: str) -> bool:
    return await world.get(res, name) is None


async def _held(world: World) -> Obj | None:
    logset = await world.get(r.LOGSETS, "mo")
    return logset if condition(logset, ADOPTED).get("reason") == "HeldByKruise" else None


async def _spawn_adopt(world: World) -> asyncio.subprocess.Process:
    """``mo-operator adopt`` as a user runs it, in a process of its own."""
    args = ("-m", "mo_operator.cli", "adopt", "--kubeconfig", str(world.kubeconfig))
    return await asyncio.create_subprocess_exec(
        sys.executable, *args, "-n", world.namespace, "--timeout", "200", stdout=asyncio.subprocess.PIPE
    )


@pytest.mark.timeout(360)
async def test_takeover_survives_sigkills_of_the_operator_and_the_command(
    world: World, operator_runner: OperatorRunner
) -> None:
    await build(world, operator_runner, version="2.0.0")
    rng = random.Random(SEED)
    claims = await claim_uids(world)
    probe = Probe(world)
    probing = asyncio.create_task(probe.run())
    chaos = OperatorChaos(world, operator_runner, rng, kills=4)
    chaos.start()
    try:
        first = await _spawn_adopt(world)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(first.wait(), rng.uniform(2.0, 8.0))
        if first.returncode is None:
            first.kill()  # SIGKILL, mid-takeover
        await first.wait()
        second = await _spawn_adopt(world)
        out, _ = await asyncio.wait_for(second.communicate(), 300)
        assert second.returncode == 0, f"{out.decode()}\n{await world.workloads()}\n{await set_states(world)}"
    finally:
        await chaos.stop()
        probing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await probing
    assert chaos.kills == 4, f"the operator was killed only {chaos.kills} times"
    assert probe.failures == [], probe.failures[:10]
    assert not probe.went_undrained, f"CNs removed without a drain: {probe.went_undrained}"

    await operator_runner.start()
    await assert_ours(world)
    await assert_claims_kept_and_resync_quiet(world, operator_runner, claims)
