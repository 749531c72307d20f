"""Each component's rendered TOML: the keys upstream sets, and user config over our defaults.

Expected keys and values are upstream's (shared/UPSTREAM.md §3 "Config rendering" and
per component; matrixone-operator pkg/controllers/{logset,dnset,cnset,proxyset,webui}).
"""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import ConfigError, config_map_data
from mo_operator.matrixone.config import cn as cn_config
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.discovery import HAKeeperEndpoint


def _render(
    component: Component,
    spec: dict[str, Any],
    storage: dict[str, Any] | None = None,
    endpoint: HAKeeperEndpoint | None = None,
    name: str = "mo",
) -> dict[str, Any]:
    data = config_map_data(
        component, name=name, namespace="ns", spec=spec, shared_storage=storage, hakeeper=endpoint
    )
    key = "logservice.toml" if component is Component.LOG else "config.toml"
    return tomllib.loads(data[key])


def _fs(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(f for f in doc["fileservice"] if f["name"] == name)


# --- log ---------------------------------------------------------------------------------


def test_log_operator_keys(log_spec: dict[str, Any]) -> None:
    doc = _render(Component.LOG, log_spec)
    assert doc["service-type"] == "LOG"
    assert doc["logservice"]["deployment-id"] == log_config.deployment_id("mo")
    assert doc["logservice"]["logservice-listen-address"] == "0.0.0.0:32001"
    assert doc["hakeeper-client"]["discovery-address"] == "mo-log-discovery.ns.svc:32001"
    assert "gossip-allow-self-as-seed" not in doc["logservice"]
    assert "observability" not in doc
    assert doc["data-dir"] == "/var/lib/matrixone/data"


def test_log_single_replica_and_metrics(log_spec: dict[str, Any]) -> None:
    doc = _render(Component.LOG, {**log_spec, "replicas": 1, "exportToPrometheus": True})
    assert doc["logservice"]["gossip-allow-self-as-seed"] is True
    assert doc["observability"]["enableMetricToProm"] is True


def test_s3_fileservices(log_spec: dict[str, Any]) -> None:
    doc = _render(Component.LOG, log_spec)
    assert [f["name"] for f in doc["fileservice"]] == ["LOCAL", "S3", "ETL"]
    assert _fs(doc, "LOCAL") == {"name": "LOCAL", "backend": "DISK", "data-dir": "/var/lib/matrixone/data"}
    s3 = _fs(doc, "S3")
    assert s3["backend"] == "S3"
    assert s3["s3"] == {
        "endpoint": "s3.us-west-2.amazonaws.com",
        "bucket": "my-bucket",
        "key-prefix": "clusters/mo/data",
    }
    assert s3["cache"] == {"memory-capacity": "1B"}  # the log service runs without cache
    assert _fs(doc, "ETL")["s3"]["key-prefix"] == "clusters/mo/etl"


def test_minio_fileservice_with_certificates(log_spec: dict[str, Any], minio_storage: dict[str, Any]) -> None:
    minio_storage["s3"]["certificateRef"] = {"name": "ca", "files": ["ca.crt"]}
    doc = _render(Component.LOG, {**log_spec, "sharedStorage": minio_storage})
    s3 = _fs(doc, "S3")
    assert s3["backend"] == "MINIO"
    assert s3["s3"]["endpoint"] == "http://minio.minio:9000"
    assert s3["s3"]["bucket"] == "bucket"
    assert s3["s3"]["key-prefix"] == "data"
    assert s3["s3"]["cert-files"] == ["/etc/s3-ssl/ca.crt"]


def test_filesystem_fileservices(log_spec: dict[str, Any], fs_storage: dict[str, Any]) -> None:
    doc = _render(Component.LOG, {**log_spec, "sharedStorage": fs_storage})
    assert _fs(doc, "S3")["backend"] == "DISK"
    assert _fs(doc, "S3")["data-dir"] == "/mnt/nfs/mo"
    assert _fs(doc, "ETL")["backend"] == "DISK-ETL"
    assert "s3" not in _fs(doc, "S3")


def test_restoring_log_uses_the_backup_fileservice(log_spec: dict[str, Any]) -> None:
    spec = {**log_spec, "initialConfig": {**log_spec["initialConfig"], "restoreFrom": "hk_data"}}
    doc = _render(Component.LOG, spec)
    assert [f["name"] for f in doc["fileservice"]] == ["BACKUP"]
    assert _fs(doc, "BACKUP")["s3"]["key-prefix"] == "clusters/mo/"
    boot = tomllib.loads(log_config.render_bootstrap_toml(spec=spec, replicas=plan_bootstrap(3)))
    assert boot["logservice"]["BootstrapConfig"]["restore"] == {"file-path": "BACKUP://hk_data"}


def test_user_config_wins_over_defaults_but_not_over_operator_keys(log_spec: dict[str, Any]) -> None:
    user = """
data-dir = "/data/elsewhere"
service-type = "CN"
[logservice]
logservice-listen-address = "0.0.0.0:1"
uuid = "user-picked"
gossip-probe-interval = "1s"
[[fileservice]]
name = "S3"
[fileservice.cache]
memory-capacity = "2GiB"
[[fileservice]]
name = "EXTRA"
backend = "DISK"
"""
    doc = _render(Component.LOG, {**log_spec, "config": user})
    assert doc["data-dir"] == "/data/elsewhere"
    assert doc["logservice"]["gossip-probe-interval"] == "1s"
    s3 = _fs(doc, "S3")
    assert s3["cache"] == {"memory-capacity": "2GiB"}
    assert s3["s3"]["bucket"] == "my-bucket"  # rest of the default entry kept
    assert [f["name"] for f in doc["fileservice"]] == ["LOCAL", "S3", "ETL", "EXTRA"]
    assert doc["service-type"] == "LOG"
    assert doc["logservice"]["logservice-listen-address"] == "0.0.0.0:32001"
    assert "uuid" not in doc["logservice"]  # start.sh writes it; a second one would be invalid TOML


def test_bootstrap_toml(log_spec: dict[str, Any]) -> None:
    spec = {
        **log_spec,
        "config": "[logservice.BootstrapConfig]\nstandby-enabled = true\nnum-of-log-shards = 9\n",
    }
    boot = tomllib.loads(log_config.render_bootstrap_toml(spec=spec, replicas=plan_bootstrap(3)))
    table = boot["logservice"]["BootstrapConfig"]
    assert table["bootstrap-cluster"] is True
    assert table["num-of-log-shards"] == 1  # ours: the HAKeeper layout is the operator's decision
    assert table["num-of-tn-shards"] == table["num-of-dn-shards"] == 1
    assert table["num-of-log-shard-replicas"] == 3
    assert table["init-hakeeper-members"] == [
        "131072:00000000-0000-0000-0000-000000000000",
        "131073:00000000-0000-0000-0000-000000000001",
        "131074:00000000-0000-0000-0000-000000000002",
    ]
    assert table["standby-enabled"] is True  # the user's own bootstrap settings are kept
    assert "BootstrapConfig" not in _render(Component.LOG, spec)["logservice"]


def test_gossip_toml() -> None:
    data = log_config.gossip_config_map_data(name="mo", namespace="ns", ordinals=[0, 2, 3])
    seeds = tomllib.loads(data["gossip.toml"])["logservice"]["gossip-seed-addresses"]
    assert seeds == [
        "mo-log-0.mo-log-headless.ns.svc:32002",
        "mo-log-2.mo-log-headless.ns.svc:32002",
        "mo-log-3.mo-log-headless.ns.svc:32002",
    ]


# --- TN ------------------------------------------------------------------------------------


def test_tn_keys_under_dn(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    doc = _render(Component.TN, {"image": "mo:1.2.3"}, s3_storage, endpoint)
    assert doc["service-type"] == "DN"
    assert doc["dn"]["listen-address"] == "0.0.0.0:41010"
    assert doc["dn"]["port-base"] == 41010
    assert doc["dn"]["lockservice"]["listen-address"] == "0.0.0.0:6003"
    assert doc["dn"]["LogtailServer"]["listen-address"] == "0.0.0.0:32003"
    assert "tn" not in doc


def test_tn_keys_follow_user_tn_table(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    doc = _render(Component.TN, {"image": "mo:1.2.3", "config": "[tn]\nx = 1\n"}, s3_storage, endpoint)
    assert doc["tn"]["x"] == 1
    assert doc["tn"]["listen-address"] == "0.0.0.0:41010"
    assert "dn" not in doc


def test_hakeeper_addresses_by_version(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    old = _render(Component.TN, {"image": "mo:1.2.3"}, s3_storage, endpoint)["hakeeper-client"]
    assert old == {"service-addresses": list(endpoint.service_addresses)}
    new = _render(Component.TN, {"image": "mo:2.0.0"}, s3_storage, endpoint)["hakeeper-client"]
    assert new == {"discovery-address": "mo-log-discovery.ns.svc:32001"}
    external = HAKeeperEndpoint("hakeeper.other:32001")
    unknown_list = _render(Component.CN, {"image": "mo:1.2.3"}, s3_storage, external)["hakeeper-client"]
    assert unknown_list == {"discovery-address": "hakeeper.other:32001"}
    user = {"image": "mo:2.0.0", "config": '[hakeeper-client]\nservice-addresses = ["x:1"]\n'}
    assert "service-addresses" not in _render(Component.TN, user, s3_storage, endpoint)["hakeeper-client"]


def test_tn_cache_sizes(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    spec = {"image": "mo:1.2.3", "sharedStorageCache": {"memoryCacheSize": "1Gi", "diskCacheSize": "100Gi"}}
    s3 = _fs(_render(Component.TN, spec, s3_storage, endpoint), "S3")
    assert s3["cache"] == {
        "memory-capacity": "1GiB",
        "disk-capacity": "100GiB",
        "disk-path": "/var/lib/matrixone/disk-cache",
    }
    # no sizes given: MatrixOne's own defaults, not a disabled cache
    assert "cache" not in _fs(_render(Component.TN, {"image": "mo:1"}, s3_storage, endpoint), "S3")


# --- CN ------------------------------------------------------------------------------------


def test_cn_keys(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    doc = _render(Component.CN, {"image": "mo:2.1.0"}, s3_storage, endpoint, name="mo-tp")
    assert doc["service-type"] == "CN"
    assert doc["cn"]["role"] == "TP"
    assert doc["cn"]["port-base"] == 6002
    assert doc["cn"]["lockservice"]["listen-address"] == "0.0.0.0:6003"
    assert "init-work-state" not in doc["cn"]
    assert "python-udf-client" not in doc["cn"]


def test_cn_optional_keys(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    spec = {
        "image": "mo:2.1.0",
        "role": "AP",
        "scalingConfig": {"storeDrainEnabled": True},
        "pythonUdfSidecar": {"enabled": True},
    }
    cn = _render(Component.CN, spec, s3_storage, endpoint)["cn"]
    assert cn["role"] == "AP"
    assert cn["init-work-state"] == "Draining"
    assert cn["python-udf-client"]["server-address"] == "localhost:50051"
    spec["pythonUdfSidecar"] = {"enabled": True, "port": 6000}
    assert _render(Component.CN, spec, s3_storage, endpoint)["cn"]["python-udf-client"] == {
        "server-address": "localhost:6000"
    }


def test_proxy_frontend_switch_keeps_user_config(
    s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint
) -> None:
    config = cn_config.with_proxy_frontend("[cn.frontend]\nsaveQueryResult = 'on'\n")
    cn = _render(Component.CN, {"image": "mo:2.1.0", "config": config}, s3_storage, endpoint)["cn"]
    assert cn["frontend"] == {"proxy-enabled": True, "saveQueryResult": "on"}
    assert tomllib.loads(cn_config.with_proxy_frontend(None)) == {"cn": {"frontend": {"proxy-enabled": True}}}


# --- proxy and WebUI ----------------------------------------------------------------------


def test_proxy_keys(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    doc = _render(Component.PROXY, {"image": "mo:1.2.3"}, s3_storage, endpoint)
    assert doc["service-type"] == "PROXY"
    assert doc["proxy"]["listen-address"] == "0.0.0.0:6001"
    # the proxy always uses the discovery address, whatever the version
    assert doc["hakeeper-client"] == {"discovery-address": "mo-log-discovery.ns.svc:32001"}
    assert _fs(doc, "S3")["cache"] == {"memory-capacity": "1B"}


def test_webui_keys() -> None:
    data = config_map_data(
        Component.WEBUI, name="mo", namespace="ns", spec={"config": "[server]\nmode = 'x'\n"}
    )
    assert set(data) == {"config.toml"}
    doc = tomllib.loads(data["config.toml"])
    assert doc["db"] == {"host": "mo-tp-cn", "port": 6001, "username": "dump", "password": "111"}
    assert doc["server"] == {"host": "0.0.0.0", "port": 8007, "tokenEffectiveTime": 2, "mode": "playground"}
    assert doc["log"] == {"level": "info", "format": "console"}


# --- errors ------------------------------------------------------------------------------


def test_dependent_components_need_the_logset(s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    for component in (Component.TN, Component.CN, Component.PROXY):
        with pytest.raises(ConfigError, match="discovery address"):
            config_map_data(component, name="x", namespace="ns", spec={}, shared_storage=s3_storage)
        with pytest.raises(ConfigError, match="sharedStorage"):
            config_map_data(component, name="x", namespace="ns", spec={}, hakeeper=endpoint)
        with pytest.raises(ConfigError):
            config_map_data(
                component,
                name="x",
                namespace="ns",
                spec={},
                shared_storage=s3_storage,
                hakeeper=HAKeeperEndpoint(""),
            )


@pytest.mark.parametrize(
    "storage", [{}, {"s3": {"path": "b"}, "fileSystem": {"path": "/x"}}, {"s3": "bucket"}]
)
def test_shared_storage_must_name_exactly_one_provider(
    log_spec: dict[str, Any], storage: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        config_map_data(Component.LOG, name="mo", namespace="ns", spec={**log_spec, "sharedStorage": storage})


def test_invalid_user_toml_is_a_config_error(log_spec: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match="not valid TOML"):
        config_map_data(Component.LOG, name="mo", namespace="ns", spec={**log_spec, "config": "[broken"})
    with pytest.raises(ConfigError):
        config_map_data(Component.LOG, name="mo", namespace="ns", spec={**log_spec, "config": 42})
    with pytest.raises(ConfigError, match="sharedStorage"):
        config_map_data(Component.LOG, name="mo", namespace="ns", spec={"replicas": 1})


@pytest.mark.parametrize("addr", ["host", "a:b", "h:99999", "$(reboot):1", "x;y:1", "-h:1"])
def test_wait_plugin_addr_is_validated(
    s3_storage: dict[str, Any], endpoint: HAKeeperEndpoint, addr: str
) -> None:
    with pytest.raises(ConfigError, match="waitPluginAddr"):
        config_map_data(
            Component.PROXY,
            name="p",
            namespace="ns",
            spec={"waitPluginAddr": addr},
            shared_storage=s3_storage,
            hakeeper=endpoint,
        )


def test_external_log_service_keeps_the_users_fileservices(endpoint: HAKeeperEndpoint) -> None:
    """A set on an external log service has no LogSet storage to render from: its
    own config lists the fileservices, and we add only the data directory."""
    user = '[[fileservice]]\nname = "S3"\nbackend = "S3"\n'
    doc = _render(Component.CN, {"image": "m:2.0.0", "config": user}, {}, endpoint)
    assert doc["fileservice"] == [{"name": "S3", "backend": "S3"}]
    assert doc["data-dir"] == "/var/lib/matrixone/data"
    bare = _render(Component.TN, {"image": "m:2.0.0"}, {}, endpoint)
    assert "fileservice" not in bare
