"""Asking the TN's lock service about a leaving CN, as the Go operator asks it.

Sources: matrixorigin/matrixone-operator 2301e3b5 ``pkg/mocli/lockservice_client.go``
(``SetRestartCN``, ``CanRestartCN``, ``RemainTxnCount``: one ``lock.Request`` each, sent
with ``morpc`` to the TN store's ``LockServiceAddress`` from HAKeeper's details, a
non-empty ``Response.Error`` being the failure) and ``pkg/mocli/manager.go`` (the TN is
the first one HAKeeper lists); matrixorigin/matrixone 7c27538f
``pkg/lockservice/rpc.go`` (the server: ``morpc.Config.NewServer``, an unknown method
answered with ``ErrNotSupported``) and ``pkg/lockservice/lock_table_allocator.go`` (the
three handlers).

One short-lived connection per call: the operator asks only while a CN drains, and the
TN may move between asks.
"""

from __future__ import annotations

from mo_operator.matrixone.rpc.connection import Dialer, MorpcConnection, open_connection
from mo_operator.matrixone.rpc.exchange import exchange as call
from mo_operator.matrixone.rpc.frame import APPROXIMATE_HEADER, DEFAULT_MAX_BODY
from mo_operator.matrixone.rpc.lock_pb import (
    CanRestartServiceRequest,
    Method,
    RemainTxnInServiceRequest,
    Request,
    Response,
    SetRestartServiceRequest,
)
from mo_operator.matrixone.rpc.metrics import connecting


def service_request(method: Method, uuid: str) -> Request:
    """The ``lock.Request`` asking ``method`` about CN ``uuid``."""
    if method is Method.SetRestartService:
        return Request(method=method, set_restart_service=SetRestartServiceRequest(service_id=uuid))
    if method is Method.CanRestartService:
        return Request(method=method, can_restart_service=CanRestartServiceRequest(service_id=uuid))
    return Request(method=method, remain_txn_in_service=RemainTxnInServiceRequest(service_id=uuid))


async def exchange(conn: MorpcConnection, request: Request, deadline: float) -> Response:
    """Send ``request`` to a lock service; raise the error its answer carries."""
    name = Method(request.method).name
    return await call(conn, request, deadline, Response.decode, name, "lock.Response")


async def ask(
    lock_address: str,
    method: Method,
    uuid: str,
    deadline: float,
    *,
    connect_timeout: float = 2.0,
    max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
    dialer: Dialer = open_connection,
) -> Response:
    """The TN lock service's answer to ``method`` about CN ``uuid``."""
    with connecting(method.name, deadline):
        conn = await MorpcConnection.open(
            lock_address,
            payload_message=False,
            connect_timeout=connect_timeout,
            max_frame=max_frame,
            dialer=dialer,
        )
    try:
        return await exchange(conn, service_request(method, uuid), deadline)
    finally:
        conn.abort()
