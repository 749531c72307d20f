"""Every controller declares each cache its reconciles read (``Controller.reads``
besides its watches): it starts once those have synced, so a cache it reads
without declaring could still be empty when it acts. The test kit's runner
turns strict reads on: a read of an undeclared cache fails the reconcile, and
the runner's ``stop`` fails naming it. This runs every controller of the
operator through a cluster with a console, a CN pool and a claim, from
creation to Ready, a resync and the deletion."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mo_devkit.testing.runner import OperatorRunner
from mo_devkit.testing.waiting import eventually
from mo_devkit.testing.world import World, open_world
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.operator import Operator
from mo_operator.kube.controller.controller import Controller

GROUP_VERSION = "core.matrixorigin.io/v1alpha1"
SELECTOR = {"matchLabels": {"pool": "default"}}


def _pool(world: World) -> dict[str, Any]:
    template = world.for_cluster({"kind": "CNSet", "spec": {"image": "matrixorigin/matrixone:2.0.0"}})["spec"]
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNPool",
        "metadata": {"name": "pool", "namespace": world.namespace},
        "spec": {
            "template": template,
            "podLabels": {"pool": "default"},
            "deps": {"logSet": {"metadata": {"name": "mo"}}},
            "strategy": {"updateStrategy": {}, "scaleStrategy": {"maxIdle": 1}},
        },
    }


def _claim(world: World) -> dict[str, Any]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNClaim",
        "metadata": {"name": "claim", "namespace": world.namespace},
        "spec": {"selector": SELECTOR, "cnLabels": [{"key": "role", "values": ["app"]}]},
    }


async def test_no_controller_reads_a_cache_it_does_not_declare(tmp_path: Path) -> None:
    async with open_world(tmp_path) as world:
        runner = OperatorRunner(world)
        operator: Operator = runner.build()
        controllers: list[Controller] = operator.controllers
        assert all(c.strict_reads for c in controllers)
        runner.launch()
        try:
            await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}, webui={"replicas": 1}))
            await world.apply(_pool(world))
            await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
            await world.wait_ready(r.CNPOOLS, "pool", timeout=60)
            await world.apply(_claim(world))

            async def bound() -> bool:
                claim = await world.get(r.CNCLAIMS, "claim")
                return ((claim or {}).get("status") or {}).get("phase") == "Bound"

            await eventually(bound, timeout=60)
            assert runner.resync()
            await runner.wait_idle()
            for res, name in ((r.CNCLAIMS, "claim"), (r.CNPOOLS, "pool"), (r.MATRIXONE_CLUSTERS, "mo")):
                await world.kubectl("delete", res.plural, name, "--wait=false")

            async def gone() -> bool:
                return await world.get(r.MATRIXONE_CLUSTERS, "mo") is None and not await world.list(r.CNSETS)

            await eventually(gone, timeout=60)
        finally:
            await runner.stop()
    assert all(c.started_at is not None for c in controllers)
    assert runner.undeclared.reads == []
