"""MatrixOne's own codec as the judge of the operator's morpc client and of the simulated
MatrixOne's servers (``../shared/mo-peer``: MatrixOne's morpc packages at 7c27538f, see
its README), found as CI finds it: ``../shared/mo-peer/unpack``.

- our client against MatrixOne's servers (``peer serve``): every call gets the answer it
  expects, ``StoreNotFound`` from MatrixOne's real error text, ``ErrNotSupported`` from
  an older CN;
- our requests against MatrixOne's encoder (``peer encode``): byte for byte the same
  frames (so a field number or wire type changed in our tables fails here);
- MatrixOne's client against the simulated MatrixOne's servers (``peer client``): it
  reads every answer they give;
- the operator running a cluster (bring-up, CN scale-in with drain, lock migration) and
  the other calls it makes (claim migration and failover call the same methods; labels,
  unknown stores, an older CN) through ``peer proxy``: MatrixOne decodes every frame in
  both directions, and re-encodes each of our requests to the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mo_devkit.localcluster.envtest import free_port
from mo_devkit.testing import OperatorRunner, World, eventually, open_world
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import identity, labels, names
from mo_operator.matrixone.admin import CNLoad, HAKeeperPhase, StoreNotFound, WorkState
from mo_operator.matrixone.rpc import lock_pb, lockservice
from mo_operator.matrixone.rpc import logservice_pb as pb
from mo_operator.matrixone.rpc import query_pb as q
from mo_operator.matrixone.rpc.codes import HAKEEPER_SHARD_ID, labels_to_pb
from mo_operator.matrixone.rpc.frame import encode_frame
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from .peer import UNPACK, Peer, ProxyingDialer, unpack

if not UNPACK.exists():
    pytest.skip(
        f"{UNPACK} is absent: no test puts the morpc client before MatrixOne's own codec here",
        allow_module_level=True,
    )

TEN_SECONDS_NS = 10_000_000_000


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    yield Peer(unpack(tmp_path_factory.mktemp("mo-peer")))


# --------------------------------------------------------------- our client, their servers
@pytest.fixture
async def served(peer: Peer) -> AsyncIterator[dict[str, str]]:
    addresses = {kind: f"127.0.0.1:{free_port()}" for kind in ("log", "query", "lock", "query-old")}
    running = await peer.start("serve", *[x for kind, a in addresses.items() for x in (f"-{kind}", a)])
    try:
        yield addresses
    finally:
        await running.stop()


async def test_every_call_of_our_client_gets_its_answer_from_matrixones_servers(
    served: dict[str, str],
) -> None:
    provider = RpcAdminProvider(timeout=5.0)
    admin = provider.admin(served["log"])
    try:
        state = await admin.hakeeper_state()
        assert (state.phase, state.tick) == (HAKeeperPhase.RUNNING, 1234)
        assert [s.uuid for s in state.cn_stores] == ["cn-1", "cn-old"]
        cn = state.cn("cn-1")
        assert cn is not None and cn.work_state is WorkState.WORKING and cn.labels == {"role": ("a", "b")}
        assert cn.query_address == served["query"]
        assert [(s.uuid, s.lock_service_address) for s in state.tn_stores] == [("tn-1", served["lock"])]
        assert [(s.uuid, s.service_address) for s in state.log_stores] == [("log-1", served["log"])]
        # sessions from the proxy only (MatrixOne >= 1.1.2), pipelines and replicas as answered
        assert await admin.cn_load("cn-1") == CNLoad(sessions=1, pipelines=7, replicas=5)
        # an older CN: ErrNotSupported from MatrixOne's method handler, non-sys sessions counted
        assert await admin.cn_load("cn-old") == CNLoad(sessions=2, pipelines=0, replicas=0)
        await admin.set_cn_work_state("cn-1", WorkState.DRAINING)
        await admin.set_cn_work_state("cn-1", WorkState.WORKING, {"role": ("a", "b")})
        await admin.set_cn_work_state("cn-1", WorkState.DRAINING, {})
        await admin.set_cn_labels("cn-1", {"role": ("a",)})
        await admin.delete_cn_store("cn-1")
        for call in (
            admin.set_cn_work_state("missing", WorkState.DRAINING),
            admin.set_cn_labels("missing", {}),
        ):
            with pytest.raises(StoreNotFound, match=r"internal error: CN \[missing\] does not exist"):
                await call
        await admin.delete_cn_store("missing")  # store.go: success
        assert await admin.can_restart_cn("cn-1")
        assert await admin.set_restart_cn("cn-1")
        assert await admin.remain_txn_count("cn-1") == 4
    finally:
        await provider.close()


# ---------------------------------------------------------------- our bytes, their bytes
def _log(method: pb.MethodType, **fields: Any) -> bytes:
    return pb.Request(request_id=1, method=method, **fields).encode()


LOG_REQUESTS: dict[str, bytes] = {
    # as hakeeper.py and provider.py build them
    "GET_SHARD_INFO": _log(
        pb.MethodType.GET_SHARD_INFO,
        log_request=pb.LogRequest(shard_id=HAKEEPER_SHARD_ID, exclude_hard_down_replica_addresses=True),
    ),
    "CHECK_HAKEEPER": _log(pb.MethodType.CHECK_HAKEEPER),
    "GET_CLUSTER_STATE": _log(pb.MethodType.GET_CLUSTER_STATE),
    "GET_CLUSTER_DETAILS": _log(pb.MethodType.GET_CLUSTER_DETAILS),
    "PATCH_CN_STORE": _log(
        pb.MethodType.PATCH_CN_STORE,
        cn_state_label=pb.CNStateLabel(uuid="cn-1", state=WorkState.DRAINING.value),
    ),
    "PATCH_CN_STORE_LABELS": _log(
        pb.MethodType.PATCH_CN_STORE,
        cn_state_label=pb.CNStateLabel(
            uuid="cn-1", state=WorkState.WORKING.value, labels=labels_to_pb({"role": ("a", "b")})
        ),
    ),
    "UPDATE_CN_LABEL": _log(
        pb.MethodType.UPDATE_CN_LABEL,
        cn_store_label=pb.CNStoreLabel(uuid="cn-1", labels=labels_to_pb({"role": ("a", "b")})),
    ),
    "UPDATE_CN_LABEL_EMPTY": _log(pb.MethodType.UPDATE_CN_LABEL, cn_store_label=pb.CNStoreLabel(uuid="cn-1")),
    "DELETE_CN_STORE": _log(pb.MethodType.DELETE_CN_STORE, delete_cn_store=pb.DeleteCNStore(store_id="cn-1")),
}
QUERY_REQUESTS: dict[str, bytes] = {
    # as query.py builds them
    "GetPipelineInfo": q.Request(
        request_id=1,
        cmd_method=q.CmdMethod.GetPipelineInfo,
        get_pipeline_info_request=q.GetPipelineInfoRequest(),
    ).encode(),
    "ShowProcessList": q.Request(
        request_id=1,
        cmd_method=q.CmdMethod.ShowProcessList,
        show_process_list_request=q.ShowProcessListRequest(sys_tenant=True),
    ).encode(),
    "GetReplicaCount": q.Request(request_id=1, cmd_method=q.CmdMethod.GetReplicaCount).encode(),
}
LOCK_METHODS = (
    lock_pb.Method.SetRestartService,
    lock_pb.Method.CanRestartService,
    lock_pb.Method.RemainTxnInService,
)


def _ours(kind: str, method: str) -> bytes:
    if kind == "log":
        return encode_frame(LOG_REQUESTS[method], timeout_ns=TEN_SECONDS_NS, payload=b"")
    if kind == "query":
        return encode_frame(QUERY_REQUESTS[method], timeout_ns=TEN_SECONDS_NS)
    request = lockservice.service_request(lock_pb.Method[method], "cn-1")
    body = lock_pb.Request(**{**request.__dict__, "request_id": 1}).encode()
    return encode_frame(body, timeout_ns=TEN_SECONDS_NS)


ALL_REQUESTS = [("log", m) for m in LOG_REQUESTS] + [("query", m) for m in QUERY_REQUESTS]
ALL_REQUESTS += [("lock", m.name) for m in LOCK_METHODS]


@pytest.mark.parametrize(("kind", "method"), ALL_REQUESTS, ids=[f"{k} {m}" for k, m in ALL_REQUESTS])
async def test_our_requests_are_byte_for_byte_matrixones(peer: Peer, kind: str, method: str) -> None:
    [line] = await peer.once(
        "encode", "-kind", kind, "-method", method, "-uuid", "cn-1", "-id", "1", "-timeout", "10s"
    )
    assert _ours(kind, method).hex() == line["frame_hex"], (
        f"{kind} {method}: MatrixOne's Go client writes other bytes"
    )


# --------------------------------------------------- the simulated MatrixOne, their client
@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with open_world(tmp_path) as w:
        yield w


def _cn_group(replicas: int) -> list[dict[str, Any]]:
    return [
        {
            "name": "tp",
            "replicas": replicas,
            "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 0},
        }
    ]


async def test_matrixones_client_reads_every_answer_of_the_simulated_matrixone(
    peer: Peer, world: World
) -> None:
    operator = OperatorRunner(world)
    await operator.start(webhooks=False)
    try:
        await world.apply(world.cluster_manifest("mo", cnGroups=_cn_group(1)))
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)
    finally:
        await operator.stop()
    mo = world.cluster.mo
    assert mo is not None
    uuid = mo.store_uuid(world.namespace, "mo-tp-cn-0")
    log_store = mo.network.server(names.pod_fqdn("mo-log-0", "mo-log-headless", world.namespace) + ":32001")
    assert uuid is not None and log_store is not None
    to = f"127.0.0.1:{log_store.port}"
    answers: dict[str, str] = {}
    for method in LOG_REQUESTS:
        lines = await peer.once("client", "-to", to, "-method", method, "-uuid", uuid)
        [response] = [line for line in lines if line.get("event") == "response"]
        answers[method] = response["response"]
    assert "HAKeeperRunning" in answers["GET_CLUSTER_STATE"] and uuid in answers["GET_CLUSTER_DETAILS"]
    # the HAKeeper shard's members (LogState.Shards, map<uint64, string> replicas), as MatrixOne reads them
    member = f'Replicas:<key:131072 value:"{identity.log_store_uuid(0)}" >'
    assert member in answers["GET_CLUSTER_STATE"], answers["GET_CLUSTER_STATE"]
    assert "IsHAKeeper:true" in answers["CHECK_HAKEEPER"]
    lines = await peer.once("client", "-to", to, "-method", "PATCH_CN_STORE", "-uuid", "missing")
    [missing] = [line for line in lines if line.get("event") == "response"]
    assert "CN [missing] does not exist" in missing["response"]
    assert mo.network.journal.frame_errors == [], "the simulated servers read MatrixOne's frames"


# ------------------------------------------------------------- every frame through the proxy
async def test_the_operator_through_matrixones_codec(peer: Peer, world: World) -> None:
    mo = world.cluster.mo
    assert mo is not None
    proxying = ProxyingDialer(peer, lambda: mo.network.book)
    mo.network.dialer = proxying  # type: ignore[assignment]
    operator = OperatorRunner(world)
    await operator.start(webhooks=False)
    try:
        # bring-up, then a scale-in whose drain waits for the TN lock service (MatrixOne 1.2)
        await world.apply(world.cluster_manifest("mo", version="1.2.3", cnGroups=_cn_group(2)))
        await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)
        for pod in await world.pods(**{labels.INSTANCE: "mo-tp"}):
            mo.set_transactions(pod["metadata"]["labels"][labels.CN_UUID], 2)
        patch = [{"op": "replace", "path": "/spec/cnGroups/0/replicas", "value": 1}]
        await world.kubectl("patch", "mo", "mo", "--type", "json", "-p", json.dumps(patch))

        async def one_left() -> bool:
            return len(await world.pods(**{labels.INSTANCE: "mo-tp"})) == 1

        await eventually(one_left, timeout=60, message="the CN drained and left")
        await eventually(
            lambda: any(c.method == "DELETE_CN_STORE" for c in mo.calls),
            timeout=30,
            message="the store of the CN that left is deleted",
        )
        # the rest of what the operator asks (claim migration, failover and labels call
        # these too), and MatrixOne's error answers
        provider = RpcAdminProvider(dialer=proxying, timeout=5.0)
        admin = provider.admin(names.discovery_address("mo", world.namespace))
        [left] = await world.pods(**{labels.INSTANCE: "mo-tp"})
        uuid = left["metadata"]["labels"][labels.CN_UUID]
        try:
            await admin.set_cn_labels(uuid, {"role": ("tp",)})
            await admin.set_cn_work_state(uuid, WorkState.WORKING, {})
            older = ("GetPipelineInfo", "GetReplicaCount")
            mo.faults.set("not_supported", lambda call: call.method in older)
            await admin.cn_load(uuid)  # an older CN's ErrNotSupported answers
            mo.faults.clear()
            with pytest.raises(StoreNotFound):
                await admin.set_cn_work_state("missing", WorkState.DRAINING)
        finally:
            await provider.close()
    finally:
        await operator.stop()
        await proxying.stop()
    seen = {call.method for call in mo.calls}
    wanted = {
        "GET_SHARD_INFO",
        "CHECK_HAKEEPER",
        "GET_CLUSTER_STATE",
        "GET_CLUSTER_DETAILS",
        "PATCH_CN_STORE",
    }
    wanted |= {"UPDATE_CN_LABEL", "DELETE_CN_STORE", "GetPipelineInfo", "ShowProcessList", "GetReplicaCount"}
    wanted |= {"SetRestartService", "CanRestartService", "RemainTxnInService"}
    assert wanted <= seen, f"not asked: {wanted - seen}"
    frames = proxying.frames()
    undecoded = [f for f in frames if "matrixone_decode_error" in f or "error" in f]
    assert not undecoded, undecoded[:3]
    requests = [f for f in frames if f["dir"] == "c2s" and not f.get("internal")]
    answers = [f for f in frames if f["dir"] == "s2c" and not f.get("internal")]
    assert len(requests) >= len(wanted) and answers
    assert all(f["reencode_identical"] for f in requests), [
        f["matrixone_decoded"] for f in requests if not f["reencode_identical"]
    ][:3]
