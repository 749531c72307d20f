"""The Go operator's config directory (its ConfigMap mounted at
/etc/mo-operator-cfg, one file per key, each file a YAML value) is read as
upstream reads it: defaultArgs by component, featureGates logged with what they
change here, the other keys named as not read, and a broken value refused with
the key in the message."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from mo_operator.cli.operator_config import (
    DEFAULT_ARGS,
    OperatorConfigError,
    UpstreamOperatorConfig,
    load_operator_config,
)

UPSTREAM_DEFAULT_ARGS = """logService:
- -debug-http=:6060
dn:
- -debug-http=:6060
cn:
- -debug-http=:6060
proxy:
- -debug-http=:6060"""


def _mounted(tmp_path: Path, files: dict[str, str]) -> Path:
    """A directory laid out as the kubelet mounts a ConfigMap: the keys are symlinks
    into a timestamped directory reached through ``..data``."""
    stamp = tmp_path / "..2026_11_25_15_00_00.1"
    stamp.mkdir()
    (tmp_path / "..data").symlink_to(stamp.name)
    for key, text in files.items():
        (stamp / key).write_text(text)
        (tmp_path / key).symlink_to(f"..data/{key}")
    return tmp_path


def test_upstreams_chart_config_is_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    directory = _mounted(
        tmp_path,
        {
            "defaultArgs": UPSTREAM_DEFAULT_ARGS,
            "featureGates": "s3Reclaim: true\nproxySupport: true\ncnPool: false\nwarpDrive: true",
            "onlyWatchReleasedNS": "false",
        },
    )
    config = load_operator_config(directory)
    assert config.default_args == {c: ("-debug-http=:6060",) for c in ("logService", "dn", "cn", "proxy")}
    assert config.feature_gates == {
        "s3Reclaim": True,
        "proxySupport": True,
        "cnPool": False,
        "warpDrive": True,
    }
    assert "feature gate s3Reclaim=true: every controller and rule runs here" in caplog.text
    assert "so it changes nothing" in caplog.text
    assert "feature gate warpDrive=true: not a gate of the Go operator, ignored" in caplog.text
    assert "operator config key onlyWatchReleasedNS: not read: use --namespace" in caplog.text


def test_an_empty_directory_means_no_defaults(tmp_path: Path) -> None:
    config = load_operator_config(tmp_path)
    assert config.default_args == {} and config.feature_gates == {}


def test_no_directory_gives_the_go_operators_chart_defaults() -> None:
    """What upstream's chart installs (values.yaml: -debug-http=:6060 for each
    component), so a set created without serviceArgs gets the same from both
    operators however ours was installed."""
    config = UpstreamOperatorConfig()
    assert config.default_args == {c: ("-debug-http=:6060",) for c in ("logService", "dn", "cn", "proxy")}
    assert config.default_args == DEFAULT_ARGS and config.feature_gates == {}


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"defaultArgs": "tn: [-x]"}, "defaultArgs.tn: unknown component, expected one of logService, dn, cn, proxy"),
        ({"defaultArgs": "cn: -debug-http=:6060"}, "defaultArgs.cn: must be a list of strings"),
        ({"defaultArgs": "[-x]"}, "defaultArgs: must be a mapping"),
        ({"featureGates": "cnPool: yes please"}, "featureGates: must be a mapping of gate name to true or false"),
        ({"defaultArgs": "cn: [unclosed"}, "defaultArgs: cannot be read as YAML"),
    ],
)  # fmt: skip
def test_a_broken_value_is_refused_naming_the_key(
    tmp_path: Path, files: dict[str, str], message: str
) -> None:
    with pytest.raises(OperatorConfigError, match=message.replace("[", r"\[")):
        load_operator_config(_mounted(tmp_path, files))


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OperatorConfigError, match="not a directory"):
        load_operator_config(tmp_path / "absent")
