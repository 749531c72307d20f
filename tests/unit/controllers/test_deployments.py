"""Deployments of the stateless sets and how far their rolls have got
(controllers/specs/deployments.py)."""

from __future__ import annotations

from typing import Any

from mo_operator.api.base import parse
from mo_operator.api.common import RollingUpdateStrategy
from mo_operator.controllers.specs.deployments import deployment, rollout
from mo_operator.controllers.specs.pods import format_time
from mo_operator.controllers.specs.statefulsets import Rollout

Obj = dict[str, Any]
NOW = 1_700_000_000.0
STALL = 120.0
OWNER = {
    "apiVersion": "core.matrixorigin.io/v1alpha1",
    "kind": "ProxySet",
    "metadata": {"name": "mo", "namespace": "ns", "uid": "uid-mo"},
}
SELECTOR = {"matrixorigin.io/instance": "mo"}


def dep(status: Obj, *, replicas: int = 2, generation: int = 3) -> Obj:
    return {
        "kind": "Deployment",
        "metadata": {"name": "mo-proxy", "namespace": "ns", "generation": generation},
        "spec": {"replicas": replicas},
        "status": status,
    }


def settled(replicas: int = 2, generation: int = 3) -> Obj:
    return {
        "observedGeneration": generation,
        "replicas": replicas,
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
    }


def pod(name: str, *, ready: bool = True, since: float = NOW - 1000, deleting: bool = False) -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "creationTimestamp": format_time(NOW - 5000)}
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {
        "metadata": meta,
        "status": {
            "phase": "Running",
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": format_time(since),
                }
            ],
        },
    }


def roll(obj: Obj | None, pods: list[Obj] | None = None) -> Rollout:
    return rollout(obj, pods or [], now=NOW, stall_seconds=STALL)


def test_deployment_surges_one_pod_and_never_goes_below_the_replicas() -> None:
    template = {"metadata": {"labels": SELECTOR}, "spec": {"containers": []}}
    obj = deployment(OWNER, "mo-proxy", {"a": "b"}, SELECTOR, replicas=2, template=template)
    assert obj["apiVersion"] == "apps/v1" and obj["kind"] == "Deployment"
    assert obj["metadata"]["ownerReferences"][0]["uid"] == "uid-mo"
    assert obj["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    assert obj["spec"]["selector"] == {"matchLabels": SELECTOR}
    assert obj["spec"]["template"] == template and obj["spec"]["replicas"] == 2
    assert "minReadySeconds" not in obj["spec"]
    slow = deployment(OWNER, "mo-proxy", {}, SELECTOR, replicas=2, template=template, min_ready_seconds=15)
    assert slow["spec"]["minReadySeconds"] == 15


def test_no_deployment_yet() -> None:
    assert roll(None) == Rollout(0, 0, 0, False)


def test_complete_when_observed_and_every_replica_is_updated_ready_and_available() -> None:
    got = roll(dep(settled()), [pod("mo-proxy-a"), pod("mo-proxy-b")])
    assert got.complete and got.stalled is None
    assert (got.replicas, got.ready, got.updated) == (2, 2, 2)


def test_not_complete_before_the_controller_observed_the_latest_generation() -> None:
    assert not roll(dep(settled(generation=2), generation=3)).complete


def test_not_complete_while_old_pods_remain_or_new_ones_are_not_available() -> None:
    for field, value in (
        ("updatedReplicas", 1),
        ("readyReplicas", 1),
        ("availableReplicas", 1),
        ("replicas", 3),  # a surged pod, or an old pod still there
    ):
        assert not roll(dep({**settled(), field: value})).complete, field


def test_counts_are_capped_at_the_replicas_during_a_surge() -> None:
    got = roll(dep({**settled(), "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3}))
    assert (got.ready, got.updated) == (2, 2) and not got.complete


def test_a_new_pod_stuck_past_the_bound_stalls_the_roll() -> None:
    pods = [pod("mo-proxy-a"), pod("mo-proxy-b"), pod("mo-proxy-c", ready=False, since=NOW - 200)]
    got = roll(dep({**settled(), "replicas": 3, "updatedReplicas": 1}), pods)
    assert got.stalled is not None and got.stalled.startswith("pod mo-proxy-c is not ready since ")
    assert "over 120s: " in got.stalled
    young = [pod("mo-proxy-a"), pod("mo-proxy-c", ready=False, since=NOW - 100)]
    assert roll(dep(settled()), young).recheck_after == 20.0
    gone = [pod("mo-proxy-a"), pod("mo-proxy-c", ready=False, since=NOW - 900, deleting=True)]
    assert roll(dep(settled()), gone).stalled is None


def test_a_sets_update_strategy_overrides_the_roll_bound_by_bound() -> None:
    """The WebUI's ``updateStrategy``: what it gives replaces our default, what it
    leaves out keeps it."""
    template = {"metadata": {"labels": SELECTOR}, "spec": {"containers": []}}

    def rolling(strategy: Obj | None) -> Obj:
        obj = deployment(
            OWNER,
            "mo-webui",
            {},
            SELECTOR,
            replicas=2,
            template=template,
            update_strategy=None if strategy is None else parse(RollingUpdateStrategy, strategy),
        )
        assert obj["spec"]["strategy"]["type"] == "RollingUpdate"
        got: Obj = obj["spec"]["strategy"]["rollingUpdate"]
        return got

    assert rolling(None) == rolling({}) == {"maxSurge": 1, "maxUnavailable": 0}
    assert rolling({"maxSurge": "50%", "maxUnavailable": 1}) == {"maxSurge": "50%", "maxUnavailable": 1}
    assert rolling({"maxUnavailable": "25%"}) == {"maxSurge": 1, "maxUnavailable": "25%"}
