"""The ``mo-operator`` command: demo, control-plane, run, crds."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import click

from .logging_setup import setup_logging


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="INFO", show_default=True, help="Logging level.")
@click.option("--log-json", is_flag=True, help="Log one JSON object per line.")
def main(log_level: str, log_json: bool) -> None:
    """The MatrixOne operator for Kubernetes."""
    setup_logging(log_level, json_format=log_json)


@main.command("control-plane")
@click.option(
    "--kubeconfig",
    "kubeconfig",
    type=click.Path(dir_okay=False),
    required=True,
    help="Where to write the kubeconfig of the embedded control plane.",
)
@click.option("--port", default=0, show_default=True, help="Port of the API server (0: any free port).")
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Keep the state here, so a restarted control plane keeps its objects.",
)
@click.option("--no-simulator", is_flag=True, help="Serve the API only; do not simulate workloads.")
def control_plane(kubeconfig: str, port: int, data_dir: str | None, no_simulator: bool) -> None:
    """Run the embedded API server and workload simulator until interrupted."""
    from mo_operator.localcluster.controlplane import ControlPlane

    async def run() -> None:
        cp = ControlPlane(port=port, data_dir=data_dir, simulate_workloads=not no_simulator)
        await cp.start(kubeconfig)
        click.echo(f"API server on {cp.server.url}; kubeconfig written to {kubeconfig}")
        click.echo(f"  export KUBECONFIG={Path(kubeconfig).resolve()}")
        try:
            await _wait_for_signal()
        finally:
            await cp.stop()

    asyncio.run(run())


@main.command()
@click.option(
    "--kubeconfig",
    "kubeconfig",
    type=click.Path(dir_okay=False),
    default="mo-demo.kubeconfig",
    show_default=True,
    help="Where to write the kubeconfig of the embedded control plane.",
)
@click.option(
    "--exit-when-ready", is_flag=True, help="Exit 0 once the example is Ready (non-zero on timeout)."
)
@click.option("--timeout", default=300.0, show_default=True, help="Seconds to wait for Ready.")
def demo(kubeconfig: str, exit_when_ready: bool, timeout: float) -> None:
    """Start an embedded control plane with the operator and an example cluster."""
    from .demo import run_demo

    sys.exit(asyncio.run(run_demo(kubeconfig, exit_when_ready=exit_when_ready, timeout=timeout)))


@main.command()
@click.option(
    "--check",
    "check_dir",
    type=click.Path(file_okay=False, exists=True),
    default=None,
    help="Compare the CRD files in this directory with the models; exit 1 when they differ.",
)
@click.option(
    "--write",
    "write_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Write one CRD file per kind into this directory (what deploy/crds holds).",
)
def crds(check_dir: str | None, write_dir: str | None) -> None:
    """Print the CustomResourceDefinitions of every MatrixOne kind."""
    from mo_operator.api.crdgen import crds_yaml, stale_crd_files, write_crds

    if check_dir is not None:
        stale = stale_crd_files(check_dir)
        for name in stale:
            click.echo(f"{name} differs from what the models generate", err=True)
        if stale:
            click.echo(f"regenerate with: mo-operator crds --write {check_dir}", err=True)
            sys.exit(1)
        return
    if write_dir is not None:
        for path in write_crds(write_dir):
            click.echo(str(path))
        return
    click.echo(crds_yaml(), nl=False)


async def _wait_for_signal() -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


if __name__ == "__main__":  # pragma: no cover
    main(prog_name=os.path.basename(sys.argv[0]))
