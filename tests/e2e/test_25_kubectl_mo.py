"""Scenario 16: operate a cluster from kubectl. ``kubectl mo`` (the ``kubectl-mo``
script kubectl finds on PATH) shows a cluster's sets, versions, stores,
conditions and Warning Events, follows a restart it started with ``--watch``,
pauses and resumes reconciliation, and writes a support bundle in which no
Secret value appears.

One cluster serves every subcommand, so the scenario starts it once."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import signal
import sys
import tarfile
from pathlib import Path

from mo_devkit.cli.demo import kubectl_binary
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually

ACCESS_KEY = "AKIAKUBECTLMOTEST1234"
SECRET_KEY = "kubectl-mo-secret-key-never-in-a-report"


async def _plugin(
    world: World, *args: str, stdout: int | None = asyncio.subprocess.PIPE
) -> asyncio.subprocess.Process:
    """``kubectl mo ...`` as a user runs it: through kubectl's plugin lookup on PATH."""
    kubectl = kubectl_binary()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return await asyncio.create_subprocess_exec(
        kubectl,
        "mo",
        *args,
        "--kubeconfig",
        str(world.kubeconfig),
        "-n",
        world.namespace,
        stdout=stdout,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


async def _drain(stream: asyncio.StreamReader | None, into: bytearray) -> None:
    """Everything ``stream`` gives, as it comes."""
    assert stream is not None
    while chunk := await stream.read(65536):
        into.extend(chunk)


async def kubectl_mo(world: World, *args: str) -> str:
    proc = await _plugin(world, *args)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, f"kubectl mo {' '.join(args)} failed:\n{err.decode()}{out.decode()}"
    return out.decode()


async def _cluster_with_s3_credentials(world: World) -> None:
    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s3-credentials"},
        "stringData": {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY},
    }
    await world.apply(secret)
    manifest = world.cluster_manifest("mo")
    manifest["spec"]["logService"]["sharedStorage"]["s3"]["secretRef"] = {"name": "s3-credentials"}
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)


def _rolled(watched: str) -> bool:
    """A frame of the CN roll under way, then one of it finished. The roll's first
    frame (0/2) can pass between two redraws on a loaded machine, so any frame with
    fewer than all CNs updated shows the roll."""
    under_way = re.search(r"\b[01]/2 CNs updated", watched)
    return under_way is not None and "2/2 CNs updated" in watched[under_way.end() :]


