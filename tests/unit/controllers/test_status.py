"""The Ready/UpToDate wording every set shares, and config errors as terminal."""

from __future__ import annotations

import logging

import pytest

from mo_operator.controllers.common.configmaps import invalid_config_is_terminal
from mo_operator.controllers.common.statefulsets import Rollout
from mo_operator.controllers.common.status import Readiness, report_rollout
from mo_operator.kube.actor import Context, TerminalError
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


def test_config_errors_become_terminal_with_the_field() -> None:
    with pytest.raises(TerminalError) as caught, invalid_config_is_terminal():
        raise ConfigError("[cn] must be a table")
    assert (caught.value.reason, caught.value.message) == (
        "InvalidConfig",
        "spec.config: [cn] must be a table",
    )
