"""``mo-operator control-plane --controllers-only``: an embedded API server that looks
like the kubelet-less cluster ``MO_TEST_KUBECONFIG`` expects (kube-controller-manager and
kube-scheduler simulated; no Nodes, kubelets, provisioner or MatrixOne)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from lightkube import KubeConfig
from lightkube.resources.core_v1 import Namespace, Node
from lightkube.resources.storage_v1 import StorageClass

from mo_operator.kube.client.keepalive import lightkube_client


async def test_controllers_only_serves_a_cluster_without_nodes(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mo_operator.cli",
        "control-plane",
        "--kubeconfig",
        str(kubeconfig),
        "--controllers-only",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        line = await asyncio.wait_for(proc.stdout.readline(), 30)
        assert b"kubeconfig written to" in line, line
        client = lightkube_client(KubeConfig.from_file(str(kubeconfig)))
        try:
            assert [n async for n in client.list(Node)] == []
            assert [c async for c in client.list(StorageClass)] == []
            names = {ns.metadata.name async for ns in client.list(Namespace) if ns.metadata}
            assert "localcluster-system" in names, "the simulated controllers run"
        finally:
            await client.close()
    finally:
        proc.send_signal(signal.SIGINT)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0
