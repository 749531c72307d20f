"""Each controller's ``setup()`` wires it with its own warning reasons: the trouble it
reports is announced as Warning Events (and its status written at once), its progress
as Normal ones, and no controller borrows another's reasons."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import pytest

from mo_operator.controllers.operator import Operator
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.controller.actor import ActorReconciler
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.settings import OperatorConfig

SET_TROUBLE = {
    "InvalidSpec",
    "InvalidConfig",
    "NoLogService",
    "RolloutStalled",
    "StorageClassCannotExpand",
    "SecretNotFound",
    "ConfigMapNotFound",
    "TakeoverRefused",
}
RPC_TROUBLE = {"MatrixOneUnreachable", "MatrixOneClientFault"}
JOB_TROUBLE = {"InvalidSpec", "JobConflict", "JobMissing", "Failed"}
WARNINGS = {
    "logset": SET_TROUBLE
    | RPC_TROUBLE
    | {
        "StoresDown",
        "RepairingStores",
        "WaitingForHAKeeper",
        "MajorityLost",
        "BucketInUse",
        "BucketDeleting",
    },
    "BucketClaim": {"InvalidSpec", "CleanupBlocked", "CleanupFailed"},
    "dnset": SET_TROUBLE,
    "tnset": SET_TROUBLE,
    "cnset": SET_TROUBLE | RPC_TROUBLE,
    "proxyset": SET_TROUBLE,
    "matrixonecluster": {
        "InvalidSpec",
        "RolloutStalled",
        "RolloutHalted",
        "RestoreBlocked",
        "RestoreFailed",
        "StorageClassCannotExpand",
    },
    "webui": {"InvalidSpec", "InvalidConfig", "RolloutStalled"},
    "backupjob": JOB_TROUBLE | {"BackupFailed"},
    "restorejob": JOB_TROUBLE | {"RestoreFailed"},
    "backupschedule": JOB_TROUBLE | {"BackupFailed", "DeletionFailed", "RunSkipped"},
    "cn-pool-manager": {"InvalidSpec", "MaxPodsReached"},
    "cn-claim-manager": {"InvalidSpec", "PodLost"},
    "cn-claimset-manager": {"InvalidSpec"},
}
"""The condition reasons each controller must announce as Warnings."""
PROGRESS = {
    "logset": {"Bootstrapping", "ScalingUp", "AllStoresReady"},
    "cnset": {"ScalingUp", "RollingOut"},
    "matrixonecluster": {"Restoring", "Restored"},
    "backupjob": {"JobRunning", "JobComplete"},
    "cn-pool-manager": {"PodLost"},
    "webui": {"MajorityLost", "CleanupFailed"},
}
"""Reasons a controller must not announce as Warnings: its progress, or another's trouble."""


@pytest.fixture(scope="module")
def reconcilers() -> dict[str, ActorReconciler]:
    operator = Operator(cast(ApiClient, SimpleNamespace()), RpcAdminProvider(), OperatorConfig())
    return {c.name: c.reconcile for c in operator.controllers if isinstance(c.reconcile, ActorReconciler)}


def test_every_actor_controller_of_the_operator_declares_its_warnings(
    reconcilers: dict[str, ActorReconciler],
) -> None:
    assert set(reconcilers) == set(WARNINGS)


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_a_controllers_trouble_is_announced_as_warnings(
    name: str, reconcilers: dict[str, ActorReconciler]
) -> None:
    missing = WARNINGS[name] - reconcilers[name].warning_reasons
    assert not missing, f"{name} would announce {sorted(missing)} as Normal Events"


@pytest.mark.parametrize("name", sorted(PROGRESS))
def test_a_controllers_progress_and_others_trouble_are_not_its_warnings(
    name: str, reconcilers: dict[str, ActorReconciler]
) -> None:
    assert not PROGRESS[name] & reconcilers[name].warning_reasons
