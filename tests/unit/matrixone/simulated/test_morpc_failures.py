"""Each way a call to MatrixOne fails maps to one failure class, which is what the
controllers tell apart (wait, wait then warn, or report the client's own fault), and to
one ``result`` of ``matrixone_rpc_requests_total``. The calls go over loopback TCP to
the simulated MatrixOne's servers, made to misbehave."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from mo_operator.kube.metrics.metrics import REGISTRY
from mo_operator.matrixone.admin import AdminError, CNLoad, Failure, StoreNotFound, failure_of
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from .factories import World, cluster
from .served import DISCOVERY, Served, served

Call = Callable[[RpcAdminProvider, World], Awaitable[object]]


def _count(method: str, result: str) -> float:
    found = REGISTRY.get_sample_value("matrixone_rpc_requests_total", {"method": method, "result": result})
    return found or 0.0


async def _state(provider: RpcAdminProvider, world: World) -> object:
    return await provider.admin(DISCOVERY).hakeeper_state()


async def _load(provider: RpcAdminProvider, world: World) -> object:
    return await provider.admin(DISCOVERY).cn_load(world.uuid("mo-tp-cn-0"))


def _refuse(s: Served) -> None:
    s.network.faults.set("refuse")


def _stall(s: Served) -> None:
    s.network.faults.set("stall", lambda c: c.method == "GET_CLUSTER_STATE")


def _half(s: Served) -> None:
    s.network.faults.set("half", lambda c: c.method == "GET_CLUSTER_STATE")


def _garbage(s: Served) -> None:
    s.network.faults.set("garbage", lambda c: c.method == "GET_CLUSTER_STATE")


def _compressed(s: Served) -> None:
    s.network.faults.set("compressed", lambda c: c.method == "GET_CLUSTER_STATE")


def _not_supported(s: Served) -> None:
    s.network.faults.set("not_supported", lambda c: c.method == "GET_CLUSTER_STATE")


def _session_list_not_supported(s: Served) -> None:
    s.network.faults.set("not_supported", lambda c: c.method == "ShowProcessList")


CASES: list[tuple[str, Callable[[Served], None], Call, Failure, str, str]] = [
    ("connection refused", _refuse, _state, Failure.UNREACHABLE, "GET_SHARD_INFO", "unreachable"),
    ("no answer before the deadline", _stall, _state, Failure.UNREACHABLE, "GET_CLUSTER_STATE", "unreachable"),
    ("closed mid-frame", _half, _state, Failure.UNREACHABLE, "GET_CLUSTER_STATE", "unreachable"),
    ("a frame that is not one", _garbage, _state, Failure.CLIENT_FAULT, "GET_CLUSTER_STATE", "client_fault"),
    ("an LZ4 frame", _compressed, _state, Failure.CLIENT_FAULT, "GET_CLUSTER_STATE", "client_fault"),
    ("ErrNotSupported from HAKeeper", _not_supported, _state, Failure.CLIENT_FAULT, "GET_CLUSTER_STATE",
     "not_supported"),
    ("ErrNotSupported for ShowProcessList", _session_list_not_supported, _load, Failure.CLIENT_FAULT,
     "ShowProcessList", "not_supported"),
]  # fmt: skip


@pytest.mark.parametrize(("fault", "call", "failure", "method", "result"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])  # fmt: skip
async def test_each_failure_maps_to_its_class_and_its_metric(
    fault: Callable[[Served], None], call: Call, failure: Failure, method: str, result: str
) -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world, timeout=0.5) as s:
        fault(s)
        await s.network.settle()
        before = _count(method, result)
        with pytest.raises(AdminError) as e:
            await call(s.provider, world)
        assert failure_of(e.value) is failure
        assert _count(method, result) > before


async def test_not_yet_no_such_name_and_an_unknown_store() -> None:
    world = World()
    cluster(world)
    world.remove("mo-log-2")  # no bootstrap: no HAKeeper yet
    world.step()
    async with served(world, timeout=0.5) as s:
        before = _count("GET_SHARD_INFO", "error")
        with pytest.raises(AdminError) as e:
            await _state(s.provider, world)
        assert failure_of(e.value) is Failure.NOT_YET and _count("GET_SHARD_INFO", "error") > before
        with pytest.raises(AdminError) as e:
            await s.provider.admin("nowhere.ns.svc:32001").hakeeper_state()
        assert failure_of(e.value) is Failure.UNREACHABLE
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        ok = _count("GET_CLUSTER_DETAILS", "ok")
        with pytest.raises(StoreNotFound) as found:
            await s.provider.admin(DISCOVERY).cn_load("ghost")
        assert failure_of(found.value) is Failure.NOT_YET
        assert _count("GET_CLUSTER_DETAILS", "ok") > ok, "HAKeeper answered; the CN is not in it"


async def test_an_older_cn_answering_not_supported_to_its_version_probes_is_no_failure() -> None:
    world = World()
    cluster(world)
    world.step()
    async with served(world) as s:
        s.network.faults.set("not_supported", lambda c: c.method in ("GetPipelineInfo", "GetReplicaCount"))
        world.model.set_sessions(world.uuid("mo-tp-cn-0"), 2, world.now)
        assert await _load(s.provider, world) == CNLoad(sessions=2), "read as a CN before 1.1.2"
