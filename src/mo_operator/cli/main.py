"""The ``mo-operator`` command: demo, control-plane, run, crds."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import click

from mo_operator.controllers.common.settings import OperatorConfig

from .errors import CliError, address_in_use, one_line_errors
from .logging_setup import LEVELS, known_level, setup_logging
from .shutdown import Shutdown

DEFAULTS = OperatorConfig()
"""The settings tree's defaults, which the ``run`` flags show and start from."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="INFO", show_default=True, help=f"Logging level: {', '.join(LEVELS)}.")
@click.option("--log-json", is_flag=True, help="Log one JSON object per line.")
def main(log_level: str, log_json: bool) -> None:
    """The MatrixOne operator for Kubernetes."""
    configure_logging(log_level, log_json)


@one_line_errors
def configure_logging(level: str, json_format: bool) -> None:
    """Logging as asked; an unknown level is said in one line (in the format asked)."""
    setup_logging(level if known_level(level) else "INFO", json_format=json_format)
    if not known_level(level):
        raise CliError(f"--log-level {level!r} is not a level: use one of {', '.join(LEVELS)}")


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
    (FILE.mo-addresses.json): `python -m mo_operator.testing.operator_process
    --kubeconfig FILE ...` runs the operator against it, reaching MatrixOne over
    morpc as on a real cluster."""

    from mo_operator.matrixone.simulated.cluster import FAST_SIMULATOR, address_book_beside

    async def run() -> None:
        shutdown = Shutdown().install()
        if no_simulator or controllers_only:
            from mo_operator.localcluster.controlplane import ControlPlane

            options = {**(FAST_SIMULATOR if fast else {}), "mode": "controllers"}
            cp = ControlPlane(
                port=port, data_dir=data_dir, simulate_workloads=controllers_only, simulator_options=options
            )
            await cp.start(kubeconfig)
            url, stop = cp.server.url, cp.stop
        else:
            from mo_operator.matrixone.simulated.cluster import SimulatedCluster

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


@main.command("run")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the cluster to manage (default: in-cluster, then $KUBECONFIG, then ~/.kube/config).",
)
@click.option(
    "--namespace", "namespaces", multiple=True, help="Manage only this namespace (repeatable; default: all)."
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=True,
    show_default=True,
    help="Run with leader election, so that replicas never both write.",
)
@click.option(
    "--lease-namespace",
    default=None,
    help="Namespace of the leader election Lease (default: $POD_NAMESPACE, the kubeconfig's, else default).",
)
@click.option(
    "--lease-duration",
    default=DEFAULTS.leader.lease_duration,
    show_default=True,
    help="Seconds a leader's lease lasts.",
)
@click.option(
    "--renew-deadline",
    default=DEFAULTS.leader.renew_deadline,
    show_default=True,
    help="Seconds a leader may fail to renew before it stops writing.",
)
@click.option(
    "--retry-period",
    default=DEFAULTS.leader.retry_period,
    show_default=True,
    help="Seconds between lease renewals and acquisition attempts.",
)
@click.option(
    "--metrics-bind-address",
    default=":8080",
    show_default=True,
    help='Where /metrics is served ("0": nowhere).',
)
@click.option(
    "--health-probe-bind-address",
    default=":8081",
    show_default=True,
    help='Where /healthz and /readyz are served ("0": nowhere).',
)
@click.option(
    "--webhooks/--no-webhooks",
    default=True,
    show_default=True,
    envvar="ENABLE_WEBHOOKS",
    help="Serve the defaulting and validating webhooks.",
)
@click.option("--webhook-port", default=9443, show_default=True, help="Port of the webhook server.")
@click.option(
    "--webhook-host", default="0.0.0.0", show_default=True, help="Address the webhook server listens on."
)
@click.option(
    "--webhook-cert-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Serving certificate (tls.crt, tls.key, ca.crt), e.g. from cert-manager; default: a CA of the operator's own.",
)
@click.option(
    "--webhook-service",
    default="mo-operator-webhook",
    show_default=True,
    help="The webhook Service (in $POD_NAMESPACE): the name the serving certificate is made for.",
)
@click.option(
    "--webhook-url",
    default=None,
    help="Register the webhooks by this https URL (an operator outside the cluster) instead of patching the CA into the installed configurations.",
)
@click.option(
    "--qps",
    default=DEFAULTS.api.qps,
    show_default=True,
    help="Client-side rate limit of API requests per second.",
)
@click.option(
    "--burst", default=DEFAULTS.api.burst, show_default=True, help="Burst of the client-side rate limit."
)
@click.option(
    "--workers", default=DEFAULTS.workers, show_default=True, help="Concurrent reconciles per controller."
)
@click.option(
    "--install-crds",
    is_flag=True,
    help="Apply the CRDs before starting (they are also in deploy/crds and the Helm chart).",
)
@click.option(
    "--rollout-stall-seconds",
    default=DEFAULTS.settings.rollout_stall_seconds,
    show_default=True,
    help="A new pod of a roll not ready after this long halts the roll (and the condition says why).",
)
@click.option(
    "--poll-seconds",
    default=DEFAULTS.settings.poll_seconds,
    show_default=True,
    help="How often a ready set looks at MatrixOne's own state, which sends no events.",
)
@click.option(
    "--busy-poll-seconds",
    default=DEFAULTS.settings.busy_poll_seconds,
    show_default=True,
    hidden=True,
    help="How often a set looks again while it waits on MatrixOne.",
)
@click.option(
    "--api-poll-seconds",
    default=5.0,
    show_default=True,
    hidden=True,
    help="How often a start waiting for the CRDs looks whether they are served (tests).",
)
@click.option(
    "--backup-image",
    default=DEFAULTS.settings.backup_image,
    show_default=True,
    help="Image of the backup and restore tool (mo_br) that BackupJobs and RestoreJobs run.",
)
@click.option(
    "--cleanup-image",
    default=DEFAULTS.settings.cleanup_image,
    show_default=True,
    help="Image (with the aws CLI) of the Job that deletes a released BucketClaim's data "
    "under the Delete policy.",
)
@click.option(
    "--operator-config-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="The Go operator's config directory (its ConfigMap mounted, e.g. /etc/mo-operator-cfg): "
    "defaultArgs become the serviceArgs of sets that set none; featureGates are logged.",
)
@click.option(
    "--failover/--no-failover",
    default=DEFAULTS.settings.failover,
    show_default=True,
    help="Replace lost log stores automatically; off, a lost store is only reported (condition and Event).",
)
@click.option(
    "--adopt-kruise/--no-adopt-kruise",
    default=DEFAULTS.settings.adopt_kruise,
    show_default=True,
    help="Take over every set the Go operator runs with OpenKruise, as `mo-operator adopt` would "
    "(off: only a MatrixOneCluster or set annotated matrixorigin.io/adopt=kruise is taken over).",
)
@click.option(
    "--identity",
    default=None,
    help="Leader election identity (default: $POD_NAME, else host name and a random suffix).",
)
@click.option(
    "--log-level",
    "run_log_level",
    default=None,
    help="Logging level (as the global option, accepted here too).",
)
@click.option(
    "--log-json", "run_log_json", is_flag=True, help="Log one JSON object per line (as the global option)."
)
def run_command(run_log_level: str | None, run_log_json: bool, **options: Any) -> None:
    """Run the operator against a cluster (in-cluster or by kubeconfig)."""
    if run_log_level or run_log_json:
        configure_logging(run_log_level or "INFO", run_log_json)
    _run(options)


@one_line_errors
def _run(options: dict[str, Any]) -> None:
    from .run import RunOptions, run

    sys.exit(run(RunOptions.from_flags(options)))


@main.command("adopt")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the cluster (default: in-cluster, then $KUBECONFIG, then ~/.kube/config).",
)
@click.option("-n", "--namespace", required=True, help="The namespace whose sets to take over.")
@click.option(
    "--dry-run", is_flag=True, help="Print what would happen per set, or why it is refused; change nothing."
)
@click.option(
    "--timeout",
    default=1800.0,
    show_default=True,
    help="Seconds the takeover may wait on one step that makes no progress.",
)
@one_line_errors
def adopt_command(kubeconfig: str | None, namespace: str, dry_run: bool, timeout: float) -> None:
    """Take over sets the Go operator runs with OpenKruise, without downtime (docs/migrating.md)."""
    from .adopt import run_adopt

    sys.exit(run_adopt(kubeconfig, namespace, dry_run, timeout))


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

    from .demo import run_demo

    if not verbose:
        root = logging.getLogger()
        root.setLevel(max(root.level, logging.WARNING))  # the progress table says what INFO lines would

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
@one_line_errors
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


if __name__ == "__main__":  # pragma: no cover
    main(prog_name=os.path.basename(sys.argv[0]))
