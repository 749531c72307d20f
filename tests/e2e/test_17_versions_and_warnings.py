"""A cluster on a version that is not semantic (a nightly tag) is admitted, as
upstream admits it, and comes up; ``kubectl apply`` prints the webhook's warning
naming the field and saying how to choose the version-gated behaviour. On a real
kube-apiserver the webhook is called by URL, so the warning travels through the
real server's ``Warning`` headers to kubectl's stderr."""

from __future__ import annotations

import yaml

from mo_operator.controllers.common import resources as r

from .harness import OperatorRunner, World

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
