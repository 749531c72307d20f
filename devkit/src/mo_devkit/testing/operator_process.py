"""The operator as a process of its own against a simulated cluster: the product's
``mo-operator run``, with the dialer that reaches the simulated MatrixOne.

    python -m mo_devkit.testing.operator_process [--mo-address-book FILE] [run flags...]

takes every flag of ``mo-operator run`` and calls the same run code; the only
difference is how it reaches MatrixOne's morpc servers: through the address book
the simulated MatrixOne writes (``FILE``; by default the one ``mo-operator
control-plane`` writes beside its kubeconfig, ``--kubeconfig``). The product's
``run`` has no flag for it: production always dials with the system's resolver.
Scenarios that kill the operator start it this way.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from mo_devkit.simulated.cluster import address_book_beside
from mo_devkit.simulated.rpc.addressbook import file_dialer
from mo_operator.cli.logging_setup import setup_logging
from mo_operator.cli.main import run_command
from mo_operator.cli.run import RunOptions, run

ADDRESS_BOOK = click.Option(
    ["--mo-address-book"],
    type=click.Path(dir_okay=False),
    default=None,
    help="The simulated MatrixOne's address book (default: the one beside --kubeconfig).",
)


def address_book(given: str | None, kubeconfig: str | None) -> Path:
    """The address book a process reaches the simulated MatrixOne through: the one
    given, else the one ``mo-operator control-plane`` writes beside the kubeconfig."""
    if given is not None:
        return Path(given)
    if not kubeconfig:
        raise click.UsageError("--mo-address-book or --kubeconfig is needed to find the simulated MatrixOne")
    return address_book_beside(kubeconfig)


def _run(mo_address_book: str | None, run_log_level: str | None, run_log_json: bool, **options: Any) -> None:
    setup_logging(run_log_level or "INFO", json_format=run_log_json)
    book = address_book(mo_address_book, options.get("kubeconfig"))
    sys.exit(run(RunOptions.from_flags(options), dialer=file_dialer(book)))


command = click.Command(
    "operator_process",
    params=[ADDRESS_BOOK, *run_command.params],
    callback=_run,
    help="Run the operator (mo-operator run) against a simulated cluster's MatrixOne.",
)

if __name__ == "__main__":
    command(prog_name="python -m mo_devkit.testing.operator_process")
