"""Object names, labels and discovery addresses, checked against the names upstream gives.

Expected values are upstream's (matrixone-operator pkg/controllers/*/…go, see
shared/UPSTREAM.md §3), spelled out literally: a migrated cluster must keep them.
"""

from __future__ import annotations

import pytest

from mo_operator.matrixone import discovery, labels, names
from mo_operator.matrixone.component import Component


@pytest.mark.parametrize(
    ("component", "set_name", "workload", "headless"),
    [
        (Component.LOG, "mo", "mo-log", "mo-log-headless"),
        (Component.TN, "mo", "mo-dn", "mo-dn-headless"),
        (Component.CN, "mo-tp", "mo-tp-cn", "mo-tp-cn-headless"),
        (Component.PROXY, "mo", "mo-proxy", "mo-proxy-headless"),
    ],
)
def test_workload_and_headless_service_names(
    component: Component, set_name: str, workload: str, headless: str
) -> None:
    assert names.workload_name(component, set_name) == workload
    assert names.headless_service_name(component, set_name) == headless


def test_log_service_names() -> None:
    assert names.discovery_service_name("mo") == "mo-log-discovery"
    assert names.metric_service_name(Component.LOG, "mo") == "mo-log-metric"
    assert names.metric_service_name(Component.TN, "mo") == "mo-dn-metric"
    assert names.log_bootstrap_config_map_name("mo") == "mo-log-bootstrap"
    assert names.log_gossip_config_map_name("mo") == "mo-log-gossip"
    assert names.config_map_base_name(Component.LOG, "mo") == "mo-log-config"
    assert names.config_map_base_name(Component.CN, "mo-tp") == "mo-tp-cn-config"


def test_client_services_and_status_hosts() -> None:
    assert names.client_service_name(Component.CN, "mo-tp") == "mo-tp-cn"
    assert names.client_service_name(Component.PROXY, "mo") == "mo-proxy"
    assert names.client_service_name(Component.WEBUI, "mo") == "mo-webui"
    assert names.service_host(Component.CN, "mo-tp", "prod") == "mo-tp-cn.prod"
    assert names.service_host(Component.PROXY, "mo", "prod") == "mo-proxy.prod"
    assert names.webui_cn_host("mo") == "mo-tp-cn"


def test_cluster_child_names() -> None:
    assert names.cluster_child_name("mo") == "mo"
    assert names.cn_group_cnset_name("mo", "tp") == "mo-tp"
    assert names.cn_group_cnset_name("mo", "batch") == "mo-batch"
    assert names.credential_secret_name("mo") == "mo-credential"
    assert names.metric_credential_secret_name("mo") == "mo-metric"


def test_pod_names_and_ordinals() -> None:
    assert names.pod_name(Component.LOG, "mo", 0) == "mo-log-0"
    assert names.pod_name(Component.TN, "mo", 12) == "mo-dn-12"
    assert names.pod_ordinal("mo-log-3") == 3
    assert names.pod_ordinal("mo-tp-cn-10") == 10
    assert names.pod_ordinal("mo-log") is None
    assert names.pod_ordinal("mo-log-03") is None
    with pytest.raises(ValueError):
        names.pod_name(Component.LOG, "mo", -1)


def test_fqdn_and_discovery_address() -> None:
    assert names.pod_fqdn("mo-log-0", "mo-log-headless", "ns") == "mo-log-0.mo-log-headless.ns.svc"
    assert names.discovery_host("mo", "ns") == "mo-log-discovery.ns.svc"
    assert names.discovery_address("mo", "ns") == "mo-log-discovery.ns.svc:32001"


def test_store_address_lists() -> None:
    assert discovery.gossip_seed_addresses("mo", "ns", [0, 2]) == [
        "mo-log-0.mo-log-headless.ns.svc:32002",
        "mo-log-2.mo-log-headless.ns.svc:32002",
    ]
    assert discovery.hakeeper_service_addresses("mo", "ns", [1]) == ["mo-log-1.mo-log-headless.ns.svc:32001"]
    endpoint = discovery.logset_endpoint("mo", "ns", [0])
    assert endpoint.discovery_address == "mo-log-discovery.ns.svc:32001"
    assert endpoint.service_addresses == ("mo-log-0.mo-log-headless.ns.svc:32001",)
    assert discovery.logset_endpoint("mo", "ns").service_addresses == ()


def test_sub_resource_labels_use_upstream_keys_and_kinds() -> None:
    assert labels.sub_resource_labels(Component.LOG, "mo", "ns") == {
        "matrixorigin.io/namespace": "ns",
        "matrixorigin.io/instance": "mo",
        "matrixorigin.io/component": "LogSet",
    }
    assert labels.sub_resource_labels(Component.TN, "mo", "ns")["matrixorigin.io/component"] == "DNSet"
    assert labels.cluster_labels("mo") == {"matrixorigin.io/cluster": "mo"}
    assert labels.finalizer("cnset") == "matrixorigin.io/cnset"


def test_annotation_keys_match_upstream() -> None:
    assert labels.CONFIG_SUFFIX == "matrixorigin.io/config-suffix"
    assert labels.SEMANTIC_VERSION == "matrixorigin.io/semantic-version"
    assert labels.OPERATOR_VERSION == "matrixorigin.io/operator-version"
    assert labels.CN_STATE == "matrixorigin.io/cn-state"
    assert labels.STORE_DRAINING_START == "matrixorigin.io/store-draining-start"
    assert labels.LOGSET_BOOTSTRAP == "logset.matrixorigin.io/bootstrap"
    assert labels.CN_LABEL == "matrixone.cloud/cn-label"


def test_component_from_kind() -> None:
    assert Component.from_kind("CNSet") is Component.CN
    assert Component.from_kind("DNSet") is Component.TN
    assert Component.from_kind("TNSet") is Component.TN
    assert Component.TN.service_type == "DN"
    with pytest.raises(ValueError):
        Component.from_kind("Pod")
