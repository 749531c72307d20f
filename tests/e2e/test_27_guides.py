"""The guides' commands run as written: each guide's ``sh`` blocks, in order, in
one bash session (its variables carry over), from the repository's root, with
kubectl pointed at the scenario's namespace and the virtualenv's ``bin`` (kubectl,
``kubectl mo``) first on PATH. A block whose first line says it needs a real
MatrixOne or a real Kubernetes cluster is not run here; every other one is.

On the embedded control plane only: the guides' manifests are the examples',
which ``test_26_examples`` runs on the real one too."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

from .harness import OperatorRunner, World

REPO = Path(__file__).resolve().parents[2]
GUIDES = ("quickstart.md", "upgrading.md", "scaling.md", "backup-restore.md")
BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
NEEDS = re.compile(r"^# needs a real (MatrixOne|Kubernetes cluster)\b")


def blocks(guide: str) -> tuple[list[str], list[str]]:
    """The guide's command blocks: those CI runs, and those marked as needing more."""
    found = BLOCK.findall((REPO / "docs" / guide).read_text())
    return [b for b in found if not NEEDS.match(b)], [b for b in found if NEEDS.match(b)]


def test_every_guide_has_commands_and_marks_what_it_cannot_run_here() -> None:
    for guide in GUIDES:
        runnable, marked = blocks(guide)
        assert runnable, f"{guide} has no command CI runs"
        for block in marked:
            assert NEEDS.match(block)
    assert any("mysql" in b for b in blocks("quickstart.md")[1]), "the SQL connection is marked"


@pytest.mark.parametrize("guide", GUIDES)
async def test_the_guides_commands_run(
    world: World, operator: OperatorRunner, tmp_path: Path, guide: str
) -> None:
    """Each guide on a control plane of its own: each starts from the quick start's
    cluster and changes it its own way."""
    if world.real:
        pytest.skip("the guides run on the embedded control plane (test_26_examples covers the real one)")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(world.kubeconfig.read_text())
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "KUBECACHEDIR": str(tmp_path / "kubecache"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    script = "\n".join(
        ["set -euo pipefail", f"kubectl config set-context --current --namespace={world.namespace}"]
        + blocks(guide)[0]
    )
    proc = await asyncio.create_subprocess_exec(
        "bash",
        "-c",
        script,
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), 100)
    except TimeoutError:
        proc.kill()
        out, _ = await proc.communicate()
        raise AssertionError(f"{guide}: still running after 100s:\n{out.decode()}") from None
    assert proc.returncode == 0, f"{guide} failed ({proc.returncode}):\n{out.decode()}"
