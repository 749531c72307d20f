"""``mo-operator plan`` against a simulated cluster, with MatrixOne reachable: the
product's plan, with the dialer that reaches the simulated MatrixOne.

    python -m mo_devkit.testing.plan_process [--mo-address-book FILE] [plan flags...] NAME

takes every flag of ``mo-operator plan`` and calls the same code; as with
``operator_process``, the only difference is how MatrixOne's morpc servers are
reached: through the address book the simulated MatrixOne writes (``FILE``; by
default the one ``mo-operator control-plane`` writes beside ``--kubeconfig``).
"""

from __future__ import annotations

from typing import Any

import click

from mo_devkit.simulated.rpc.addressbook import file_dialer
from mo_devkit.testing.operator_process import ADDRESS_BOOK, address_book
from mo_operator.cli.errors import one_line_errors
from mo_operator.cli.kubeconfig import load_kubeconfig
from mo_operator.cli.logging_setup import setup_logging
from mo_operator.cli.main import plan_command
from mo_operator.cli.plan import run_plan


@one_line_errors
def _plan(mo_address_book: str | None, **options: Any) -> None:
    setup_logging("WARNING")
    book = address_book(mo_address_book, options.get("kubeconfig"))
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
    params=[ADDRESS_BOOK, *plan_command.params],
    callback=_plan,
    help="mo-operator plan against a simulated cluster's MatrixOne.",
)

if __name__ == "__main__":
    command(prog_name="python -m mo_devkit.testing.plan_process")
