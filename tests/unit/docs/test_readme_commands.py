"""The README's command table names every command the distribution installs."""

from __future__ import annotations

import re
from pathlib import Path

from mo_operator.cli.main import main
from mo_operator.cli.plugin.main import main as plugin

README = Path(__file__).parents[3] / "README.md"


def _table_commands() -> set[str]:
    text = README.read_text()
    table = text[text.index("| command | what it does |") :].split("\n\n", 1)[0]
    return {m.group(1) for m in re.finditer(r"^\| `((?:kubectl mo|mo-operator) [\w-]+)", table, re.M)}


def test_every_mo_operator_command_is_in_the_readme_table() -> None:
    listed = _table_commands()
    missing = {f"mo-operator {name}" for name in main.commands} - listed
    assert missing == set(), f"README's command table lacks {sorted(missing)}"


def test_every_kubectl_mo_subcommand_is_in_the_readme_table() -> None:
    listed = _table_commands()
    missing = {f"kubectl mo {name}" for name in plugin.commands} - listed
    assert missing == set(), f"README's command table lacks {sorted(missing)}"
