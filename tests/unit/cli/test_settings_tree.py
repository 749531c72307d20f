"""``mo-operator run``'s flags and the operator's settings tree agree, and the
production path stays clear of the simulation."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from mo_operator.cli import run as run_module
from mo_operator.cli.main import main
from mo_operator.settings import OperatorConfig


def parsed(monkeypatch: pytest.MonkeyPatch, *flags: str) -> run_module.RunOptions:
    """What ``mo-operator run FLAGS`` would run with."""
    seen: list[run_module.RunOptions] = []
    monkeypatch.setattr(run_module, "run", lambda options: seen.append(options) or 0)
    result = CliRunner().invoke(main, ["run", *flags], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return seen[0]


def test_run_flags_left_alone_give_the_trees_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    options = parsed(monkeypatch)
    defaults = OperatorConfig()
    config = options.config
    assert config.settings == defaults.settings
    assert config.api == defaults.api and config.workers == defaults.workers
    assert (config.serving, config.webhooks, config.startup) == (
        defaults.serving,
        defaults.webhooks,
        defaults.startup,
    )
    leader = config.leader
    assert leader.enabled, "a production run elects a leader"
    assert (leader.lease_duration, leader.renew_deadline, leader.retry_period) == (15.0, 10.0, 2.0)


def test_run_flags_reach_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ["--namespace", "a", "--namespace", "b", "--no-leader-elect", "--workers", "9"]
    flags += ["--rollout-stall-seconds", "30", "--qps", "7", "--no-failover", "--lease-duration", "40"]
    config = parsed(monkeypatch, *flags).config
    assert config.settings.namespaces == ("a", "b") and config.settings.rollout_stall_seconds == 30.0
    assert not config.settings.failover and config.workers == 9 and config.api.qps == 7.0
    assert not config.leader.enabled and config.leader.lease_duration == 40.0


def test_the_process_flags_reach_the_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    flags = ["--metrics-bind-address", "0", "--health-probe-bind-address", ":9000", "--no-webhooks"]
    flags += ["--webhook-port", "8443", "--webhook-host", "127.0.0.1", "--webhook-service", "hooks"]
    flags += ["--api-poll-seconds", "0.5"]
    config = parsed(monkeypatch, *flags).config
    assert (config.serving.metrics_bind_address, config.serving.health_probe_bind_address) == ("0", ":9000")
    hooks = config.webhooks
    assert (hooks.enabled, hooks.port, hooks.host, hooks.service) == (False, 8443, "127.0.0.1", "hooks")
    assert config.startup.api_poll_seconds == 0.5


def test_the_run_command_does_not_import_the_simulated_matrixone() -> None:
    code = (
        "import sys, mo_operator.cli.main, mo_operator.cli.run; "
        "print(sorted(m for m in sys.modules if m.startswith(('mo_devkit.simulated', "
        "'mo_devkit.localcluster'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