async def test_kubectl_mo_shows_restarts_pauses_and_reports_a_cluster(
    world: World, operator: OperatorRunner, tmp_path: Path
) -> None:
    await _cluster_with_s3_credentials(world)

    # status, for people and for programs
    text = await kubectl_mo(world, "status", "mo")
    assert "MatrixOneCluster" in text and "phase Ready" in text, text
    for line in ("3/3 log stores updated", "1/1 TN stores updated", "2/2 CNs updated"):
        assert line in text, text
    assert "mo-log-0" in text and "Every condition is fine." in text, text
    assert "\x1b[" not in text, "piped output has no colour codes"
    data = json.loads(await kubectl_mo(world, "status", "mo", "-o", "json"))
    assert data["phase"] == "Ready" and data["ready"] == "3/3" and data["up_to_date"] is True
    assert {s["kind"]: s["ready"] for s in data["sets"]} == {"LogSet": "3/3", "DNSet": "1/1", "CNSet": "2/2"}
    assert all(s["running_version"] == s["desired_version"] == data["desired_version"] for s in data["sets"])
    cn_stores = [s for s in data["stores"] if s["set"] == "CNSet mo-tp"]
    assert len(cn_stores) == 2 and all(s["state"] == "Up" and s["uuid"] for s in cn_stores), data["stores"]
    listed = json.loads(await kubectl_mo(world, "status", "-o", "json"))
    assert [c["name"] for c in listed["items"]] == ["mo"]

    # restart the CN group while --watch follows it
    old_cn = {p["metadata"]["uid"] for p in await world.pods(**{labels.COMPONENT: "CNSet"})}
    old_log = {p["metadata"]["uid"] for p in await world.pods(**{labels.COMPONENT: "LogSet"})}
    watch = await _plugin(world, "status", "mo", "--watch", "--interval", "0.2")
    output = bytearray()
    reading = asyncio.gather(_drain(watch.stdout, output), _drain(watch.stderr, bytearray()))
    try:
        done = json.loads(await kubectl_mo(world, "restart", "mo", "--component", "cn", "-o", "json"))
        assert done["components"] == ["cn/tp"]
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)

        async def replaced() -> bool:
            now = {p["metadata"]["uid"] for p in await world.pods(**{labels.COMPONENT: "CNSet"})}
            return len(now) == 2 and not now & old_cn

        await eventually(replaced, timeout=60, message="every CN pod replaced")
        # a redraw takes several reads: under load the finished roll shows a moment later
        await eventually(
            lambda: _rolled(output.decode()), timeout=60, message="--watch shows the roll, then its end"
        )
    finally:
        watch.send_signal(signal.SIGINT)
        await asyncio.wait_for(asyncio.gather(reading, watch.wait()), 30)
    assert watch.returncode == 0
    seen = output.decode()
    assert "phase Upgrading" in seen and _rolled(seen), seen
    assert {p["metadata"]["uid"] for p in await world.pods(**{labels.COMPONENT: "LogSet"})} == old_log
    cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo")
    assert cluster is not None
    stamp = cluster["spec"]["cnGroups"][0]["overlay"]["podAnnotations"]["kubectl.kubernetes.io/restartedAt"]
    assert stamp == done["restartedAt"]

    # pause: a spec change waits; resume: it is made
    paused = await kubectl_mo(world, "pause", "mo")
    assert "paused" in paused and "CNSet mo-tp" in paused
    for res, name in ((r.MATRIXONE_CLUSTERS, "mo"), (r.CNSETS, "mo-tp"), (r.LOGSETS, "mo")):
        found = await world.get(res, name)
        assert found is not None and found["metadata"]["annotations"][labels.SKIP_SYNC] == "true"
    assert "PAUSED" in await kubectl_mo(world, "status", "mo")
    await world.kubectl(
        "patch",
        "mo",
        "mo",
        "--type",
        "json",
        "-p",
        '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":3}]',
    )
    held = await world.get(r.MATRIXONE_CLUSTERS, "mo")
    assert held is not None
    assert held["status"]["observedGeneration"] < held["metadata"]["generation"], (
        "a paused cluster is not reconciled"
    )
    await kubectl_mo(world, "resume", "mo")
    assert labels.SKIP_SYNC not in ((await world.get(r.CNSETS, "mo-tp")) or {})["metadata"].get(
        "annotations", {}
    )
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    assert len(await world.pods(**{labels.COMPONENT: "CNSet"})) == 3

    # a support bundle without a secret in it
    bundle = tmp_path / "report.tar.gz"
    said = json.loads(await kubectl_mo(world, "report", "mo", "-f", str(bundle), "-o", "json"))
    assert said["file"] == str(bundle)
    with tarfile.open(bundle) as tar:
        contents = {
            m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()
        }  # type: ignore[union-attr]
    for expected in (
        "status.txt",
        "status.json",
        "events.yaml",
        "index.txt",
        "objects/MatrixOneCluster/mo.yaml",
        "objects/LogSet/mo.yaml",
        "objects/Pod/mo-log-0.yaml",
        "objects/Secret/s3-credentials.yaml",
    ):
        assert expected in contents, sorted(contents)
    assert b"AWS_SECRET_ACCESS_KEY: <redacted>" in contents["objects/Secret/s3-credentials.yaml"]
    credential = await world.get(r.SECRETS, "mo-credential")
    assert credential is not None
    password = base64.b64decode(credential["data"]["password"])
    everything = b"".join(contents.values())
    for secret in (ACCESS_KEY.encode(), SECRET_KEY.encode(), password):
        assert secret not in everything and base64.b64encode(secret) not in everything, (
            "a secret in the report"
        )
