"""Scenario: the operator is upgraded in place on converged clusters, and no
MatrixOne pod is recreated.

The released operator (A) brings up the representative clusters of the golden
files (``tests/integration/golden/cases.py``) until they settle; what the server
then holds is checked against the committed golden files, which are the output
of the operator as released. A is stopped, nothing deleted, and the operator
under test (B) starts on those objects with cold caches, as a new release's pod
does after a ``helm upgrade``. Once B has reconciled every object of every kind
it manages and gone quiet, no pod was deleted or replaced (same UIDs), no
StatefulSet or Deployment changed generation (no rollout), no Service or
ConfigMap was rewritten, B made no write to any of them (but the CN load
annotations it refreshes at once after a start), and every cluster is Ready.

``MO_UPGRADE_FROM=<git revision>`` makes the released operator that revision's,
run from its sources (``git archive``) as a child process, as a release check of
"old commit's output against new": its objects are then not checked against the
golden files (they are its own), and B's writes and recreations are what a user
upgrading from that revision would see.

The golden files are captured on the embedded API server (kube-apiserver
defaults other fields of a pod), so the scenario runs there only.
"""

from __future__ import annotations

import asyncio
import io
import os
import tarfile
from pathlib import Path
from typing import Any

import pytest

from integration.golden.cases import CASES, capture, create_cases, load, namespace_of, wait_settled
from mo_devkit.testing.observation import Write, primary_resource
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import REAL_KUBECONFIG, OperatorRunner, Unmet, World, eventually, is_ready

pytestmark = pytest.mark.skipif(
    REAL_KUBECONFIG is not None, reason="the golden files are captured on the embedded API server"
)

Obj = dict[str, Any]
RELEASED = os.environ.get("MO_UPGRADE_FROM")
"""A git revision whose operator plays the released one; unset: the operator under
test, its objects checked against the committed golden files."""
REPO = Path(__file__).resolve().parents[2]
ROLLING_KINDS = {"StatefulSet", "Deployment", "Pod", "Service", "ConfigMap"}
"""The kinds a write to which a user may see as a rolled pod or a moved endpoint."""
LOAD_ANNOTATIONS = {labels.STORE_SCORE, labels.STORE_CONNECTIONS, labels.POD_DELETION_COST}
"""A CN's load, which the operator records on its pod every 30 s and at once after a
start (``cnset/stats.py``), as upstream does: a patch of these alone rolls nothing."""


def _rolls_or_moves(write: Write) -> bool:
    """A write of the kinds that carry pods and their endpoints, other than a CN's load."""
    if write.kind not in ROLLING_KINDS:
        return False
    body = write.body if isinstance(write.body, dict) else {}
    only_load = (
        write.kind == "Pod"
        and write.verb == "patch"
        and set(body) == {"metadata"}
        and set(body["metadata"]) == {"annotations"}
        and set(body["metadata"]["annotations"]) <= LOAD_ANNOTATIONS
    )
    return not only_load


async def _server_state(world: World) -> dict[str, str]:
    """Each pod's UID, each workload's generation, each Service's and ConfigMap's
    resourceVersion, by kind/namespace/name, across the cases' namespaces."""
    state: dict[str, str] = {}
    for case in CASES:
        namespace = namespace_of(case)
        for res, field in (
            (r.PODS, "uid"),
            (r.STATEFULSETS, "generation"),
            (r.DEPLOYMENTS, "generation"),
            (r.SERVICES, "resourceVersion"),
            (r.CONFIGMAPS, "resourceVersion"),
        ):
            for obj in (await world.client.list(res, namespace)).items:
                meta = obj["metadata"]
                deleting = " (deleting)" if meta.get("deletionTimestamp") else ""
                state[f"{res.kind} {namespace}/{meta['name']}"] = f"{meta[field]}{deleting}"
    return state


def _reconciled_everything(runner: OperatorRunner) -> bool | Unmet:
    """Whether the operator has reconciled each object of every kind it manages in the
    cases' namespaces since it started."""
    assert runner.operator is not None
    if not runner.operator.informers.has_synced():
        return Unmet("caches not synced")
    namespaces = {namespace_of(case) for case in CASES}
    done = {(name, req.namespace, req.name) for name, req in runner.seen.finished_at}
    waiting = [
        f"{controller.name} {obj['metadata']['namespace']}/{obj['metadata']['name']}"
        for controller in runner.controllers
        for obj in runner.operator.caches.list(primary_resource(controller))
        if obj["metadata"].get("namespace") in namespaces
        and (controller.name, obj["metadata"]["namespace"], obj["metadata"]["name"]) not in done
    ]
    return Unmet(f"not yet reconciled: {waiting}") if waiting else True


async def _converge_with_the_golden_operator(world: World, runner: OperatorRunner) -> None:
    """The operator under test brings the cases up, their objects are the committed golden
    ones (the released operator's output), and it stops once quiet."""
    await runner.start()
    await create_cases(world.client)
    await wait_settled(world.client)
    await runner.quiet()
    for case in CASES:
        assert await capture(world.client, case) == load(case), (
            f"{case}: the released operator's objects are not the golden ones"
            " (tests/integration/golden says how they differ)"
        )
    await runner.stop()


async def _converge_with_a_released_operator(
    world: World, runner: OperatorRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The operator of ``RELEASED``, from its sources in a child process, brings the cases
    up (the admission webhooks the current ones), and is killed once they settled."""
    git = await asyncio.create_subprocess_exec(
        "git", "archive", str(RELEASED), "src", cwd=REPO, stdout=asyncio.subprocess.PIPE
    )
    archive, _ = await git.communicate()
    assert git.returncode == 0, f"git archive {RELEASED} failed"
    sources = tmp_path / "released"
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(sources, filter="data")
    await runner.start_webhooks()
    with monkeypatch.context() as env:
        env.setenv("PYTHONPATH", str(sources / "src"))
        await runner.spawn("--no-leader-elect")
    await create_cases(world.client)
    await wait_settled(world.client)
    await runner.kill()
    await runner.stop_webhooks()


@pytest.mark.timeout(240)
async def test_a_new_operator_on_converged_clusters_recreates_no_pod_and_rolls_nothing(
    world: World, operator_runner: OperatorRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.namespaces += [namespace_of(case) for case in CASES]
    if RELEASED is None:
        await _converge_with_the_golden_operator(world, operator_runner)
    else:
        await _converge_with_a_released_operator(world, operator_runner, tmp_path, monkeypatch)
    before = await _server_state(world)
    assert sum(key.startswith("Pod ") for key in before) >= 15, sorted(before)

    upgraded = OperatorRunner(world)
    try:
        await upgraded.start()
        await eventually(
            lambda: _reconciled_everything(upgraded), timeout=60, message="B reconciles everything"
        )
        await upgraded.quiet()
        writes = [w for w in upgraded.seen.writes if _rolls_or_moves(w)]
        assert writes == [], [(w.verb, w.kind, w.namespace, w.name, w.subresource, w.body) for w in writes]
        after = await _server_state(world)
        changed = {
            k: (before.get(k), after.get(k))
            for k in before.keys() | after.keys()
            if before.get(k) != after.get(k)
        }
        assert changed == {}, changed
        for case in CASES:
            cluster = await world.client.get(r.MATRIXONE_CLUSTERS, "mo", namespace_of(case))
            assert is_ready(cluster), (case, cluster.get("status"))
    finally:
        await upgraded.stop()
