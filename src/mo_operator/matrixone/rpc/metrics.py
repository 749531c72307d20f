"""Prometheus metrics of the operator's calls to MatrixOne, beside the runtime's own
(``kube/metrics/metrics.py``, on its registry).

``matrixone_rpc_requests_total{method,result}`` counts every morpc request by
MatrixOne's name of its method (``GET_CLUSTER_DETAILS``, ``ShowProcessList``,
``CanRestartService``...) and how it ended; ``matrixone_rpc_request_duration_seconds
{method}`` is its latency, connecting included (MatrixOne's own morpc client exports
such a histogram per backend; this is the operator's view of it).

Results: ``ok``; ``error`` (MatrixOne answered with an error: not yet, no HAKeeper,
an unknown store); ``not_supported`` (``ErrNotSupported``); ``unreachable`` (refused,
reset, a name that does not resolve, no answer before the deadline); ``client_fault``
(an answer the client cannot decode). A request cancelled once its deadline passed
counts as unreachable; one its caller gave up for another reason is not counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator

from prometheus_client import Counter, Histogram

from mo_operator.kube.metrics.metrics import REGISTRY
from mo_operator.matrixone.admin import ClientFault, Unreachable
from mo_operator.matrixone.rpc.errors import NotSupported

RPC_REQUESTS = Counter(
    "matrixone_rpc_requests",
    "morpc requests the operator sent to MatrixOne, by method and result: ok, error (MatrixOne"
    " answered with an error), not_supported, unreachable (refused, reset, no such name, no answer"
    " in time), client_fault (an answer the operator's client cannot decode).",
    ["method", "result"],
    registry=REGISTRY,
)
RPC_DURATION = Histogram(
    "matrixone_rpc_request_duration_seconds",
    "Latency of morpc requests to MatrixOne by method, connecting included.",
    ["method"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
    registry=REGISTRY,
)


def result_of(error: BaseException) -> str:
    """The ``result`` label of a request that ended with ``error``."""
    if isinstance(error, NotSupported):
        return "not_supported"
    if isinstance(error, ClientFault):
        return "client_fault"
    if isinstance(error, Unreachable | TimeoutError | OSError):
        return "unreachable"
    return "error"


def _count(method: str, result: str, started: float) -> None:
    RPC_REQUESTS.labels(method, result).inc()
    RPC_DURATION.labels(method).observe(time.perf_counter() - started)


def _failed(method: str, error: BaseException, started: float, deadline: float) -> None:
    if isinstance(error, asyncio.CancelledError):
        if asyncio.get_running_loop().time() >= deadline:  # the caller's deadline ended it
            _count(method, "unreachable", started)
        return
    _count(method, result_of(error), started)


@contextlib.contextmanager
def connecting(method: str, deadline: float) -> Iterator[None]:
    """Count a failure to connect for a request of ``method`` (its success is counted
    with the request itself, ``observed``)."""
    started = time.perf_counter()
    try:
        yield
    except BaseException as e:
        _failed(method, e, started, deadline)
        raise


@contextlib.contextmanager
def observed(method: str, deadline: float) -> Iterator[None]:
    """Count and time one request of ``method`` (with ``deadline``, event-loop time):
    what ends the block is its result."""
    started = time.perf_counter()
    try:
        yield
    except BaseException as e:
        _failed(method, e, started, deadline)
        raise
    _count(method, "ok", started)
