"""Which of the Go operator's ConfigMaps the takeover collects."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.adoption.steps import go_operator_config_maps, mounted_config_maps
from mo_operator.controllers.specs.configmaps import CONFIG_HASH_LABEL
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]


def _cm(name: str, **extra_labels: str) -> Obj:
    return {"metadata": {"name": name, "labels": dict(extra_labels)}}


def _pod(config_map: str) -> Obj:
    return {"spec": {"volumes": [{"name": "config", "configMap": {"name": config_map}}]}}


def test_only_the_go_operators_unmounted_config_maps_go() -> None:
    config_maps = [
        _cm("mo-log-config"),  # operator 1.3 naming
        _cm("mo-log-config-1a2b3c4"),  # before 1.3
        _cm("mo-log-config-505f307bb3", **{CONFIG_HASH_LABEL: "mo-log-config"}),  # ours
        _cm("mo-log-gossip"),  # taken over in place
        _cm("mo-log-bootstrap"),
        _cm("mo-log-config-7777777"),  # the Go operator's, still mounted
    ]
    pods = [_pod("mo-log-config-505f307bb3"), _pod("mo-log-config-7777777")]
    collected = go_operator_config_maps(Component.LOG, "mo", config_maps, mounted_config_maps(pods))
    assert [c["metadata"]["name"] for c in collected] == ["mo-log-config", "mo-log-config-1a2b3c4"]


def test_another_sets_config_maps_are_not_touched() -> None:
    config_maps = [_cm("mo-tp-cn-config"), _cm("mo-tp2-cn-config")]
    collected = go_operator_config_maps(Component.CN, "mo-tp", config_maps, frozenset())
    assert [c["metadata"]["name"] for c in collected] == ["mo-tp-cn-config"]
