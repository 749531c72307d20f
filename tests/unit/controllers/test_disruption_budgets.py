"""The bound of each set's PodDisruptionBudget (controllers/specs/disruption.py): the
log service's keeps a majority of every log shard's replicas, the others let one pod
go at a time, and a CN pool's sets have none."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.api.base import APIModel, parse
from mo_operator.api.cnset import CNSetSpec
from mo_operator.api.common import PodSet
from mo_operator.api.dnset import DNSetSpec
from mo_operator.api.logset import LogSetSpec
from mo_operator.api.proxyset import ProxySetSpec
from mo_operator.api.webui import WebUISpec
from mo_operator.controllers.specs.disruption import budget_spec
from mo_operator.matrixone.component import Component

SELECTOR = {"app": "x"}
MODELS: dict[Component, type[APIModel]] = {
    Component.LOG: LogSetSpec,
    Component.TN: DNSetSpec,
    Component.CN: CNSetSpec,
    Component.PROXY: ProxySetSpec,
    Component.WEBUI: WebUISpec,
}
LOG_REQUIRED = {"volume": {"size": "10Gi"}, "sharedStorage": {"fileSystem": {"path": "/data"}}}


def typed(component: Component, spec: dict[str, Any]) -> PodSet:
    """The component's typed spec of ``spec`` (a log set's with the fields it requires)."""
    required = LOG_REQUIRED if component is Component.LOG else {}
    got = parse(MODELS[component], {**required, **spec})
    assert isinstance(got, PodSet)
    return got


def bound(component: Component, **spec: Any) -> dict[str, Any] | None:
    found = budget_spec(component, typed(component, spec), SELECTOR)
    if found is None:
        return None
    assert found.pop("selector") == {"matchLabels": SELECTOR}
    return found


@pytest.mark.parametrize(
    ("replicas", "shard", "allowed"),
    [(1, None, 0), (3, None, 1), (5, None, 1), (5, 5, 2), (7, 3, 1), (2, None, 0)],
)
def test_a_log_budget_lets_go_what_every_shard_can_lose_and_keep_its_quorum(
    replicas: int, shard: int | None, allowed: int
) -> None:
    """5 stores keep MatrixOne's default of 3 replicas per shard: two stores evicted
    together may hold two replicas of one shard."""
    initial = {"logShardReplicas": shard} if shard else {}
    assert bound(Component.LOG, replicas=replicas, initialConfig=initial) == {"maxUnavailable": allowed}


@pytest.mark.parametrize("component", [Component.TN, Component.CN, Component.PROXY])
def test_other_sets_let_one_pod_go_at_a_time(component: Component) -> None:
    assert bound(component, replicas=4) == {"maxUnavailable": 1}


def test_the_spec_overrides_the_bound_or_switches_the_budget_off() -> None:
    assert bound(Component.LOG, replicas=3, podDisruptionBudget={"maxUnavailable": "50%"}) == {
        "maxUnavailable": "50%"
    }
    assert bound(Component.CN, replicas=3, podDisruptionBudget={"minAvailable": 2}) == {"minAvailable": 2}
    assert bound(Component.TN, replicas=3, podDisruptionBudget={"enabled": False}) is None


def test_a_pooled_cn_set_and_the_webui_have_no_budget() -> None:
    assert bound(Component.CN, replicas=3, podManagementPolicy="Pooling") is None
    assert bound(Component.WEBUI, replicas=3) is None


def test_a_log_set_keeping_stores_itself_counts_its_bound_in_min_available() -> None:
    """The disruption controller reckons ``maxUnavailable`` from each pod's controller's
    scale; a store below a reserved ordinal is the LogSet's, which has none."""
    spec = {"replicas": 3}
    assert budget_spec(Component.LOG, typed(Component.LOG, spec), SELECTOR, detached=True) == {
        "minAvailable": 2,
        "selector": {"matchLabels": SELECTOR},
    }
    given = {
        "replicas": 5,
        "initialConfig": {"logShardReplicas": 5},
        "podDisruptionBudget": {"maxUnavailable": 1},
    }
    assert (
        budget_spec(Component.LOG, typed(Component.LOG, given), SELECTOR, detached=True)["minAvailable"] == 4
    )  # type: ignore[index]
    assert bound(Component.LOG, replicas=3) == {"maxUnavailable": 1}


def test_a_percentage_bound_of_a_log_set_keeping_stores_itself_is_counted_as_the_disruption_controller_would() -> (
    None
):
    """``maxUnavailable: 40%`` of 5 stores lets 2 go (rounded up), so 3 stay; left a
    percentage, the budget would allow no eviction at all."""
    spec = {
        "replicas": 5,
        "initialConfig": {"logShardReplicas": 5},
        "podDisruptionBudget": {"maxUnavailable": "40%"},
    }
    assert budget_spec(Component.LOG, typed(Component.LOG, spec), SELECTOR, detached=True) == {
        "minAvailable": 3,
        "selector": {"matchLabels": SELECTOR},
    }
    assert budget_spec(Component.LOG, typed(Component.LOG, spec), SELECTOR)["maxUnavailable"] == "40%"  # type: ignore[index]
