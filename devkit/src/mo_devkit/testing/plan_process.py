"""``mo-operator plan`` against a simulated cluster, with MatrixOne reachable: the
product's plan, with the dialer that reaches the simulated MatrixOne.

    python -m mo_devkit.testing.plan_process [--mo-address-book FILE] [plan flags...] NAME

takes every flag of ``mo-operator plan`` and calls the same code; as with
``operator_process``, the only difference is how MatrixOne's morpc servers are
reached: through the address book the simulated MatrixOne writes (``FILE``; by
default the one ``mo-operator control-plane`` writes beside ``--kubeconfig``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from mo_devkit.simulated.cluster import address_book_beside
from mo_devkit.simulated.rpc.addressbook import file_dialer
from mo_operator.cli.errors import one_line_errors
from mo_operator.cli.kubeconfig import load_kubeconfig
from mo_operator.cli.logging_setup import setup_logging
from mo_operator.cli.main import plan_command
from mo_operator.cli.plan import run_plan


@one_line_errors
def _plan(mo_address_book: str | None, **options: Any) -> None:
    setup_logging("WARNING")
    if mo_address_book is None:
        if not options.get("kubeconfig"):
            raise click.UsageError(
                "--mo-address-book or --kubeconfig is needed to find the simulated MatrixOne"
            )
        book = address_book_beside(options["kubeconfig"])
    else:
        book = Path(mo_address_book)
    config = load_kubeconfig(options["kubeconfig"], options["context"])
    run_plan(
        config,
        options["namespace"] or config.namespace or "default",
        options["name"],
        options["output"],
        matrixone=options["matrixone"],
        deadline=options["matrixone_timeout"],
        dialer=file_dialer(book),
    )


command = click.Command(
    "plan_process",
    params=[
        click.Option(
            ["--mo-address-book"],
            type=click.Path(dir_okay=False),
            default=None,
            help="The simulated MatrixOne's address book (default: the one beside --kubeconfig).",
        ),
        *plan_command.params,
    ],
    callback=_plan,
    help="mo-operator plan against a simulated cluster's MatrixOne.",
)

if __name__ == "__main__":
    command(prog_name="python -m mo_devkit.testing.plan_process")
