"""``mo-operator adopt``: take over the sets the Go operator runs with OpenKruise.

The command plans every set of a namespace (``--dry-run`` stops there and
prints the plan), refuses the whole takeover when any set is not safe to
roll (the reasons are printed, nothing is touched), and otherwise releases
the sets one by one in dependency order, each only after the previous one
finished rolling onto our workloads. The operator (``mo-operator run``)
must be running: it is what rolls the released pods, with the same roll as
any other change, so the command only decides when each set may start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import click

from mo_operator.controllers.adoption.preflight import SetPlan
from mo_operator.controllers.adoption.survey import refusals, survey
from mo_operator.controllers.adoption.takeover import TakeoverTimeout, take_over
from mo_operator.kube.client.client import ApiClient

from .kubeconfig import load_kubeconfig

REFUSED = 1
TIMED_OUT = 2


async def adopt(
    client: ApiClient,
    namespace: str,
    *,
    dry_run: bool = False,
    timeout: float = 1800.0,
    echo: Callable[[str], None] = click.echo,
) -> int:
    """Plan, and unless ``dry_run``, carry out the takeover of ``namespace``; the exit code."""
    plans = await survey(client, namespace)
    _print_plan(plans, namespace, echo)
    refused = refusals(plans)
    if refused:
        echo(
            f"refusing to take over namespace {namespace}: {len(refused)} problem(s) above; nothing was changed"
        )
        return REFUSED
    if dry_run:
        return 0
    try:
        await take_over(client, namespace, timeout=timeout, report=echo)
    except TakeoverTimeout as e:
        echo(f"stopped: {e}; run the command again to resume once the cause is fixed")
        return TIMED_OUT
    echo(f"namespace {namespace}: every set runs under this operator")
    return 0


def _print_plan(plans: list[SetPlan], namespace: str, echo: Callable[[str], None]) -> None:
    if not plans:
        echo(f"namespace {namespace}: no LogSet, DNSet, CNSet or ProxySet")
        return
    for plan in plans:
        for line in plan.describe():
            echo(line)


def run_adopt(kubeconfig: str | None, namespace: str, dry_run: bool, timeout: float) -> int:
    config = load_kubeconfig(kubeconfig)

    async def go() -> int:
        client = ApiClient(config, field_manager="mo-operator-adopt")
        try:
            return await adopt(client, namespace, dry_run=dry_run, timeout=timeout)
        finally:
            await client.close()

    return asyncio.run(go())
