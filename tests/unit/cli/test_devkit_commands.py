"""``mo-operator demo`` and ``control-plane`` come from the dev kit, found through
its entry points; where it is not installed they say in one line how to get it."""

from __future__ import annotations

import logging

import click
import pytest
from click.testing import CliRunner

from mo_operator.cli import devkit
from mo_operator.cli.main import main


def test_the_dev_kits_commands_are_found_through_its_entry_points() -> None:
    for name in devkit.DEV_KIT_COMMANDS:
        command = main.commands[name]
        assert command.callback is not None
        assert command.callback.__module__ == "mo_devkit.cli.commands", name


@pytest.mark.parametrize(
    "args",
    [["demo"], ["demo", "--exit-when-ready", "--timeout", "5"], ["control-plane", "--kubeconfig", "x"]],
)
def test_without_the_dev_kit_its_commands_say_in_one_line_how_to_install_it(
    args: list[str], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(devkit, "entry_points", lambda group: [])
    group = click.Group("mo-operator")
    devkit.add_plugin_commands(group)
    assert sorted(group.commands) == sorted(devkit.DEV_KIT_COMMANDS)
    with caplog.at_level(logging.ERROR, logger="mo_operator.cli"):
        result = CliRunner().invoke(group, args)
    assert result.exit_code == 1
    (record,) = caplog.records
    message = record.getMessage()
    assert "\n" not in message
    assert message.startswith(f"mo-operator {args[0]} comes with the dev kit (mo-devkit), not installed here")
    assert "pip install -c constraints.txt -e ./devkit" in message
