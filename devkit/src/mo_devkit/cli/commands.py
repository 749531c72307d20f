"""The dev kit's ``mo-operator`` commands, ``demo`` and ``control-plane``.

The operator's command line finds them through the ``mo_operator.commands``
entry point group this distribution registers, so they are ``mo-operator demo``
and ``mo-operator control-plane`` wherever the dev kit is installed, and the
operator's own package never imports the dev kit. This module imports click
alone: the control plane and the demo are loaded when a command runs, not
each time ``mo-operator`` starts.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import click

from mo_operator.cli.errors import address_in_use, one_line_errors
from mo_operator.cli.shutdown import Shutdown


@click.command("control-plane")
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
@click.option(
    "--no-simulator", is_flag=True, help="Serve the API only; do not simulate workloads or MatrixOne."
)
@click.option(
    "--controllers-only",
    is_flag=True,
    help="Simulate only kube-controller-manager and kube-scheduler (no Nodes, kubelets or MatrixOne):"
    " a cluster like the kubelet-less one MO_TEST_KUBECONFIG expects.",
)
@click.option(
    "--fast",
    is_flag=True,
    hidden=True,
    help="Fast simulator timings and room for thousands of pods (benchmarks).",
)
@one_line_errors
def control_plane(
    kubeconfig: str, port: int, data_dir: str | None, no_simulator: bool, controllers_only: bool, fast: bool
) -> None:
    """Run the embedded API server, workload simulator and simulated MatrixOne until interrupted.

    The simulated MatrixOne's address book is written beside the kubeconfig
    (FILE.mo-addresses.json): `python -m mo_devkit.testing.operator_process
    --kubeconfig FILE ...` runs the operator against it, reaching MatrixOne over
    morpc as on a real cluster."""

    from mo_devkit.simulated.cluster import FAST_SIMULATOR, address_book_beside

    async def run() -> None:
        shutdown = Shutdown().install()
        if no_simulator or controllers_only:
            from mo_devkit.localcluster.controlplane import ControlPlane

            options = {**(FAST_SIMULATOR if fast else {}), "mode": "controllers"}
            cp = ControlPlane(
                port=port, data_dir=data_dir, simulate_workloads=controllers_only, simulator_options=options
            )
            await cp.start(kubeconfig)
            url, stop = cp.server.url, cp.stop
        else:
            from mo_devkit.simulated.cluster import SimulatedCluster

            book = address_book_beside(kubeconfig)
            cluster = SimulatedCluster(
                data_dir=data_dir,
                port=port,
                simulator_options=FAST_SIMULATOR if fast else None,
                address_book=book,
            )
            await cluster.start(kubeconfig)
            assert cluster.control_plane is not None
            url, stop = cluster.control_plane.server.url, cluster.stop
            click.echo(f"Simulated MatrixOne's address book written to {book}")
        click.echo(f"API server on {url}; kubeconfig written to {kubeconfig}")
        click.echo(f"  export KUBECONFIG={Path(kubeconfig).resolve()}")
        try:
            await shutdown.requested.wait()
        finally:
            await stop()

    try:
        asyncio.run(run())
    except OSError as e:
        raise address_in_use(e, {port: "--port"}) or e from None


@click.command("demo")
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
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Show the operator's and the control plane's logs (at --log-level) above the progress table.",
)
@one_line_errors
def demo(kubeconfig: str, exit_when_ready: bool, timeout: float, verbose: bool) -> None:
    """Start an embedded control plane with the operator and an example cluster."""
    import logging

    from mo_devkit.cli.demo import run_demo

    if not verbose:
        root = logging.getLogger()
        root.setLevel(max(root.level, logging.WARNING))  # the progress table says what INFO lines would

    sys.exit(asyncio.run(run_demo(kubeconfig, exit_when_ready=exit_when_ready, timeout=timeout)))
