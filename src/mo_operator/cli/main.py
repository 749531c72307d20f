"""The ``mo-operator`` command: run, adopt, crds, and the dev kit's demo and
control-plane where it is installed (``devkit``)."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

import mo_operator
from mo_operator.settings import OperatorConfig

from .devkit import add_plugin_commands
from .errors import CliError, one_line_errors
from .logging_setup import LEVELS, known_level, setup_logging
from .plan import plan_options

DEFAULTS = OperatorConfig()
"""The settings tree's defaults, which the ``run`` flags show and start from."""


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--log-level", default="INFO", show_default=True, help=f"Logging level: {', '.join(LEVELS)}.")
@click.option("--log-json", is_flag=True, help="Log one JSON object per line.")
@click.version_option(
    mo_operator.__version__, "--version", prog_name="mo-operator", message="%(prog)s %(version)s"
)
def main(log_level: str, log_json: bool) -> None:
    """The MatrixOne operator for Kubernetes."""
    configure_logging(log_level, log_json)


@one_line_errors
def configure_logging(level: str, json_format: bool) -> None:
    """Logging as asked; an unknown level is said in one line (in the format asked)."""
    setup_logging(level if known_level(level) else "INFO", json_format=json_format)
    if not known_level(level):
        raise CliError(f"--log-level {level!r} is not a level: use one of {', '.join(LEVELS)}")


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
    default=DEFAULTS.serving.metrics_bind_address,
    show_default=True,
    help='Where /metrics is served ("0": nowhere).',
)
@click.option(
    "--health-probe-bind-address",
    default=DEFAULTS.serving.health_probe_bind_address,
    show_default=True,
    help='Where /healthz and /readyz are served ("0": nowhere).',
)
@click.option(
    "--webhooks/--no-webhooks",
    default=DEFAULTS.webhooks.enabled,
    show_default=True,
    envvar="ENABLE_WEBHOOKS",
    help="Serve the defaulting and validating webhooks.",
)
@click.option(
    "--webhook-port", default=DEFAULTS.webhooks.port, show_default=True, help="Port of the webhook server."
)
@click.option(
    "--webhook-host",
    default=DEFAULTS.webhooks.host,
    show_default=True,
    help="Address the webhook server listens on.",
)
@click.option(
    "--webhook-cert-dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Serving certificate (tls.crt, tls.key, ca.crt), e.g. from cert-manager; default: a CA of the operator's own.",
)
@click.option(
    "--webhook-service",
    default=DEFAULTS.webhooks.service,
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
    default=DEFAULTS.startup.api_poll_seconds,
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
    "defaultArgs become the serviceArgs of sets that set none; featureGates are logged. "
    "Without it, the Go operator's chart's defaultArgs: -debug-http=:6060 for every component.",
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


@main.command("plan")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Kubeconfig of the cluster (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).",
)
@click.option("--context", default=None, help="Kubeconfig context (default: its current context).")
@click.option("-n", "--namespace", default=None, help="Namespace (default: the context's, else default).")
@plan_options
@one_line_errors
def plan_command(
    name: str,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
    output: str,
    matrixone: bool,
    matrixone_timeout: float,
) -> None:
    """What the operator would do next for cluster NAME and its sets, and why; writes nothing."""
    from .kubeconfig import load_kubeconfig
    from .plan import run_plan

    config = load_kubeconfig(kubeconfig, context)
    run_plan(
        config,
        namespace or config.namespace or "default",
        name,
        output,
        matrixone=matrixone,
        deadline=matrixone_timeout,
    )


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


add_plugin_commands(main)

if __name__ == "__main__":  # pragma: no cover
    main(prog_name=os.path.basename(sys.argv[0]))
