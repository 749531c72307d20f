"""One reconcile, one id on every line written during it; errors told apart by
their type, not by a number another system's error may also carry."""

from __future__ import annotations

import logging

import pytest

from mo_operator.cli.logging_setup import JsonFormatter, TextFormatter
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import (
    ReconcileIdFilter,
    Requeue,
    Transient,
    Wait,
    current_reconcile_id,
    expected,
    reconciling,
    routine,
)
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone import admin
from mo_operator.matrixone.rpc import errors as rpc_errors


def _record(logger: str = "some.module") -> logging.LogRecord:
    record = logging.makeLogRecord({"name": logger, "msg": "hello", "levelname": "INFO", "levelno": 20})
    ReconcileIdFilter().filter(record)
    return record


def test_every_line_written_during_a_reconcile_carries_its_id() -> None:
    with reconciling() as rid:
        assert current_reconcile_id() == rid
        inside = _record()
    outside = _record()
    assert inside.reconcileID == rid and not hasattr(outside, "reconcileID")
    assert f"some.module [{rid}]: hello" in TextFormatter().format(inside)
    assert "some.module: hello" in TextFormatter().format(outside)
    assert f'"reconcileID": "{rid}"' in JsonFormatter().format(inside)


def test_each_reconcile_gets_its_own_id_and_none_leaks_out() -> None:
    with reconciling() as first:
        pass
    with reconciling() as second:
        assert current_reconcile_id() == second
    assert first != second
    assert current_reconcile_id() not in (first, second)  # a fresh one outside any


class _MatrixOneError(Exception):
    """An error of another system that happens to carry a number."""

    status = 409
    code = 409


@pytest.mark.parametrize(
    ("error", "is_routine", "is_expected"),
    [
        (ApiError(409, "Conflict", "stale"), True, True),
        (ApiError(429, "TooManyRequests", "slow down"), True, True),
        (ApiError(503, "ServiceUnavailable", "restarting"), False, True),
        (ApiError(422, "Invalid", "bad"), False, False),
        (_MatrixOneError("MatrixOne error 409"), False, False),
        (RuntimeError("boom"), False, False),
    ],
)
def test_errors_are_classified_by_type(error: Exception, is_routine: bool, is_expected: bool) -> None:
    assert (routine(error), expected(error)) == (is_routine, is_expected)


@pytest.mark.parametrize(
    ("error", "is_expected"),
    [
        (admin.NotYet("no HAKeeper yet"), True),
        (admin.Unreachable("connection refused"), True),
        (rpc_errors.ServerError(20101, "not bootstrapped"), True),
        (rpc_errors.ConnectionLost("reset"), True),
        (admin.ClientFault("bad frame"), False),
        (rpc_errors.ProtocolError("bad frame"), False),
    ],
)
def test_matrixone_errors_that_say_later_are_transient_by_type(error: Exception, is_expected: bool) -> None:
    assert isinstance(error, Transient) is is_expected
    assert expected(error) is is_expected, "retried and logged without a traceback"
    assert not routine(error), "reported on the object: not the API server's routine"


def test_the_soonest_look_again_wins_and_keeps_its_reason() -> None:
    ctx = Context(
        {"metadata": {"name": "x", "namespace": "ns"}},
        "r1",
        logging.LoggerAdapter(logging.getLogger("t")),
        None,
    )  # type: ignore[arg-type]
    assert ctx.later is None and ctx.requeue_after is None
    ctx.requeue(10, "poll MatrixOne")
    ctx.wait(1, "pods to be Ready")
    ctx.requeue(5, "a deadline")
    assert ctx.later == Wait(1, "pods to be Ready")
    assert ctx.requeue_after == 1
    assert str(ctx.later) == "wait 1s: pods to be Ready"
    assert str(Requeue(2.5, "the next scheduled run")) == "requeue 2.5s: the next scheduled run"
