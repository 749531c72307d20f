"""The Ready/UpToDate wording every set shares, and config errors as terminal."""

from __future__ import annotations

import logging

import pytest

from mo_operator.controllers.specs.configmaps import invalid_config_is_terminal
from mo_operator.controllers.specs.statefulsets import Rollout
from mo_operator.controllers.steps.status import (
    NOT_STARTED,
    Readiness,
    first_status,
    report_rollout,
    store_status,
)
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.matrixone.config.tomlconfig import ConfigError

WORDING = Readiness(members="proxies ready", not_ready="ProxiesNotReady", all_ready="AllProxiesReady")


class _Recorder:
    def event(self, obj: object, type: str, reason: str, message: str) -> None:
        pass


def _ctx() -> Context:
    obj = {"metadata": {"name": "p", "namespace": "ns", "generation": 3}}
    return Context(obj, "r1", logging.LoggerAdapter(logging.getLogger("t")), _Recorder())


def _condition(ctx: Context, kind: str) -> dict[str, object]:
    return next(c for c in ctx.status["conditions"] if c["type"] == kind)


def test_all_ready_and_complete() -> None:
    ctx = _ctx()
    report_rollout(ctx, Rollout(2, 2, 2, True), 2, WORDING, pending=False)
    ready = _condition(ctx, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "True",
        "AllProxiesReady",
        "2 proxies ready",
    )
    assert _condition(ctx, "UpToDate")["reason"] == "RolloutComplete"
    assert ready["observedGeneration"] == 3
    assert ctx.requeue_after is None


def test_some_not_ready_counts_them_and_rechecks_for_a_stall() -> None:
    ctx = _ctx()
    report_rollout(ctx, Rollout(3, 1, 3, False, recheck_after=12.0), 3, WORDING, pending=False)
    ready = _condition(ctx, "Ready")
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "ProxiesNotReady",
        "1/3 proxies ready",
    )
    assert _condition(ctx, "UpToDate")["reason"] == "RollingUpdate"
    assert ctx.requeue_after == 12.0


def test_a_stall_is_not_ready_even_with_enough_pods() -> None:
    ctx = _ctx()
    report_rollout(
        ctx, Rollout(2, 2, 1, False, stalled="pod p-1: CrashLoopBackOff"), 2, WORDING, pending=False
    )
    assert _condition(ctx, "Ready")["reason"] == "RolloutStalled"
    assert _condition(ctx, "UpToDate")["message"] == "pod p-1: CrashLoopBackOff"


def test_pending_writes_are_not_up_to_date() -> None:
    ctx = _ctx()
    report_rollout(ctx, Rollout(0, 0, 0, False), 1, WORDING, pending=True)
    assert _condition(ctx, "UpToDate")["reason"] == "Applying", "a new workload"
    ctx = _ctx()
    report_rollout(ctx, Rollout(1, 1, 1, True), 1, WORDING, pending=True)
    assert _condition(ctx, "UpToDate")["reason"] == "RollingUpdate", "a workload with pods starts a roll"


def test_a_first_start_says_applying_until_its_pods_are_up() -> None:
    """No pod is replaced while a set brings up the workload it made: one unchanged
    UpToDate from the start to Ready, whatever status write came in between."""
    ctx = _ctx()
    first_status(ctx, {}, *NOT_STARTED, replicas=0)
    report_rollout(ctx, Rollout(0, 0, 0, False), 3, WORDING, pending=True)
    applying = dict(_condition(ctx, "UpToDate"))
    assert applying["reason"] == "Applying"
    for roll in (Rollout(3, 0, 3, False), Rollout(3, 2, 3, False)):
        report_rollout(ctx, roll, 3, WORDING, pending=False)
        assert _condition(ctx, "UpToDate") == applying, roll
    report_rollout(ctx, Rollout(3, 3, 3, True), 3, WORDING, pending=False)
    assert _condition(ctx, "UpToDate")["reason"] == "RolloutComplete"
    report_rollout(ctx, Rollout(3, 2, 3, False), 3, WORDING, pending=False)
    assert _condition(ctx, "UpToDate")["reason"] == "RollingUpdate", "a set that ran rolls again"


def test_a_start_whose_pods_came_before_its_first_write_is_still_a_start() -> None:
    """The status window held the write saying Applying: the next round, from NotStarted
    with the workload made, says Applying too, not a roll."""
    ctx = _ctx()
    first_status(ctx, {}, *NOT_STARTED, replicas=0)
    report_rollout(ctx, Rollout(1, 0, 1, False), 1, WORDING, pending=False)
    assert _condition(ctx, "UpToDate")["reason"] == "Applying"


def test_a_start_counted_against_its_desired_replicas_is_still_a_start() -> None:
    """A CNSet's roll counts its desired replicas before it has made a pod."""
    ctx = _ctx()
    first_status(ctx, {}, *NOT_STARTED, replicas=0)
    report_rollout(ctx, Rollout(2, 0, 0, False), 2, WORDING, pending=True)
    assert _condition(ctx, "UpToDate")["reason"] == "Applying"
    taken_over = _ctx()
    first_status(taken_over, {}, *NOT_STARTED, replicas=0)
    report_rollout(taken_over, Rollout(2, 2, 0, False), 2, WORDING, pending=True)
    assert _condition(taken_over, "UpToDate")["reason"] == "RollingUpdate", "serving pods are replaced"


def test_a_stalled_start_says_so() -> None:
    ctx = _ctx()
    first_status(ctx, {}, *NOT_STARTED, replicas=0)
    report_rollout(ctx, Rollout(1, 0, 1, False, stalled="pod p-0: ErrImagePull"), 1, WORDING, pending=False)
    assert _condition(ctx, "UpToDate")["reason"] == "RolloutStalled"


