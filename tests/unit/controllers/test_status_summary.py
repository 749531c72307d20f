"""What ``kubectl get`` shows of a cluster and its sets: the version the pods run,
the first condition that is not fine, and a phase that stays ``Upgrading`` for a
whole planned change instead of flickering with each pod replaced."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.cluster.actor import phase_of
from mo_operator.controllers.steps.status import not_fine, pod_version, running_versions


def _pod(image: str | None, *, deleting: bool = False, name: str = "main") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "p"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    statuses = [{"name": name, "image": image}] if image else []
    return {"metadata": meta, "status": {"containerStatuses": statuses}}


def _status(ready: str, up_to_date: str, reason: str = "Rolling") -> dict[str, Any]:
    return {
        "conditions": [
            {"type": "Ready", "status": ready, "reason": "R", "message": "ready message"},
            {"type": "UpToDate", "status": up_to_date, "reason": reason, "message": "rolling message"},
        ]
    }


def test_the_version_is_what_the_kubelet_says_the_main_container_runs() -> None:
    assert pod_version(_pod("docker.io/matrixorigin/matrixone:1.2.1")) == "1.2.1"
    assert pod_version(_pod("registry:5000/mo:2.0.0", name="other")) == "2.0.0"
    assert pod_version(_pod(None)) == "", "a container not started runs nothing yet"


def test_running_versions_list_most_pods_first_and_skip_pods_leaving() -> None:
    pods = [_pod("mo:1.2.0"), _pod("mo:1.2.1"), _pod("mo:1.2.1"), _pod("mo:0.9", deleting=True), _pod(None)]
    assert running_versions(pods) == ["1.2.1", "1.2.0"]
    assert running_versions([]) == []


def test_the_message_is_the_roll_first_then_readiness_then_anything_else() -> None:
    assert not_fine(_status("False", "False")) == "Rolling: rolling message"
    assert not_fine(_status("False", "True")) == "R: ready message"
    other = {"conditions": [{"type": "Synced", "status": "False", "reason": "Failed", "message": ""}]}
    assert not_fine(other) == "Failed"
    assert not_fine(_status("True", "True")) == ""
    applying = {
        "conditions": [{"type": "Synced", "status": "False", "reason": "Progressing", "message": "x"}]
    }
    assert not_fine(applying) == "", "a round applying its writes is not trouble"
    idle = {
        "conditions": [
            {"type": "Upgrading", "status": "False", "reason": "UpToDate", "message": "x"},
            {"type": "Scaling", "status": "False", "reason": "AtDesiredReplicas", "message": "y"},
        ]
    }
    assert not_fine(idle) == "", "no planned work running is not trouble"


@pytest.mark.parametrize(
    ("serving", "ready", "up_to_date", "phase"),
    [
        (True, "False", "False", "Upgrading"),  # a pod replaced mid-roll
        (True, "True", "False", "Upgrading"),
        (True, "True", "True", "Ready"),  # the roll completed
        (True, "False", "True", "NotReady"),  # something broke, nothing rolls
        (False, "False", "False", "NotReady"),  # being created, or a broken cluster being fixed
        (False, "True", "False", "NotReady"),
        (False, "True", "True", "Ready"),
    ],
)
def test_a_change_to_a_serving_cluster_is_upgrading_until_it_completes(
    serving: bool, ready: str, up_to_date: str, phase: str
) -> None:
    assert phase_of(_status(ready, up_to_date), serving) == phase
