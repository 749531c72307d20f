"""``mo-operator plan NAME`` (and ``kubectl mo plan NAME``): what the operator would do
next for a cluster, and why, writing nothing (``controllers/planning.py``).

The text report is for people (rich on a terminal, plain when piped), ``-o json``
carries the same content for programs. MatrixOne is reached as ``mo-operator run``
reaches it (morpc, the system's resolver) unless a caller in Python passes another
dialer, as the dev kit does for its simulated MatrixOne.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

import click
from lightkube.config.kubeconfig import SingleConfig
from rich.console import Console
from rich.markup import escape

from mo_operator.matrixone.rpc.connection import Dialer, open_connection

from .errors import CliError
from .options import output_option

if TYPE_CHECKING:  # the controllers are imported when a plan is made, not for --help
    from mo_operator.controllers.planning import ClusterPlan, ObjectPlan

USER_AGENT = "mo-operator-plan"
"""Who the plan's requests come from (all reads)."""


async def make_plan(
    config: SingleConfig,
    namespace: str,
    name: str,
    *,
    matrixone: bool = True,
    deadline: float = 3.0,
    dialer: Dialer = open_connection,
) -> ClusterPlan:
    from mo_operator.controllers.operator import FIELD_MANAGER
    from mo_operator.controllers.planning import plan_cluster
    from mo_operator.kube.client.client import ApiClient
    from mo_operator.matrixone.rpc.provider import RpcAdminProvider

    client = ApiClient(config, field_manager=FIELD_MANAGER, user_agent=USER_AGENT, qps=None)
    admin = RpcAdminProvider(timeout=deadline, connect_timeout=deadline, dialer=dialer) if matrixone else None
    try:
        found = await plan_cluster(client, namespace, name, matrixone=admin, deadline=deadline)
        if client.writes:  # the plan's hook answers every write: this is a bug
            raise RuntimeError(f"the plan sent writes: {dict(client.writes)}")
        return found
    finally:
        if admin is not None:
            await admin.close()
        await client.close()


def run_plan(
    config: SingleConfig,
    namespace: str,
    name: str,
    output: str,
    *,
    matrixone: bool = True,
    deadline: float = 3.0,
    dialer: Dialer = open_connection,
) -> None:
    """Print the plan; a cluster that does not exist is a ``CliError`` naming it."""
    from mo_operator.controllers.planning import CachesNotSynced, ClusterNotFound

    try:
        found = asyncio.run(
            make_plan(config, namespace, name, matrixone=matrixone, deadline=deadline, dialer=dialer)
        )
    except (ClusterNotFound, CachesNotSynced) as e:
        raise CliError(str(e)) from None
    if output == "json":
        click.echo(json.dumps(found.as_json(), indent=2))
        return
    console = (
        Console()
        if sys.stdout.isatty()
        else Console(width=int(os.environ.get("COLUMNS") or 200), no_color=True, highlight=False)
    )
    for line in report_lines(found):
        console.print(line, soft_wrap=True)


def report_lines(plan: ClusterPlan) -> list[str]:
    """The text report, as rich markup lines."""
    head = f"[bold]MatrixOneCluster {escape(plan.namespace)}/{escape(plan.name)}[/bold]: "
    head += "nothing to do, every object is as its spec asks" if plan.settled else "the operator would act"
    lines = [head, f"MatrixOne: {escape(plan.matrixone)}"]
    if plan.objects and plan.objects[0].steps and len(plan.objects) > 1:
        lines.append(
            "Each set below is planned as it is now: what the cluster's writes change in it comes next."
        )
    for obj in plan.objects:
        lines += ["", *_object_lines(obj)]
    return lines


def _object_lines(obj: ObjectPlan) -> list[str]:
    title = f"[bold]{obj.kind} {escape(obj.name)}[/bold] (generation {obj.generation})"
    if obj.settled:
        return [f"{title}: nothing to do" + (f" ({escape(obj.note)})" if obj.note else "")]
    lines = [title]
    if obj.note:
        lines.append(f"  note: {escape(obj.note)}")
    if obj.error:
        lines.append(f"  [red]the reconcile would fail[/red]: {escape(obj.error)}")
    for what in obj.direct:
        lines.append(f"  would {escape(what)}")
    if obj.steps:
        lines.append(f"  plan, {len(obj.steps)} step(s) in {obj.steps[-1].batch} batch(es):")
        for step in obj.steps:
            lines.append(f"    {step.batch}. {escape(step.what)}")
            lines += [f"         {escape(change)}" for change in step.changes]
    if obj.observed_generation:
        before, after = obj.observed_generation
        lines.append(f"  status.observedGeneration: {before} -> {after}")
    for change in obj.conditions:
        lines.append(f"  condition {change.type}: {_condition(change.before)} -> {_condition(change.after)}")
    if obj.other_status:
        lines.append(f"  status fields changed: {', '.join(obj.other_status)}")
    for type_, reason, message in obj.events:
        lines.append(f"  event {type_} {escape(reason)}: {escape(message)}")
    if obj.requeue_after is not None:
        why = f" ({escape(obj.requeue_reason)})" if obj.requeue_reason else ""
        lines.append(f"  then looks again in {obj.requeue_after:g}s{why}")
    return lines


def _condition(condition: Any) -> str:
    if condition is None:
        return "(none)"
    text = f"{condition['status']} {condition['reason']}"
    return escape(text + (f' "{condition["message"]}"' if condition["message"] else ""))


def plan_options(command: Any) -> Any:
    """The options ``mo-operator plan`` and ``kubectl mo plan`` share."""
    for option in reversed(
        (
            output_option,
            click.option(
                "--matrixone/--no-matrixone",
                default=True,
                show_default=True,
                help="Ask MatrixOne (HAKeeper's state, CN loads) as the operator does; "
                "without an answer the plan assumes none.",
            ),
            click.option(
                "--matrixone-timeout",
                default=3.0,
                show_default=True,
                help="Seconds one question to MatrixOne may take.",
            ),
        )
    ):
        command = option(command)
    return click.argument("name")(command)
