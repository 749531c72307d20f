"""The ``kubectl-mo`` command (``kubectl mo``): status, restart, pause, resume, report.

kubectl hands a plugin the arguments after its name, global flags included, so
``--kubeconfig``, ``--context`` and ``-n`` are accepted by every subcommand, as
kubectl's own are; ``$KUBECONFIG`` is read too."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from lightkube.config.kubeconfig import SingleConfig
from rich.console import Console
from rich.live import Live

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient

from ..errors import one_line_errors
from ..kubeconfig import load_kubeconfig
from ..logging_setup import setup_logging
from ..options import output_option
from ..plan import plan_options, run_plan
from ..shutdown import Shutdown
from . import actions
from .render import render
from .report import report
from .view import ClusterView, cluster_view

FIELD_MANAGER = "kubectl-mo"
"""Who the plugin's writes belong to: not the operator's manager, whose next apply
would otherwise take back an annotation the plugin set."""
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def connection(command: F) -> F:
    """kubectl's connection flags on a subcommand."""
    for option in reversed(
        (
            click.option(
                "--kubeconfig", default=None, help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config)."
            ),
            click.option(
                "--context", default=None, help="Kubeconfig context (default: its current context)."
            ),
            click.option(
                "-n", "--namespace", default=None, help="Namespace (default: the context's, else default)."
            ),
        )
    ):
        command = option(command)
    return command


class Session:
    """The API connection of one invocation."""

    def __init__(self, kubeconfig: str | None, context: str | None, namespace: str | None) -> None:
        self.config: SingleConfig = load_kubeconfig(kubeconfig, context)
        self.namespace = namespace or self.config.namespace or "default"

    def run(self, work: Callable[[ApiClient], Awaitable[T]]) -> T:
        async def go() -> T:
            client = ApiClient(self.config, field_manager=FIELD_MANAGER, user_agent="kubectl-mo", qps=None)
            try:
                return await work(client)
            finally:
                await client.close()

        return asyncio.run(go())


def _console() -> Console:
    """Colour on a terminal; plain and wide enough not to fold when piped."""
    if sys.stdout.isatty():
        return Console()
    return Console(width=int(os.environ.get("COLUMNS") or 200), no_color=True, highlight=False)


