"""Deterministic rendering, the content hash in ConfigMap names, and the TOML helpers."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mo_operator.matrixone import layout
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import HASH_LENGTH, config_map_data, content_hash, hashed_name
from mo_operator.matrixone.config.tomlconfig import deep_merge, delete_in, dumps, get_in, set_in
from mo_operator.matrixone.discovery import HAKeeperEndpoint


def _all_components(
    log_spec: dict[str, Any], endpoint: HAKeeperEndpoint
) -> list[tuple[Component, dict[str, Any], dict[str, Any] | None]]:
    storage = log_spec["sharedStorage"]
    return [
        (Component.LOG, log_spec, None),
        (Component.TN, {"image": "mo:1.2.3", "config": "[dn]\na = 1\n"}, storage),
        (Component.CN, {"image": "mo:2.0.0", "config": "[cn.frontend]\nb = 2\n"}, storage),
        (Component.PROXY, {"image": "mo:2.0.0", "waitPluginAddr": "plugin:8080"}, storage),
        (Component.WEBUI, {}, None),
    ]


def _data(
    component: Component, spec: dict[str, Any], storage: Any, endpoint: HAKeeperEndpoint
) -> dict[str, str]:
    return config_map_data(
        component, name="mo", namespace="ns", spec=spec, shared_storage=storage, hakeeper=endpoint
    )


def test_rendering_is_deterministic_and_ignores_input_key_order(
    log_spec: dict[str, Any], endpoint: HAKeeperEndpoint
) -> None:
    for component, spec, storage in _all_components(log_spec, endpoint):
        first = _data(component, spec, storage, endpoint)
        again = _data(component, dict(reversed(list(spec.items()))), storage, endpoint)
        assert first == again
        assert hashed_name("base", first) == hashed_name("base", again)


def test_every_toml_parses_back(log_spec: dict[str, Any], endpoint: HAKeeperEndpoint) -> None:
    for component, spec, storage in _all_components(log_spec, endpoint):
        data = _data(component, spec, storage, endpoint)
        toml_key = layout.config_file(component)
        assert isinstance(tomllib.loads(data[toml_key]), dict)
        assert set(data) == ({toml_key} if component is Component.WEBUI else {toml_key, "start.sh"})


def test_sections_the_start_script_fills_have_headers(
    log_spec: dict[str, Any], endpoint: HAKeeperEndpoint
) -> None:
    """start.sh inserts instance keys after these exact header lines; they must exist."""
    expected = {
        Component.LOG: ["[logservice]"],
        Component.TN: ["[dn]", "[dn.lockservice]", "[dn.LogtailServer]"],
        Component.CN: ["[cn]", "[cn.lockservice]"],
        Component.PROXY: ["[proxy]"],
    }
    for component, spec, storage in _all_components(log_spec, endpoint):
        if component is Component.WEBUI:
            continue
        data = _data(component, spec, storage, endpoint)
        lines = data[layout.config_file(component)].splitlines()
        for header in expected[component]:
            assert header in lines, f"{component.name}: {header}"
            pattern = "^\\" + header[:-1].replace(".", "\\.") + "\\]$"
            assert pattern in data["start.sh"]


def test_config_change_changes_the_hash(log_spec: dict[str, Any]) -> None:
    base = config_map_data(Component.LOG, name="mo", namespace="ns", spec=log_spec)
    changed = config_map_data(
        Component.LOG, name="mo", namespace="ns", spec={**log_spec, "config": "[logservice]\nx = 1\n"}
    )
    version_only = config_map_data(
        Component.LOG, name="mo", namespace="ns", spec={**log_spec, "image": "matrixorigin/matrixone:1.2.4"}
    )
    assert hashed_name("mo-log-config", base) != hashed_name("mo-log-config", changed)
    # a patch release renders the same config: the ConfigMap is reused, no extra roll
    assert base == version_only
    assert hashed_name("mo-log-config", base) == hashed_name("mo-log-config", version_only)


def test_hashed_name_shape() -> None:
    name = hashed_name("mo-tp-cn-config", {"config.toml": "a = 1\n"})
    assert re.fullmatch(rf"mo-tp-cn-config-[0-9a-f]{{{HASH_LENGTH}}}", name)


_data_strategy = st.dictionaries(
    st.sampled_from(["config.toml", "start.sh", "x"]), st.text(max_size=20), max_size=3
)


@given(_data_strategy, _data_strategy)
def test_hash_changes_iff_content_changes(a: dict[str, str], b: dict[str, str]) -> None:
    assert (content_hash(a) == content_hash(b)) == (a == b)


@given(_data_strategy)
def test_hash_ignores_key_order(a: dict[str, str]) -> None:
    assert content_hash(a) == content_hash(dict(reversed(list(a.items()))))


def test_deep_merge_does_not_modify_inputs() -> None:
    base = {"a": {"b": 1}, "fs": [{"name": "S3", "x": 1}]}
    override = {"a": {"c": 2}, "fs": [{"name": "S3", "y": 2}]}
    merged = deep_merge(base, override)
    assert merged == {"a": {"b": 1, "c": 2}, "fs": [{"name": "S3", "x": 1, "y": 2}]}
    assert base == {"a": {"b": 1}, "fs": [{"name": "S3", "x": 1}]}
    assert override == {"a": {"c": 2}, "fs": [{"name": "S3", "y": 2}]}


def test_deep_merge_replaces_plain_lists_and_mismatched_types() -> None:
    assert deep_merge({"l": [1, 2]}, {"l": [3]}) == {"l": [3]}
    assert deep_merge({"a": {"b": 1}}, {"a": 5}) == {"a": 5}
    assert deep_merge({"a": 5}, {"a": {"b": 1}}) == {"a": {"b": 1}}


def test_path_helpers() -> None:
    doc: dict[str, Any] = {"a": 1}
    set_in(doc, ["a", "b", "c"], 2)  # replaces the scalar on the way
    assert doc == {"a": {"b": {"c": 2}}}
    assert get_in(doc, ["a", "b", "c"]) == 2
    assert get_in(doc, ["a", "x", "c"]) is None
    delete_in(doc, ["a", "b", "c"])
    delete_in(doc, ["nope", "x"])
    assert doc == {"a": {"b": {}}}
    with pytest.raises(ValueError):
        set_in(doc, [], 1)


def test_dumps_sorts_keys_at_every_level() -> None:
    text = dumps({"z": 1, "a": {"y": 2, "b": 3}, "l": [{"k2": 1, "k1": 2}]})
    assert text == dumps({"a": {"b": 3, "y": 2}, "l": [{"k1": 2, "k2": 1}], "z": 1})
    assert text.index("z = ") < text.index("[a]")
    assert text.index("k1") < text.index("k2")
