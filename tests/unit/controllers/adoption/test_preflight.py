"""The dry run's decisions: which takeovers are safe now, and the reason when not."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.adoption.preflight import plan_set, quorum
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]
KRUISE_STS = {
    "apiVersion": "apps.kruise.io/v1beta1",
    "kind": "StatefulSet",
    "name": "mo-log",
    "controller": True,
}


def _set(ready: bool = True, **spec: Any) -> Obj:
    status = "True" if ready else "False"
    return {
        "metadata": {"name": "mo", "namespace": "ns"},
        "spec": {"replicas": 3, **spec},
        "status": {
            "conditions": [{"type": "Ready", "status": status, "reason": "X", "message": "stores down"}]
        },
    }


def _pod(name: str, ready: bool = True, owner: Obj | None = KRUISE_STS) -> Obj:
    return {
        "metadata": {"name": name, "ownerReferences": [owner] if owner else []},
        "spec": {"volumes": [{"name": "mo-data", "persistentVolumeClaim": {"claimName": f"mo-data-{name}"}}]},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _workload(replicas: int = 3, **spec: Any) -> Obj:
    return {
        "metadata": {"name": "mo-log"},
        "spec": {"replicas": replicas, **spec},
        "status": {"currentRevision": "mo-log-1", "updateRevision": "mo-log-1"},
    }


PODS = [_pod("mo-log-0"), _pod("mo-log-1"), _pod("mo-log-2")]


def test_a_healthy_log_set_is_planned_pod_by_pod_with_its_claims() -> None:
    plan = plan_set(Component.LOG, _set(), _workload(), PODS)
    assert plan.needed and plan.refusals == ()
    text = "\n".join(plan.describe())
    assert "apps.kruise.io/v1beta1 StatefulSet mo-log" in text
    assert "propagationPolicy=Orphan" in text
    assert "mo-data-mo-log-0, mo-data-mo-log-1, mo-data-mo-log-2" in text
    assert "at least 2 log stores stay up" in text


def test_a_set_without_a_kruise_workload_needs_nothing() -> None:
    plan = plan_set(Component.LOG, _set(ready=False), None, PODS)
    assert not plan.needed and plan.refusals == ()
    assert plan.describe() == ["LogSet mo: no Kruise workload; nothing to take over"]


def test_a_log_set_failed_over_from_ordinal_0_keeps_its_stores_at_their_ordinals() -> None:
    # upstream's failover retired store 0; Kruise made store 3: the pods are 1, 2, 3
    pods = [_pod("mo-log-1"), _pod("mo-log-2"), _pod("mo-log-3")]
    plan = plan_set(Component.LOG, _set(), _workload(reserveOrdinals=[0]), pods)
    assert plan.refusals == ()
    text = "\n".join(plan.describe())
    assert "spec.ordinals.start 1: ordinals [0] stay reserved" in text, text
    assert "mo-data-mo-log-1, mo-data-mo-log-2, mo-data-mo-log-3" in text


def test_a_log_set_failed_over_from_ordinal_1_keeps_store_0_itself_and_the_rest_in_its_statefulset() -> None:
    # store 1 retired: the live stores 0, 2, 3 are not consecutive
    pods = [_pod("mo-log-0"), _pod("mo-log-2"), _pod("mo-log-3")]
    plan = plan_set(Component.LOG, _set(), _workload(reserveOrdinals=[1]), pods)
    assert plan.refusals == ()
    text = "\n".join(plan.describe())
    assert "spec.ordinals.start 2: ordinals [1] stay reserved" in text, text
    assert "adopts mo-log-2, mo-log-3; the LogSet itself keeps mo-log-0 (below a reserved ordinal)" in text, (
        text
    )
    assert "the LogSet's last" in text, text


def test_a_hole_whose_pods_are_not_where_kruise_runs_them_is_refused() -> None:
    pods = [_pod("mo-log-0"), _pod("mo-log-1"), _pod("mo-log-3")]
    plan = plan_set(Component.LOG, _set(), _workload(reserveOrdinals=[1]), pods)
    assert plan.refusals == (
        "spec.reserveOrdinals [1]: the pods' ordinals [0, 1, 3] are not the 3 lowest unreserved ones [0, 2, 3]",
    ), plan.refusals


def test_reserved_ordinals_whose_pods_are_elsewhere_or_outside_a_log_set_are_refused() -> None:
    plan = plan_set(Component.LOG, _set(), _workload(reserveOrdinals=[0]), PODS)
    assert any("pods' ordinals [0, 1, 2]" in r for r in plan.refusals), plan.refusals
    tn = plan_set(Component.TN, _set(replicas=1), _workload(1, reserveOrdinals=[0]), [_pod("mo-dn-1")])
    assert any("only a LogSet's reserved ordinals" in r for r in tn.refusals), tn.refusals


def test_a_set_not_ready_or_a_pod_not_ready_is_refused() -> None:
    pods = [PODS[0], PODS[1], _pod("mo-log-2", ready=False)]
    plan = plan_set(Component.LOG, _set(ready=False), _workload(), pods)
    reasons = " | ".join(plan.refusals)
    assert "the set is not Ready (stores down)" in reasons
    assert "pods not ready: mo-log-2" in reasons
    assert "log quorum at risk: 2 of 3 stores ready" in reasons


def test_a_single_log_store_cannot_roll_without_losing_quorum() -> None:
    plan = plan_set(Component.LOG, _set(replicas=1), _workload(replicas=1), [PODS[0]])
    assert any("log quorum at risk" in r for r in plan.refusals)
    assert quorum(1) == 1 and quorum(3) == 2 and quorum(5) == 3


def test_a_tn_set_of_one_is_not_held_to_a_log_quorum() -> None:
    pod = _pod("mo-dn-0")
    plan = plan_set(Component.TN, _set(replicas=1), _workload(replicas=1), [pod])
    assert plan.refusals == ()


def test_cloneset_features_we_would_act_on_differently_are_refused() -> None:
    pods = [_pod("mo-tp-cn-abcde"), _pod("mo-tp-cn-fghij")]
    workload = _workload(
        replicas=2, scaleStrategy={"podsToDelete": ["mo-tp-cn-abcde"]}, updateStrategy={"paused": True}
    )
    workload["status"]["updateRevision"] = "mo-tp-cn-2"
    reasons = " | ".join(plan_set(Component.CN, _set(), workload, pods).refusals)
    assert "podsToDelete ['mo-tp-cn-abcde'] is pending" in reasons
    assert "update is paused" in reasons
    assert "a roll is in progress" in reasons


def test_pods_owned_by_something_else_are_refused() -> None:
    foreign = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "controller": True}
    pods = [_pod("mo-tp-cn-abcde", owner=foreign)]
    reasons = plan_set(Component.CN, _set(), _workload(replicas=1), pods).refusals
    assert any("controlled by something other than Kruise: mo-tp-cn-abcde" in r for r in reasons)


def test_a_pools_cnset_is_planned_to_keep_its_pods_as_they_are() -> None:
    pods = [_pod("pool-abc-cn-abcde"), _pod("pool-abc-cn-fghij")]
    plan = plan_set(
        Component.CN, _set(podManagementPolicy="Pooling", replicas=1), _workload(replicas=2), pods
    )
    assert plan.refusals == ()
    text = "\n".join(plan.describe())
    assert "keeps its pods as they are" in text and "keeps its claim and its sessions" in text, text
    # nothing rolls: the pool's own business (its size, an idle CN not ready, a pending
    # scale-in, an unfinished in-place update) does not stop the takeover
    workload = {
        **_workload(1, scaleStrategy={"podsToDelete": ["pool-abc-cn-fghij"]}),
        "status": {"currentRevision": "a", "updateRevision": "b"},
    }
    busy_pods = [pods[0], _pod("pool-abc-cn-fghij", ready=False)]
    busy = plan_set(Component.CN, _set(ready=False, podManagementPolicy="Pooling"), workload, busy_pods)
    assert busy.refusals == ()
    serving = plan_set(Component.CN, _set(ready=False), workload, busy_pods)
    assert len(serving.refusals) == 5, serving.refusals
    foreign = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "x", "controller": True}
    taken = plan_set(
        Component.CN, _set(podManagementPolicy="Pooling"), _workload(1), [_pod("x", owner=foreign)]
    )
    assert any("controlled by something other than Kruise" in r for r in taken.refusals)