def _emit(data: Any, output: str, text: Callable[[], None]) -> None:
    if output == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        text()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Operate MatrixOne clusters from kubectl (`kubectl mo ...`)."""
    setup_logging("WARNING")


async def _views(client: ApiClient, namespace: str, name: str | None) -> list[ClusterView]:
    if name is not None:
        return [await cluster_view(client, await actions.get_cluster(client, namespace, name))]
    clusters = (await client.list(r.MATRIXONE_CLUSTERS, namespace)).items
    return [await cluster_view(client, c) for c in sorted(clusters, key=lambda c: c["metadata"]["name"])]


def _as_json(views: list[ClusterView], name: str | None) -> Any:
    return views[0].as_json() if name is not None else {"items": [v.as_json() for v in views]}


@main.command()
@click.argument("name", required=False)
@click.option(
    "-w",
    "--watch",
    is_flag=True,
    help="Redraw while it changes (a rollout, a scale, a failover), until Ctrl-C.",
)
@click.option(
    "--interval", default=1.0, show_default=True, hidden=True, help="Seconds between reads with --watch."
)
@output_option
@connection
@one_line_errors
def status(
    name: str | None,
    watch: bool,
    interval: float,
    output: str,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
) -> None:
    """A cluster's sets with their desired and running versions, ready and updated pods,
    the stores as HAKeeper sees them, the conditions that are not fine and the last
    Warning Events (every cluster of the namespace without NAME)."""
    session = Session(kubeconfig, context, namespace)
    console = _console()

    def show(views: list[ClusterView]) -> Any:
        if not views:
            return f"no MatrixOneCluster in namespace {session.namespace}"
        from rich.console import Group

        return Group(*(render(v) for v in views))

    if not watch:
        views = session.run(lambda client: _views(client, session.namespace, name))
        _emit(_as_json(views, name), output, lambda: console.print(show(views)))
        return

    async def watching(client: ApiClient) -> None:
        shutdown = Shutdown().install()
        last: str | None = None
        live = Live(console=console, auto_refresh=False) if console.is_terminal and output == "text" else None
        with live or contextlib.nullcontext():
            while not shutdown.requested.is_set():
                views = await _views(client, session.namespace, name)
                state = json.dumps(_as_json(views, name))
                if live is not None:
                    live.update(show(views), refresh=True)
                elif state != last:  # piped: a snapshot per change, not per tick of its ages
                    if output == "json":
                        click.echo(state)
                    else:
                        console.print(show(views))
                        console.print()
                last = state
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(shutdown.requested.wait(), interval)

    session.run(watching)


@main.command()
@click.argument("name")
@click.option(
    "-c",
    "--component",
    "components",
    multiple=True,
    help="log, tn (or dn), cn (every CN group), cn/<group>, proxy or webui; repeatable (default: all, in "
    "dependency order).",
)
@output_option
@connection
@one_line_errors
def restart(
    name: str,
    components: tuple[str, ...],
    output: str,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
) -> None:
    """Restart a cluster's pods, rolling, as `kubectl rollout restart` does: a new
    kubectl.kubernetes.io/restartedAt in each component's overlay.podAnnotations, which
    the cluster rolls in dependency order, one pod at a time."""
    session = Session(kubeconfig, context, namespace)
    done = session.run(lambda client: actions.restart(client, session.namespace, name, components))
    _emit(
        done,
        output,
        lambda: click.echo(
            f"MatrixOneCluster {done['cluster']}: restarting {', '.join(done['components'])} "
            f"({actions.RESTARTED_AT}={done['restartedAt']}); follow it with `kubectl mo status {name} --watch`"
        ),
    )


def _pause_command(pause: bool) -> Callable[..., None]:
    @output_option
    @connection
    @one_line_errors
    def command(
        name: str, output: str, kubeconfig: str | None, context: str | None, namespace: str | None
    ) -> None:
        session = Session(kubeconfig, context, namespace)
        done = session.run(lambda client: actions.set_paused(client, session.namespace, name, pause))
        verb = "paused" if pause else "resumed"
        _emit(
            done,
            output,
            lambda: click.echo(f"MatrixOneCluster {done['cluster']} {verb}: {', '.join(done['objects'])}"),
        )

    return command


main.command(
    "pause",
    help="Stop the operator reconciling a cluster and its sets (annotation matrixorigin.io/skip-sync=true): "
    "spec changes wait, nothing is repaired, until `kubectl mo resume`.",
)(click.argument("name")(_pause_command(True)))
main.command("resume", help="Let the operator reconcile a paused cluster and its sets again.")(
    click.argument("name")(_pause_command(False))
)


@main.command("report")
@click.argument("name")
@click.option(
    "-f",
    "--file",
    "file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Where to write the tarball (default: mo-report-<namespace>-<name>-<time>.tar.gz here).",
)
@click.option(
    "--operator-namespace",
    default=None,
    help="Where the operator runs (default: looked for in every namespace).",
)
@output_option
@connection
@one_line_errors
def report_command(
    name: str,
    file: str | None,
    operator_namespace: str | None,
    output: str,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
) -> None:
    """A support bundle: the cluster's objects, Events, status and the operator's logs,
    in a tarball, with every Secret value redacted."""
    session = Session(kubeconfig, context, namespace)
    target = Path(file) if file else None
    done = session.run(
        lambda client: report(client, session.config, session.namespace, name, target, operator_namespace)
    )
    lines = [f"wrote {done['file']} ({done['files']} files)"] + [
        f"  not collected: {p}" for p in done["notCollected"]
    ]
    _emit(done, output, lambda: click.echo("\n".join(lines)))


@main.command("plan")
@plan_options
@connection
@one_line_errors
def plan_command(
    name: str,
    output: str,
    matrixone: bool,
    matrixone_timeout: float,
    kubeconfig: str | None,
    context: str | None,
    namespace: str | None,
) -> None:
    """What the operator would do next for cluster NAME and its sets, and why; writes
    nothing (the same as mo-operator plan)."""
    session = Session(kubeconfig, context, namespace)
    run_plan(session.config, session.namespace, name, output, matrixone=matrixone, deadline=matrixone_timeout)


def run() -> None:
    """The console script's entry, named as kubectl users type it."""
    main(prog_name="kubectl mo")


if __name__ == "__main__":  # pragma: no cover
    run()
