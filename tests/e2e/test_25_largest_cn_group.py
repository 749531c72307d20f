"""The largest CN group the schema admits (1,000 CNs) is built in bounded rounds:
while its pods are being created, the operator's memory stays within a bound that
does not grow with replicas, and another cluster's change converges as usual.
(A group of 100,000 was admitted and planned in one reconcile: the operator grew
from 373 MB to 1.65 GB, lost its lease and exited, and crash-looped on restart.)

The operator runs as a child process, as in a pod, so its RSS is its own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import pytest

from mo_operator.api.limits import MAX_REPLICAS
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.writes import CREATE_LIMIT
from mo_operator.matrixone import labels

from .harness import REAL_KUBECONFIG, OperatorRunner, World, eventually

pytestmark = pytest.mark.skipif(
    bool(REAL_KUBECONFIG) and not os.environ.get("KUBEBUILDER_ASSETS"),
    reason="run on the embedded server and on kube-apiserver; the attached embedded one proves nothing more",
)

RSS_GROWTH_BOUND = 200 * 1024 * 1024
"""What the operator may grow by while the largest group is being built: its caches
of a few hundred more pods, not the group's thousand pods at once."""
CONVERGE_BOUND = 30.0
"""How long the operator may take meanwhile to make another cluster's new CN (seconds;
it takes one or two)."""


def _rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _small(world: World, name: str, cn: int) -> dict[str, object]:
    manifest = world.cluster_manifest(name)
    spec = manifest["spec"]
    spec["logService"]["replicas"] = 1
    spec["cnGroups"][0]["replicas"] = cn
    return manifest


async def test_the_largest_group_leaves_the_operator_and_other_clusters_alone(
    world: World, operator_runner: OperatorRunner
) -> None:
    process = await operator_runner.spawn("--no-leader-elect")
    assert await operator_runner.wait_serving(), "the operator serves"
    other = _small(world, "other", 1)
    await world.apply(other)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "other", timeout=120)
    baseline = _rss(process.pid)
    peak = [baseline]

    async def sample() -> None:
        while True:
            peak[0] = max(peak[0], _rss(process.pid))
            await asyncio.sleep(0.2)

    sampler = asyncio.create_task(sample())
    try:
        big = _small(world, "big", MAX_REPLICAS)
        await world.apply(big)

        async def rounds_made() -> bool:
            pods = await world.pods(**{labels.INSTANCE: "big-tp", labels.COMPONENT: "CNSet"})
            return len(pods) >= 3 * CREATE_LIMIT

        await eventually(rounds_made, timeout=180, message="the big group's first rounds of pods")

        # The other cluster's CN group grows: the operator makes its pod at once (the
        # nodes may well be full of the big group's pods, which is the cluster's
        # business: what is measured is the operator's answer).
        started = time.monotonic()
        patch = '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":2}]'
        await world.kubectl("patch", "mo", "other", "--type", "json", "-p", patch)

        async def answered() -> bool:
            cnset = await world.get(r.CNSETS, "other-tp")
            made = await world.get(r.PODS, "other-tp-cn-1")
            seen = (cnset or {}).get("status", {}).get("observedGeneration") == (cnset or {}).get(
                "metadata", {}
            ).get("generation")
            return made is not None and seen

        await eventually(answered, timeout=CONVERGE_BOUND, message="the other cluster's new CN is made")
        took = time.monotonic() - started
        grew = peak[0] - baseline
        print(
            f"other cluster's scale-out: {took:.1f} s; operator RSS {baseline >> 20} MiB, +{grew >> 20} MiB"
        )
        assert grew < RSS_GROWTH_BOUND, f"the operator grew by {grew >> 20} MiB"
        assert process.returncode is None, "the operator is alive"
    finally:
        sampler.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sampler
        await world.kubectl("delete", "mo", "big", "--wait=false", check=False)
