"""A cluster on a version that is not semantic (a nightly tag) is admitted, as
upstream admits it, and comes up; ``kubectl apply`` prints the webhook's warning
naming the field and saying how to choose the version-gated behaviour. On a real
kube-apiserver the webhook is called by URL, so the warning travels through the
real server's ``Warning`` headers to kubectl's stderr."""

from __future__ import annotations

import yaml

from mo_operator.controllers.framework import resources as r

from .harness import OperatorRunner, World, condition, eventually

NIGHTLY = "nightly-20261120"


async def test_a_nightly_cluster_is_admitted_with_a_warning_and_becomes_ready(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo", version=NIGHTLY)
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith(f"Warning: spec.version: '{NIGHTLY}' is not a semantic version"), warnings
    assert "set spec.semanticVersion to choose it" in warnings[0]
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    assert cluster["spec"]["version"] == NIGHTLY

    # Saying which version it is silences the warning, and changes no pod of a
    # version before 2.0 (the fallback is what such a version gets anyway).
    manifest["spec"]["semanticVersion"] = "1.2.3"
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest))
    assert "Warning:" not in result.stderr, result.stderr


async def test_a_log_service_scaled_to_zero_is_said_to_stop_and_reported_stopped(
    world: World, operator: OperatorRunner
) -> None:
    """Upstream admits it (its way to stop a cluster); it was accepted without a word and
    the LogSet said Ready=True with no store."""
    manifest = world.cluster_manifest("mo")
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    manifest["spec"]["logService"]["replicas"] = 0
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest))
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning: ")]
    assert warnings == [
        "Warning: spec.logService.replicas: 0 stops the log service: every log store is deleted and MatrixOne "
        "is down until replicas is raised again (the LogSet reports Ready=False, reason Stopped)"
    ], result.stderr

    async def stopped() -> dict[str, object] | None:
        logset = await world.get(r.LOGSETS, "mo")
        return logset if condition(logset, "Ready").get("reason") == "Stopped" else None

    logset = await eventually(stopped, message="the LogSet reports it is stopped")
    assert condition(logset, "Ready")["status"] == "False"

    async def cluster_down() -> dict[str, object] | None:
        cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo")
        return cluster if condition(cluster, "Ready").get("status") == "False" else None

    await eventually(cluster_down, message="a cluster without its log service is not Ready")