def _pod(name: str, *, ready: bool, waiting: str | None = None) -> dict[str, object]:
    statuses = [{"name": "main", "state": {"waiting": {"reason": waiting}}}] if waiting else []
    return {
        "metadata": {"name": name},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": statuses,
        },
    }


def test_a_store_starting_for_the_first_time_has_not_failed() -> None:
    status: dict[str, object] = {}
    starting = [_pod("s-0", ready=True), _pod("s-1", ready=False, waiting="ContainerCreating")]
    store_status(status, starting, 0.0)
    assert [s["podName"] for s in status["availableStores"]] == ["s-0"]  # type: ignore[index]
    assert status["failedStores"] == []


def test_a_store_that_went_down_or_cannot_start_has_failed() -> None:
    status: dict[str, object] = {}
    store_status(status, [_pod("s-0", ready=True), _pod("s-1", ready=False, waiting="ErrImagePull")], 0.0)
    assert [s["podName"] for s in status["failedStores"]] == ["s-1"]  # type: ignore[index]
    store_status(status, [_pod("s-0", ready=False), _pod("s-1", ready=False, waiting="ErrImagePull")], 60.0)
    failed = status["failedStores"]
    assert [(s["podName"], s["phase"]) for s in failed] == [("s-0", "Down"), ("s-1", "Down")]  # type: ignore[index]
    assert failed[0]["lastTransition"] != failed[1]["lastTransition"], "each since it went down"  # type: ignore[index]
    assert status["availableStores"] == []


def test_writes_of_the_same_generation_do_not_flip_a_complete_roll() -> None:
    """A claim annotated or an old ConfigMap collected is no roll: no flip, no Event."""
    ctx = _ctx()
    report_rollout(ctx, Rollout(1, 1, 1, True), 1, WORDING, pending=False)
    ctx.status["observedGeneration"] = 3  # as the framework wrote it
    report_rollout(ctx, Rollout(1, 1, 1, True), 1, WORDING, pending=True)
    assert _condition(ctx, "UpToDate")["status"] == "True"
    ctx.obj["metadata"]["generation"] = 4  # a new spec: its writes may reshape the pods
    report_rollout(ctx, Rollout(1, 1, 1, True), 1, WORDING, pending=True)
    assert _condition(ctx, "UpToDate")["reason"] == "RollingUpdate"


def _ready(ctx: Context) -> tuple[object, object, object]:
    ready = _condition(ctx, "Ready")
    return ready["status"], ready["reason"], ready["message"]


STORES = Readiness(
    members="log stores ready",
    not_ready="StoresNotReady",
    all_ready="AllStoresReady",
    all_members="log stores ready, HAKeeper running",
)
SERVING = Readiness(
    members="CNs ready", not_ready="CNsNotReady", all_ready="AllCNsReady", serves_while_stalled=True
)


def test_what_a_set_waits_for_comes_before_a_stall() -> None:
    ctx = _ctx()
    stalled = Rollout(3, 0, 3, False, stalled="pod p-0: Pending")
    report_rollout(ctx, stalled, 3, STORES, pending=False, waiting=("Bootstrapping", "waiting for HAKeeper"))
    assert _ready(ctx) == ("False", "Bootstrapping", "waiting for HAKeeper")
    assert _condition(ctx, "UpToDate")["reason"] == "RolloutStalled", "the roll still says where it stopped"


def test_members_that_cannot_be_counted_come_after_a_stall_and_before_the_count() -> None:
    ctx = _ctx()
    report_rollout(
        ctx, Rollout(3, 1, 3, False), 3, STORES, pending=False, unavailable="HAKeeper does not answer"
    )
    assert _ready(ctx) == ("False", "HAKeeperUnavailable", "HAKeeper does not answer")
    ctx = _ctx()
    stalled = Rollout(3, 1, 3, False, stalled="pod p-1: CrashLoopBackOff")
    report_rollout(ctx, stalled, 3, STORES, pending=False, unavailable="HAKeeper does not answer")
    assert _ready(ctx)[1] == "RolloutStalled"


def test_a_kind_words_its_members_once_all_are_ready_and_what_holds_the_others() -> None:
    ctx = _ctx()
    report_rollout(ctx, Rollout(3, 3, 3, True), 3, STORES, pending=False)
    assert _ready(ctx) == ("True", "AllStoresReady", "3 log stores ready, HAKeeper running")
    ctx = _ctx()
    report_rollout(ctx, Rollout(2, 1, 2, False), 2, SERVING, pending=False, detail="cordoned: c-0")
    assert _ready(ctx) == ("False", "CNsNotReady", "1/2 CNs ready; cordoned: c-0")


def test_a_set_that_serves_while_stalled_stays_ready_only_with_every_replica_serving() -> None:
    ctx = _ctx()
    report_rollout(ctx, Rollout(2, 2, 1, False, stalled="pod c-2: ErrImagePull"), 2, SERVING, pending=False)
    assert _ready(ctx) == ("True", "RolloutStalled", "pod c-2: ErrImagePull")
    ctx = _ctx()
    report_rollout(ctx, Rollout(2, 1, 1, False, stalled="pod c-2: ErrImagePull"), 2, SERVING, pending=False)
    assert _ready(ctx)[0] == "False"


def test_config_errors_become_terminal_with_the_field() -> None:
    with pytest.raises(TerminalError) as caught, invalid_config_is_terminal():
        raise ConfigError("[cn] must be a table")
    assert (caught.value.reason, caught.value.message) == (
        "InvalidConfig",
        "spec.config: [cn] must be a table",
    )
