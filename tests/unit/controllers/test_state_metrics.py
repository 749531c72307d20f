"""The state gauges the dashboard and alerts read (controllers/state_metrics.py):
a set's replicas, ready pods and stores by state, a halted roll, and backups."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, cast

import pytest

from mo_operator.controllers.framework.env import Caches
from mo_operator.controllers.state_metrics import STATE
from mo_operator.kube.metrics.metrics import REGISTRY

from .controller_fakes import FakeCaches

Obj = dict[str, Any]


@pytest.fixture
def caches() -> Iterator[FakeCaches]:
    fake = FakeCaches()
    STATE.add(cast(Caches, fake))
    yield fake
    STATE.discard(cast(Caches, fake))


def _set(kind: str, name: str, replicas: int, status: Obj) -> Obj:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"replicas": replicas},
        "status": status,
    }


def value(metric: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(metric, {"namespace": "ns", **labels})


def test_sets_report_replicas_ready_pods_and_stores_by_state(caches: FakeCaches) -> None:
    up = [{"podName": "mo-log-0"}, {"podName": "mo-log-1"}]
    caches.add(
        _set(
            "LogSet",
            "mo",
            3,
            {"readiness": "2/3", "availableStores": up, "failedStores": [{"podName": "mo-log-2"}]},
        ),
        _set("CNSet", "mo-tp", 2, {"readiness": "1/2", "stores": [{"state": "Up"}, {"state": "Draining"}]}),
    )
    log = {"kind": "LogSet", "name": "mo"}
    assert value("mo_operator_set_replicas", **log) == 3
    assert value("mo_operator_set_ready_replicas", **log) == 2
    assert value("mo_operator_set_stores", **log, state="Up") == 2
    assert value("mo_operator_set_stores", **log, state="Down") == 1
    cn = {"kind": "CNSet", "name": "mo-tp"}
    assert value("mo_operator_set_stores", **cn, state="Draining") == 1
    assert value("mo_operator_rollout_halted", **cn) == 0


def test_a_stalled_roll_is_halted(caches: FakeCaches) -> None:
    stalled = {"conditions": [{"type": "UpToDate", "status": "False", "reason": "RolloutStalled"}]}
    caches.add(_set("DNSet", "mo", 1, stalled))
    cluster = {"kind": "MatrixOneCluster", "metadata": {"name": "mo", "namespace": "ns"}, "spec": {}}
    cluster["status"] = {"conditions": [{"type": "UpToDate", "status": "False", "reason": "RolloutHalted"}]}
    caches.add(cluster)
    assert value("mo_operator_rollout_halted", kind="DNSet", name="mo") == 1
    assert value("mo_operator_rollout_halted", kind="MatrixOneCluster", name="mo") == 1


def test_backups_are_counted_by_phase_and_dated_per_cluster(caches: FakeCaches) -> None:
    caches.add(
        {"kind": "BackupJob", "metadata": {"name": "a", "namespace": "ns"}, "status": {"phase": "Failed"}},
        {"kind": "BackupJob", "metadata": {"name": "b", "namespace": "ns"}, "status": {"phase": "Completed"}},
        {
            "kind": "Backup",
            "metadata": {"name": "x"},
            "meta": {"sourceRef": "matrixonecluster/ns/mo", "completeTime": "2026-01-01T00:00:00Z"},
        },
        {
            "kind": "Backup",
            "metadata": {"name": "y"},
            "meta": {"sourceRef": "matrixonecluster/ns/mo", "completeTime": "2026-01-02T00:00:00Z"},
        },
    )
    assert value("mo_operator_backup_jobs", phase="Failed") == 1
    assert value("mo_operator_backup_last_completion_timestamp_seconds", name="mo") == 1767312000.0


def test_a_schedule_whose_last_run_failed_is_failing_and_dated_by_its_last_success(
    caches: FakeCaches,
) -> None:
    failed = {"type": "LastRunSucceeded", "status": "False", "reason": "BackupFailed"}
    caches.add(
        {
            "kind": "BackupSchedule",
            "metadata": {"name": "nightly", "namespace": "ns"},
            "status": {"lastSuccessfulTime": "2026-01-01T00:00:00Z", "conditions": [failed]},
        },
        {"kind": "BackupSchedule", "metadata": {"name": "fresh", "namespace": "ns"}, "status": {}},
    )
    assert value("mo_operator_backup_schedule_failing", name="nightly", reason="BackupFailed") == 1
    assert value("mo_operator_backup_schedule_failing", name="nightly", reason="DeletionFailed") == 0
    assert value("mo_operator_backup_schedule_failing", name="fresh", reason="BackupFailed") == 0
    assert value("mo_operator_backup_schedule_last_success_timestamp_seconds", name="nightly") == 1767225600.0
    assert value("mo_operator_backup_schedule_last_success_timestamp_seconds", name="fresh") is None
