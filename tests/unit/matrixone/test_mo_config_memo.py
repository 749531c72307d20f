"""Rendered configs are remembered by the canonical JSON of their inputs: equal inputs
are rendered once, any difference renders again, callers get their own dict, and the
memory is bounded."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import pytest

from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import ConfigError, config_map_data
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.config.memo import copy_data, key_of, memoized
from mo_operator.matrixone.discovery import HAKeeperEndpoint

STORAGE = {"s3": {"path": "bucket/mo"}}
ENDPOINT = HAKeeperEndpoint("mo-log-discovery.ns.svc:32001")


def counted(size: int = 8) -> tuple[Any, list[tuple[Any, ...]]]:
    calls: list[tuple[Any, ...]] = []

    @memoized(copy_data, size=size)
    def render(*args: Any, **kwargs: Any) -> dict[str, str]:
        calls.append((args, kwargs))
        return {"config.toml": repr((args, sorted(kwargs.items())))}

    return render, calls


def test_equal_inputs_render_once_and_each_caller_gets_its_own_dict() -> None:
    render, calls = counted()
    first = render(spec={"a": 1, "b": [1, 2]})
    first["config.toml"] = "edited by the caller"
    second = render(spec={"b": [1, 2], "a": 1})  # key order does not matter
    third = render(spec=freeze({"a": 1, "b": [1, 2]}))  # nor whether it comes frozen from a cache
    assert len(calls) == 1
    assert second == third != first
    assert second is not third


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ({"x": 1}, {"x": True}),
        ({"x": 1}, {"x": 1.0}),
        ({"x": 1}, {"x": "1"}),
        ({"x": [1]}, {"x": {"0": 1}}),
        ({"x": None}, {}),
        ({"x": {"y": 1}}, {"x": {"y": 2}}),
    ],
)
def test_any_difference_renders_again(a: dict[str, Any], b: dict[str, Any]) -> None:
    render, calls = counted()
    assert render(spec=a) != render(spec=b)
    assert len(calls) == 2


class Colour(enum.Enum):
    RED = 1
    BLUE = 2


@dataclass(frozen=True)
class Point:
    x: int
    y: tuple[str, ...] = ()


def test_enums_dataclasses_and_ranges_are_keys() -> None:
    render, calls = counted()
    render(Colour.RED, p=Point(1, ("a",)), r=range(3))
    render(Colour.RED, p=Point(1, ("a",)), r=range(3))
    assert len(calls) == 1
    render(Colour.BLUE, p=Point(1, ("a",)), r=range(3))
    render(Colour.RED, p=Point(2, ("a",)), r=range(3))
    render(Colour.RED, p=Point(1, ("b",)), r=range(3))
    render(Colour.RED, p=Point(1, ("a",)), r=range(4))
    assert len(calls) == 5
    assert key_of((Colour.RED,), {}) != key_of((Colour.BLUE,), {})


def test_arguments_without_a_canonical_form_are_rendered_every_time() -> None:
    render, calls = counted()
    assert key_of((), {"ordinals": iter([0, 1])}) is None
    render(ordinals=iter([0, 1]))
    render(ordinals=iter([0, 1]))
    assert len(calls) == 2


def test_the_memory_is_bounded_least_recently_used_out_first() -> None:
    render, calls = counted(size=2)
    render(n=1)
    render(n=2)
    render(n=1)  # remembered, and now the most recent
    render(n=3)  # forgets n=2
    assert len(calls) == 3
    assert render.cache_len() == 2  # type: ignore[attr-defined]
    render(n=1)
    assert len(calls) == 3
    render(n=2)
    assert len(calls) == 4


def test_failures_are_not_remembered() -> None:
    attempts: list[int] = []

    @memoized(copy_data)
    def render(ok: bool) -> dict[str, str]:
        attempts.append(1)
        if not ok:
            raise ConfigError("bad")
        return {}

    for _ in range(2):
        with pytest.raises(ConfigError):
            render(False)
    assert len(attempts) == 2


def test_the_renderers_answer_as_before_and_remember() -> None:
    spec = {"replicas": 3, "image": "matrixorigin/matrixone:2.0.0", "sharedStorage": STORAGE}
    log_config.config_map_data.cache_clear()  # type: ignore[attr-defined]
    first = log_config.config_map_data(name="mo", namespace="ns", spec=spec)
    assert log_config.config_map_data(name="mo", namespace="ns", spec=dict(spec)) == first
    assert log_config.config_map_data.cache_len() == 1  # type: ignore[attr-defined]
    other = log_config.config_map_data(name="mo", namespace="other", spec=spec)
    assert other != first and "other" in other["logservice.toml"]
    single = log_config.config_map_data(name="mo", namespace="ns", spec={**spec, "replicas": 1})
    assert "gossip-allow-self-as-seed = true" in single["logservice.toml"]
    assert "gossip-allow-self-as-seed" not in first["logservice.toml"]

    members = plan_bootstrap(3)
    boot = log_config.bootstrap_config_map_data(spec=spec, replicas=members)
    assert log_config.bootstrap_config_map_data(spec=spec, replicas=list(members)) == boot
    assert log_config.bootstrap_config_map_data(spec=spec, replicas=members[:1]) != boot
    gossip = log_config.gossip_config_map_data(name="mo", namespace="ns", ordinals=range(3))
    assert log_config.gossip_config_map_data(name="mo", namespace="ns", ordinals=range(2)) != gossip

    cn = config_map_data(
        Component.CN, name="tp", namespace="ns", spec={}, shared_storage=STORAGE, hakeeper=ENDPOINT
    )
    moved = config_map_data(
        Component.CN,
        name="tp",
        namespace="ns",
        spec={},
        shared_storage=STORAGE,
        hakeeper=HAKeeperEndpoint("elsewhere.ns.svc:32001"),
    )
    assert "elsewhere" in moved["config.toml"] and "elsewhere" not in cn["config.toml"]
    with pytest.raises(ConfigError):
        config_map_data(Component.CN, name="tp", namespace="ns", spec={}, shared_storage=STORAGE)
