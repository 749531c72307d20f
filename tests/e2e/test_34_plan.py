"""Scenario: before a change takes effect, ``mo-operator plan`` says what the operator
would do, and writes nothing. A settled cluster has nothing to do; a spec changed
while the operator is stopped shows the cluster's apply of its CN set with the
replicas it would change, and the framework's status changes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mo_devkit.cli.demo import kubectl_binary
from mo_devkit.simulated.cluster import SimulatedCluster
from mo_operator.cli.plan import USER_AGENT
from mo_operator.controllers.framework import resources as r

from .harness import OperatorRunner, World


async def _run(*args: str) -> tuple[int, str, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = await asyncio.create_subprocess_exec(
        *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


def _mo_operator(world: World, *args: str) -> list[str]:
    """``mo-operator plan`` as a user runs it (MatrixOne is out of its reach)."""
    return [
        sys.executable,
        "-m",
        "mo_operator.cli",
        "plan",
        "--kubeconfig",
        str(world.kubeconfig),
        "-n",
        world.namespace,
        *args,
    ]


def _with_matrixone(world: World, *args: str) -> list[str]:
    """The same plan with the simulated MatrixOne reachable, as the operator reaches it."""
    assert isinstance(world.cluster, SimulatedCluster)
    book = world.cluster.address_book
    return [
        sys.executable,
        "-m",
        "mo_devkit.testing.plan_process",
        "--mo-address-book",
        str(book),
        "--kubeconfig",
        str(world.kubeconfig),
        "-n",
        world.namespace,
        *args,
    ]


async def _versions(world: World) -> dict[str, str]:
    """The resourceVersion of every object of ours in the namespace: a write moves one."""
    found: dict[str, str] = {}
    for res in (r.MATRIXONE_CLUSTERS, r.LOGSETS, r.DNSETS, r.CNSETS, r.STATEFULSETS, r.PODS, r.CONFIGMAPS):
        for obj in (await world.client.list(res, world.namespace)).items:
            found[f"{res.kind}/{obj['metadata']['name']}"] = obj["metadata"]["resourceVersion"]
    return found


def _plan_writes(world: World) -> list[Any]:
    """The writes the plan's client made, as the embedded API server logged them (the
    real one keeps no such log: there the resource versions speak)."""
    if world.real:
        return []
    assert isinstance(world.cluster, SimulatedCluster) and world.cluster.control_plane is not None
    faults = world.cluster.control_plane.server.faults
    assert any(USER_AGENT in rec.user_agent for rec in faults.log), "the log holds none of the plan's reads"
    return list(faults.writes(user_agent=USER_AGENT))


def _refreshes_loads_only(plan: dict[str, Any]) -> bool:
    """The object's only writes are the CN load annotations, which the operator refreshes
    on a 30-second timer the plan (a fresh process) sees as due: the simulated CNs
    register before their containers report running, so their first record lacks the
    start time."""
    steps = plan["steps"]
    rest = {k: v for k, v in plan.items() if k not in ("steps", "settled", "requeueAfterSeconds")}
    quiet = not rest["directWrites"] and not rest["events"] and not rest["error"]
    status = rest["status"]
    quiet = (
        quiet and not status["observedGeneration"] and not status["conditions"] and not status["otherFields"]
    )
    return quiet and all(s["what"].startswith("record the load of CN") for s in steps)


async def test_plan_says_nothing_to_do_then_names_a_scale_without_writing(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo", cnGroups=[{"name": "tp", "replicas": 2}])
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    await operator.quiet()

    code, out, err = await _run(*_with_matrixone(world, "mo", "-o", "json"))
    assert code == 0, err + out
    settled = json.loads(out)
    assert settled["matrixone"] == "asked", settled["matrixone"]
    kinds = {(o["kind"], o["name"]) for o in settled["objects"]}
    assert {("MatrixOneCluster", "mo"), ("LogSet", "mo"), ("CNSet", "mo-tp")} <= kinds, kinds
    busy = [o for o in settled["objects"] if not o["settled"] and not _refreshes_loads_only(o)]
    assert not busy, json.dumps(busy, indent=2)

    await operator.stop()
    manifest["spec"]["cnGroups"][0]["replicas"] = 3
    await world.apply(manifest)
    before = await _versions(world)

    code, out, err = await _run(*_mo_operator(world, "mo"))
    assert code == 0, err + out
    assert "the operator would act" in out, out
    assert "apply CNSet mo-tp" in out and "spec.replicas: 2 -> 3" in out, out
    assert "status.observedGeneration: 1 -> 2" in out, out
    # from outside the cluster MatrixOne's addresses do not resolve: the plan says so
    assert "MatrixOne: did not answer" in out and "the plan assumes no answer" in out, out

    # the same from kubectl, for programs, without asking MatrixOne
    code, out, err = await _run(
        kubectl_binary(),
        "mo",
        "plan",
        "mo",
        "-o",
        "json",
        "--no-matrixone",
        "--kubeconfig",
        str(world.kubeconfig),
        "-n",
        world.namespace,
    )
    assert code == 0, err + out
    data = json.loads(out)
    assert data["matrixone"].startswith("not asked"), data["matrixone"]
    cluster = data["objects"][0]
    assert cluster["kind"] == "MatrixOneCluster" and not cluster["settled"], cluster
    assert {"what": "apply CNSet mo-tp", "batch": 1, "changes": ["spec.replicas: 2 -> 3"]} in cluster["steps"]

    assert await _versions(world) == before
    assert _plan_writes(world) == []

    code, out, err = await _run(*_mo_operator(world, "missing"))
    assert code == 1 and not out, out
    assert f"MatrixOneCluster {world.namespace}/missing not found" in err, err

    if world.real:  # the operator finalizes what the test made on a shared server
        await operator.start()
