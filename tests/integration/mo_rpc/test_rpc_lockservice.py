"""``RpcAdminProvider``'s lock service calls against a fake MatrixOne on loopback: the TN is
found in HAKeeper's details, asked with frames the morpc server codec accepts, and
answered as MatrixOne's lock table allocator answers."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest

from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.rpc import lock_pb as lk
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from .fake_mo import FakeCluster, FakeServer, start_cluster


class FakeLockService(FakeServer):
    """A TN's lock service: CNs in ``restartable`` may restart; ``marked`` records
    ``SetRestartService``; ``remaining`` answers ``RemainTxnInService``."""

    payload_message = False

    def __init__(self) -> None:
        super().__init__()
        self.restartable: set[str] = set()
        self.marked: list[str] = []
        self.remaining: dict[str, int] = {}

    def handle(self, body: bytes) -> tuple[object, bytes]:
        request = lk.Request.decode(body)
        response = lk.Response(request_id=request.request_id, method=request.method)
        if request.method == lk.Method.CAN_RESTART_SERVICE:
            ok = request.can_restart_service.service_id in self.restartable
            response = dataclasses.replace(response, can_restart_service=lk.OKResponse(ok))
        elif request.method == lk.Method.SET_RESTART_SERVICE:
            self.marked.append(request.set_restart_service.service_id)
            response = dataclasses.replace(response, set_restart_service=lk.OKResponse(True))
        elif request.method == lk.Method.REMAIN_TXN_IN_SERVICE:
            count = self.remaining.get(request.remain_txn_in_service.service_id, -1)
            response = dataclasses.replace(response, remain_txn_in_service=lk.RemainTxnResponse(count))
        return request, response.encode()


@pytest.fixture
async def cluster() -> AsyncIterator[tuple[FakeCluster, FakeLockService]]:
    c = await start_cluster()
    locks = await FakeLockService().start()
    c.model.tn_stores = [pb.TNStore("tn-0", "tn-0:41010", 999, 0, "tn-0:32003", locks.address)]
    yield c, locks
    await locks.stop()
    await c.stop()


async def test_the_three_calls_reach_the_tn_lock_service(
    cluster: tuple[FakeCluster, FakeLockService],
) -> None:
    c, locks = cluster
    provider = RpcAdminProvider(timeout=2.0, connect_timeout=0.5)
    try:
        admin = provider.admin(c.discovery.address)
        assert not await admin.can_restart_cn("cn-1")
        assert await admin.set_restart_cn("cn-1") and locks.marked == ["cn-1"]
        locks.remaining["cn-1"] = 2
        assert await admin.remain_txn_count("cn-1") == 2
        assert await admin.remain_txn_count("cn-2") == -1
        locks.restartable.add("cn-1")
        assert await admin.can_restart_cn("cn-1")
    finally:
        await provider.close()
    assert locks.frame_errors == []


async def test_without_a_tn_lock_address_the_call_fails_clearly(
    cluster: tuple[FakeCluster, FakeLockService],
) -> None:
    c, _ = cluster
    c.model.tn_stores = []
    provider = RpcAdminProvider(timeout=2.0, connect_timeout=0.5)
    try:
        with pytest.raises(AdminError, match="no TN store with a lock service address"):
            await provider.admin(c.discovery.address).can_restart_cn("cn-1")
    finally:
        await provider.close()
