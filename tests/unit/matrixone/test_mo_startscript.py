"""The rendered start.sh, run for real under /bin/sh with a stub ``mo-service``.

Each script runs as the container would run it (downward-API env, config files at
their mount paths, relocated under a temp dir); the stub prints the final config it was
given, which must parse as TOML and carry the instance's UUID and addresses, with the
UUID equal to what identity.py computes for that pod.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mo_operator.matrixone import identity, layout
from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.discovery import HAKeeperEndpoint

pytestmark = pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("sh", "sed", "sha256sum", "od", "awk", "mktemp")),
    reason="needs a POSIX shell and coreutils",
)

_STUB = """#!/bin/sh
echo "ARGS:$*"
cat "$2"
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _run(
    tmp_path: Path,
    component: Component,
    data: dict[str, str],
    env: dict[str, str],
    extra: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, Any]]:
    """Lay the ConfigMap(s) out under tmp_path, run start.sh, return (args, final config)."""
    root = tmp_path / "root"
    files = {f"{layout.config_dir(component)}/{k}": v for k, v in data.items()}
    files.update(extra or {})
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _executable(bin_dir / "nslookup", "#!/bin/sh\nexit 0\n")
    _executable(root / "mo-service", _STUB)
    script = data["start.sh"].replace('"/etc/', f'"{root}/etc/')
    script = script.replace(f"MO_BIN={layout.MO_SERVICE_BINARY}\n", f"MO_BIN={root}/mo-service\n")
    script = script.replace(f"cp {layout.MO_SERVICE_BINARY} ", f"cp {root}/mo-service ")
    (root / "start.sh").write_text(script)
    full_env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", **env}
    result = subprocess.run(
        ["sh", str(root / "start.sh"), "-debug-http=:6060"],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    _, marker, output = result.stdout.partition("ARGS:")
    assert marker, result.stdout
    args, _, config = output.partition("\n")
    return args.split(), tomllib.loads(config)


def _log_files(spec: dict[str, Any]) -> dict[str, str]:
    return {
        f"{layout.BOOTSTRAP_PATH}/{layout.BOOTSTRAP_FILE}": log_config.render_bootstrap_toml(
            spec=spec, replicas=plan_bootstrap(3)
        ),
        f"{layout.GOSSIP_PATH}/{layout.GOSSIP_FILE}": log_config.render_gossip_toml(
            name="mo", namespace="ns", ordinals=[0, 1, 2]
        ),
    }


_LOG_ENV = {
    "POD_NAME": "mo-log-2",
    "HEADLESS_SERVICE_NAME": "mo-log-headless",
    "NAMESPACE": "ns",
    "POD_IP": "10.0.0.7",
}


def test_log_script_before_2_0(tmp_path: Path, log_spec: dict[str, Any]) -> None:
    data = config_map_data(Component.LOG, name="mo", namespace="ns", spec=log_spec)
    args, conf = _run(tmp_path, Component.LOG, data, _LOG_ENV, _log_files(log_spec))
    ls = conf["logservice"]
    assert args[:2] == ["-cfg", args[1]] and args[2:] == ["-debug-http=:6060"]
    assert ls["uuid"] == identity.log_store_uuid(2)
    assert ls["raft-address"] == "mo-log-2.mo-log-headless.ns.svc:32000"
    assert ls["logservice-address"] == "mo-log-2.mo-log-headless.ns.svc:32001"
    assert ls["gossip-address"] == "10.0.0.7:32002"
    assert ls["gossip-address-v2"] == "mo-log-2.mo-log-headless.ns.svc:32002"
    assert len(ls["gossip-seed-addresses"]) == 3
    assert ls["BootstrapConfig"]["num-of-log-shard-replicas"] == 3
    assert ls["deployment-id"] == log_config.deployment_id("mo")


def test_log_script_from_2_0_uses_host_and_ports(tmp_path: Path, log_spec: dict[str, Any]) -> None:
    spec = {**log_spec, "image": "matrixorigin/matrixone:2.0.1", "memoryFsSize": "1Gi"}
    data = config_map_data(Component.LOG, name="mo", namespace="ns", spec=spec)
    env = {**_LOG_ENV, "MO_BIN_PATH": str(tmp_path / "tmpfs")}
    _, conf = _run(tmp_path, Component.LOG, data, env, _log_files(spec))
    ls = conf["logservice"]
    assert ls["service-host"] == "mo-log-2.mo-log-headless.ns.svc"
    assert (ls["raft-port"], ls["logservice-port"], ls["gossip-port"]) == (32000, 32001, 32002)
    assert "raft-address" not in ls
    assert (tmp_path / "tmpfs" / "mo-service").exists()  # ran from the memory fs copy


def test_hostname_uuid_switches_log_to_dns_identity(tmp_path: Path, log_spec: dict[str, Any]) -> None:
    data = config_map_data(Component.LOG, name="mo", namespace="ns", spec=log_spec)
    _, conf = _run(tmp_path, Component.LOG, data, {**_LOG_ENV, "HOSTNAME_UUID": "y"}, _log_files(log_spec))
    assert conf["logservice"]["uuid"] == identity.dns_store_uuid("mo-log-2.mo-log-headless.ns.svc")


@pytest.mark.parametrize("section", ["dn", "tn"])
def test_tn_script(
    tmp_path: Path, s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint, section: str
) -> None:
    spec = {"image": "mo:1.2.3", "config": f"[{section}]\nx = 1\n"}
    data = config_map_data(
        Component.TN, name="mo", namespace="ns", spec=spec, shared_storage=s3_storage, hakeeper=endpoint
    )
    env = {
        "POD_NAME": "mo-dn-0",
        "HEADLESS_SERVICE_NAME": "mo-dn-headless",
        "NAMESPACE": "ns",
        "POD_IP": "10.0.0.8",
    }
    _, conf = _run(tmp_path, Component.TN, data, env)
    tn = conf[section]
    addr = "mo-dn-0.mo-dn-headless.ns.svc"
    assert tn["uuid"] == identity.tn_store_uuid(0)
    assert tn["service-address"] == f"{addr}:41010"
    assert tn["service-host"] == addr
    assert tn["lockservice"] == {"listen-address": "0.0.0.0:6003", "service-address": f"{addr}:6003"}
    assert tn["LogtailServer"] == {"listen-address": "0.0.0.0:32003", "service-address": f"{addr}:32003"}
    assert tn["x"] == 1


def test_cn_script(tmp_path: Path, s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    spec = {"image": "mo:2.0.0", "config": "[cn]\nuuid = 'overridden-by-script'\n"}
    data = config_map_data(
        Component.CN, name="mo-tp", namespace="ns", spec=spec, shared_storage=s3_storage, hakeeper=endpoint
    )
    env = {
        "POD_NAME": "mo-tp-cn-3",
        "HEADLESS_SERVICE_NAME": "mo-tp-cn-headless",
        "NAMESPACE": "ns",
        "POD_IP": "10.0.0.9",
    }
    _, conf = _run(tmp_path, Component.CN, data, env)
    cn = conf["cn"]
    assert cn["uuid"] == identity.cn_store_uuid("mo-tp-cn-3", "mo-tp", "ns")
    assert cn["listen-address"] == "0.0.0.0:6002"
    assert cn["service-address"] == "10.0.0.9:6002"
    assert cn["sql-address"] == "10.0.0.9:6001"
    assert cn["service-host"] == "10.0.0.9"
    assert cn["lockservice"]["service-address"] == "10.0.0.9:6003"


def test_proxy_script(tmp_path: Path, s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    data = config_map_data(
        Component.PROXY, name="mo", namespace="ns", spec={}, shared_storage=s3_storage, hakeeper=endpoint
    )
    _, conf = _run(
        tmp_path,
        Component.PROXY,
        data,
        {"POD_NAME": "mo-proxy-abcde", "NAMESPACE": "ns", "POD_IP": "1.2.3.4"},
    )
    assert conf["proxy"]["uuid"] == identity.proxy_uuid("mo-proxy-abcde", "ns")
    assert conf["proxy"]["listen-address"] == "0.0.0.0:6001"


def test_proxy_script_waits_for_the_plugin(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    spec = {"waitPluginAddr": "plugin.ns.svc:8080"}
    data = config_map_data(
        Component.PROXY, name="mo", namespace="ns", spec=spec, shared_storage=s3_storage, hakeeper=endpoint
    )
    assert "</dev/tcp/plugin.ns.svc/8080" in data["start.sh"]
