"""What a simulated process reads from its mounted ConfigMaps, and what makes it refuse to run."""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.simulated.configfiles import (
    Bootstrap,
    HAKeeperClient,
    Problem,
    ProcessConfig,
    read_config,
)
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone import identity, layout, names
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .factories import (
    NS,
    OLD_IMAGE,
    component_config_map,
    config_map,
    log_config_maps,
    log_pod,
    set_pod,
)


def _read(component: Component, pod: dict[str, Any], *configmaps: dict[str, Any]) -> ProcessConfig | Problem:
    return read_config(component, pod, NS, Snapshot.of(pods=[pod], configmaps=configmaps))


def test_rendered_log_config_with_its_bootstrap_file() -> None:
    """start.sh appends bootstrap.toml to the log config; the members are its UUIDs."""
    read = _read(Component.LOG, log_pod(0), *log_config_maps(members=3))
    assert isinstance(read, ProcessConfig)
    assert read.bootstrap == Bootstrap(True, tuple(identity.log_store_uuid(i) for i in range(3)))
    assert read.hakeeper is None


def test_log_without_bootstrap_volume_has_no_bootstrap() -> None:
    pod = log_pod(0)
    pod["spec"]["volumes"] = [v for v in pod["spec"]["volumes"] if v["name"] != layout.BOOTSTRAP_VOLUME]
    read = _read(Component.LOG, pod, *log_config_maps())
    assert isinstance(read, ProcessConfig) and read.bootstrap is None


def test_bootstrap_table_in_both_files_is_invalid_toml() -> None:
    """A table defined twice is a TOML error, as it would be in the file start.sh builds."""
    cms = log_config_maps()
    cms[0]["data"][layout.LOG_CONFIG_FILE] += "\n[logservice.BootstrapConfig]\nbootstrap-cluster = false\n"
    read = _read(Component.LOG, log_pod(0), *cms)
    assert isinstance(read, Problem) and read.reason == "InvalidConfig"
    assert "not valid TOML" in read.message


def test_malformed_hakeeper_member_is_invalid() -> None:
    cms = log_config_maps()
    cms[1]["data"][layout.BOOTSTRAP_FILE] = (
        '[logservice.BootstrapConfig]\nbootstrap-cluster = true\ninit-hakeeper-members = ["nonsense"]\n'
    )
    read = _read(Component.LOG, log_pod(0), *cms)
    assert isinstance(read, Problem) and "init-hakeeper-members" in read.message


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("matrixorigin/matrixone:2.0.0", HAKeeperClient("mo-log-discovery.ns.svc:32001", ())),
        (
            OLD_IMAGE,
            HAKeeperClient(
                None,
                tuple(f"mo-log-{i}.mo-log-headless.ns.svc:32001" for i in range(3)),
            ),
        ),
    ],
)
def test_tn_hakeeper_client_by_version(image: str, expected: HAKeeperClient) -> None:
    cm = component_config_map(Component.TN, "mo", spec={"image": image})
    read = _read(Component.TN, set_pod(Component.TN, "mo", 0), cm)
    assert isinstance(read, ProcessConfig) and read.hakeeper == expected


def test_cn_init_work_state_from_store_drain_setting() -> None:
    plain = component_config_map(Component.CN, "c")
    drained = component_config_map(
        Component.CN, "d", spec={"image": "x:2.0.0", "scalingConfig": {"storeDrainEnabled": True}}
    )
    a = _read(Component.CN, set_pod(Component.CN, "c", 0), plain)
    b = _read(Component.CN, set_pod(Component.CN, "d", 0), drained)
    assert isinstance(a, ProcessConfig) and a.init_work_state is WorkState.WORKING
    assert isinstance(b, ProcessConfig) and b.init_work_state is WorkState.DRAINING


def test_proxy_config_is_accepted() -> None:
    cm = component_config_map(Component.PROXY, "mo")
    read = _read(Component.PROXY, set_pod(Component.PROXY, "mo", 0), cm)
    assert isinstance(read, ProcessConfig) and read.hakeeper is not None


def test_missing_config_map_means_the_pod_cannot_start() -> None:
    """The kubelet does not start a pod whose non-optional ConfigMap volume is missing
    (kubernetes.io/docs/concepts/storage/volumes/#configmap)."""
    read = _read(Component.CN, set_pod(Component.CN, "c", 0))
    assert isinstance(read, Problem) and read.reason == "ConfigMapMissing"
    assert names.config_map_base_name(Component.CN, "c") in read.message


def test_optional_missing_config_map_is_fine_but_config_file_is_needed() -> None:
    pod = set_pod(Component.CN, "c", 0)
    pod["spec"]["volumes"][0]["configMap"]["optional"] = True
    read = _read(Component.CN, pod)
    assert isinstance(read, Problem) and read.reason == "InvalidConfig"
    assert "config.toml" in read.message


