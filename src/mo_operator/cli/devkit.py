"""Commands other distributions add to ``mo-operator``: the dev kit's ``demo`` and
``control-plane``.

The operator's package never imports the dev kit (an import-linter contract):
the dev kit registers its commands in the ``mo_operator.commands`` entry point
group, and the command line adds whatever that group holds. Where the dev kit is
not installed (the image, a production install), its commands still exist and
say in one line how to get them, rather than click's "No such command".
"""

from __future__ import annotations

from importlib.metadata import entry_points

import click

from .errors import CliError, one_line_errors

COMMANDS_GROUP = "mo_operator.commands"
DEV_KIT_COMMANDS = ("demo", "control-plane")
INSTALL_DEV_KIT = "pip install -c constraints.txt -e ./devkit (from a clone of the repository)"


def add_plugin_commands(group: click.Group) -> None:
    """Add every command of the entry point group to ``group``, and a stand-in
    that says how to install the dev kit for each of its commands not found."""
    for entry in entry_points(group=COMMANDS_GROUP):
        if entry.name not in group.commands:
            group.add_command(entry.load(), entry.name)
    for name in DEV_KIT_COMMANDS:
        if name not in group.commands:
            group.add_command(_not_installed(name), name)


def _not_installed(name: str) -> click.Command:
    @one_line_errors
    def say_how_to_install(args: tuple[str, ...]) -> None:
        raise CliError(
            f"mo-operator {name} comes with the dev kit (mo-devkit), not installed here: {INSTALL_DEV_KIT}"
        )

    return click.Command(
        name,
        callback=say_how_to_install,
        params=[click.Argument(["args"], nargs=-1, type=click.UNPROCESSED)],
        context_settings={"ignore_unknown_options": True, "allow_extra_args": True},
        help=f"(dev kit, not installed) {INSTALL_DEV_KIT}",
        add_help_option=False,
    )
