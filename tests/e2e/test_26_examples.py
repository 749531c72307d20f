"""The manifests of examples/ work as written: every one is accepted by this
control plane's schemas and webhooks (a server-side dry run of the directory),
and the clusters they describe, applied in one go, become Ready. On a real API
server each cluster's pods are placed on the simulated nodes first, the only
change made to them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from mo_operator.controllers.framework import resources as r

from .harness import OperatorRunner, World

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RUN = ("minio-credentials.yaml", "minimal.yaml", "production.yaml")
"""The examples applied and waited for (backup.yaml is dry-run only: it would back
up a cluster that is not Ready yet)."""


async def test_every_example_is_accepted_and_its_clusters_become_ready(
    world: World, operator: OperatorRunner, tmp_path: Path
) -> None:
    assert {p.name for p in EXAMPLES.glob("*.yaml")} >= {*RUN, "backup.yaml"}
    await world.kubectl("apply", "--dry-run=server", "-f", str(EXAMPLES))

    placed = tmp_path / "examples"
    placed.mkdir()
    clusters = []
    for name in RUN:
        docs = [world.for_cluster(doc) for doc in yaml.safe_load_all((EXAMPLES / name).read_text()) if doc]
        clusters += [d["metadata"]["name"] for d in docs if d["kind"] == "MatrixOneCluster"]
        (placed / name).write_text(yaml.safe_dump_all(docs))
    await world.kubectl("apply", "-f", str(placed))
    assert sorted(clusters) == ["minimal", "production"]
    await asyncio.gather(*(world.wait_ready(r.MATRIXONE_CLUSTERS, c, timeout=240) for c in clusters))