def test_items_remap_keys_to_paths() -> None:
    """With ``items`` only the listed keys appear, at their paths (ConfigMapVolumeSource)."""
    cm = component_config_map(Component.CN, "c")
    cm["data"] = {"hashed.toml": cm["data"][layout.CONFIG_FILE]}
    pod = set_pod(Component.CN, "c", 0)
    pod["spec"]["volumes"][0]["configMap"]["items"] = [{"key": "hashed.toml", "path": layout.CONFIG_FILE}]
    assert isinstance(_read(Component.CN, pod, cm), ProcessConfig)
    pod["spec"]["volumes"][0]["configMap"]["items"] = [{"key": "hashed.toml", "path": "other.toml"}]
    assert isinstance(_read(Component.CN, pod, cm), Problem)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("this is = = not toml", "not valid TOML"),
        ('service-type = "TN"\n', "service-type"),
        (
            'service-type = "CN"\n[[fileservice]]\nname = "LOCAL"\n[[fileservice]]\nname = "S3"\n',
            "hakeeper-client",
        ),
        ('service-type = "CN"\n[hakeeper-client]\ndiscovery-address = "a:1"\n', "fileservice"),
        (
            'service-type = "CN"\n[hakeeper-client]\ndiscovery-address = "a:1"\n'
            '[[fileservice]]\nname = "LOCAL"\n[[fileservice]]\nname = "SHARED"\n'
            '[cn]\ninit-work-state = "Sleeping"\n',
            "init-work-state",
        ),
    ],
)
def test_invalid_or_incomplete_cn_configs(text: str, needle: str) -> None:
    read = _read(
        Component.CN, set_pod(Component.CN, "c", 0), config_map("c-cn-config", {"config.toml": text})
    )
    assert isinstance(read, Problem) and read.reason == "InvalidConfig"
    assert needle in read.message


def test_log_needs_a_deployment_id() -> None:
    cms = log_config_maps()
    text = cms[0]["data"][layout.LOG_CONFIG_FILE]
    cms[0]["data"][layout.LOG_CONFIG_FILE] = "\n".join(
        line for line in text.splitlines() if not line.startswith("deployment-id")
    )
    read = _read(Component.LOG, log_pod(0), *cms)
    assert isinstance(read, Problem) and "deployment-id" in read.message


def test_tn_accepts_both_service_type_spellings() -> None:
    """MatrixOne accepts ``DN`` as an alias of ``TN``."""
    cm = component_config_map(Component.TN, "mo")
    cm["data"][layout.CONFIG_FILE] = cm["data"][layout.CONFIG_FILE].replace(
        'service-type = "DN"', 'service-type = "TN"'
    )
    assert 'service-type = "TN"' in cm["data"][layout.CONFIG_FILE]
    assert isinstance(_read(Component.TN, set_pod(Component.TN, "mo", 0), cm), ProcessConfig)


def test_a_console_reads_its_config_from_a_secret_but_matrixone_does_not() -> None:
    """The dashboard's config holds a credential, so it is mounted from a Secret;
    a MatrixOne process with only a Secret for config has no config file."""
    console = set_pod(Component.WEBUI, "mo", 0)
    console["spec"]["volumes"] = [
        {"name": layout.CONFIG_VOLUME, "secret": {"secretName": "mo-webui-config-x"}}
    ]
    assert isinstance(_read(Component.WEBUI, console), ProcessConfig)
    cn = set_pod(Component.CN, "c", 0)
    cn["spec"]["volumes"] = [{"name": layout.CONFIG_VOLUME, "secret": {"secretName": "c-cn-config-x"}}]
    read = _read(Component.CN, cn)
    assert isinstance(read, Problem) and read.reason == "InvalidConfig"


def _suffixed(pod: dict[str, Any], suffix: str) -> dict[str, Any]:
    """``pod`` as the Go operator shapes it: ``$CONFIG_SUFFIX`` from its config-suffix annotation."""
    pod["metadata"]["annotations"] = {"matrixorigin.io/config-suffix": suffix}
    pod["spec"]["containers"][0]["env"].append(
        {
            "name": "CONFIG_SUFFIX",
            "valueFrom": {"fieldRef": {"fieldPath": "metadata.annotations['matrixorigin.io/config-suffix']"}},
        }
    )
    return pod


def test_the_go_operators_pod_reads_the_key_its_config_suffix_names() -> None:
    """Upstream's start.sh reads ``config.toml-$CONFIG_SUFFIX``: the plain key is not read."""
    cm = component_config_map(
        Component.CN, "c", spec={"image": "x:2.0.0", "scalingConfig": {"storeDrainEnabled": True}}
    )
    text = cm["data"].pop(layout.CONFIG_FILE)
    cm["data"]["config.toml-abc1234"] = text
    cm["data"][layout.CONFIG_FILE] = "not = [valid"
    read = _read(Component.CN, _suffixed(set_pod(Component.CN, "c", 0), "abc1234"), cm)
    assert isinstance(read, ProcessConfig) and read.init_work_state is WorkState.DRAINING


def test_a_suffix_without_its_key_means_no_config() -> None:
    cm = component_config_map(Component.CN, "c")
    read = _read(Component.CN, _suffixed(set_pod(Component.CN, "c", 0), "0000000"), cm)
    assert isinstance(read, Problem) and read.reason == "InvalidConfig"
    assert "config.toml-0000000" in read.message
