"""``kubectl mo``'s decisions, without a server: which spec paths a restart writes,
what a report redacts, and the help every subcommand offers."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mo_operator.cli.errors import CliError
from mo_operator.cli.plugin.actions import RESTARTED_AT, choose, restart_patch
from mo_operator.cli.plugin.main import main
from mo_operator.cli.plugin.report import REDACTED, redact

SPEC = {
    "logService": {"replicas": 3},
    "tn": {"replicas": 1, "overlay": {"env": []}},
    "cnGroups": [
        {"name": "tp", "replicas": 2, "overlay": {"podAnnotations": {"a": "b"}}},
        {"name": "ap", "replicas": 1},
    ],
    "proxy": {"replicas": 1},
}


def test_a_restart_without_components_restarts_every_one_in_dependency_order() -> None:
    assert [t.component for t in choose(SPEC, [])] == ["log", "tn", "cn/tp", "cn/ap", "proxy"]
    assert [t.component for t in choose(SPEC, ["proxy", "dn"])] == ["tn", "proxy"]
    assert [t.component for t in choose(SPEC, ["cn"])] == ["cn/tp", "cn/ap"]
    assert [t.component for t in choose(SPEC, ["cn/ap"])] == ["cn/ap"]
    with pytest.raises(CliError, match="no component 'webui'"):
        choose(SPEC, ["webui"])


def test_the_restart_stamp_goes_into_each_overlays_pod_annotations_creating_what_is_missing() -> None:
    ops = restart_patch(choose(SPEC, ["log", "tn", "cn"]), "T")
    assert ops == [
        {"op": "add", "path": "/spec/logService/overlay", "value": {"podAnnotations": {RESTARTED_AT: "T"}}},
        {"op": "add", "path": "/spec/tn/overlay/podAnnotations", "value": {RESTARTED_AT: "T"}},
        {"op": "test", "path": "/spec/cnGroups/0/name", "value": "tp"},
        {
            "op": "add",
            "path": "/spec/cnGroups/0/overlay/podAnnotations/kubectl.kubernetes.io~1restartedAt",
            "value": "T",
        },
        {"op": "test", "path": "/spec/cnGroups/1/name", "value": "ap"},
        {"op": "add", "path": "/spec/cnGroups/1/overlay", "value": {"podAnnotations": {RESTARTED_AT: "T"}}},
    ]


def test_a_report_redacts_secret_values_secret_env_and_secret_config_lines() -> None:
    secret = {
        "kind": "Secret",
        "metadata": {
            "name": "s",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": '{"stringData":{"k":"v"}}'},
            "managedFields": [{"manager": "kubectl"}],
        },
        "data": {"AWS_SECRET_ACCESS_KEY": "c2VjcmV0"},
        "stringData": {"password": "p"},
    }
    out = redact(secret, secret=True)
    assert out["data"] == {"AWS_SECRET_ACCESS_KEY": REDACTED} and out["stringData"] == {"password": REDACTED}
    assert out["metadata"]["annotations"] == {"kubectl.kubernetes.io/last-applied-configuration": REDACTED}
    assert "managedFields" not in out["metadata"]
    pod = {
        "spec": {
            "containers": [{"env": [{"name": "DB_PASSWORD", "value": "x"}, {"name": "MODE", "value": "y"}]}]
        }
    }
    env = redact(pod)["spec"]["containers"][0]["env"]
    assert env == [{"name": "DB_PASSWORD", "value": REDACTED}, {"name": "MODE", "value": "y"}]
    config = {"data": {"config.toml": '[fileservice.s3]\nkey-id = "AKIA"\nkey-secret = "s"\nbucket = "b"\n'}}
    text = redact(config)["data"]["config.toml"]
    assert "AKIA" not in text and '"s"' not in text and 'bucket = "b"' in text


@pytest.mark.parametrize("command", ["status", "restart", "pause", "resume", "report"])
def test_every_subcommand_explains_itself_and_takes_kubectls_connection_flags(command: str) -> None:
    result = CliRunner().invoke(main, [command, "--help"])
    assert result.exit_code == 0, result.output
    for flag in ("--kubeconfig", "--context", "--namespace", "--output"):
        assert flag in result.output
