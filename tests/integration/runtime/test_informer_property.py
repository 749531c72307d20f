"""Property: whatever sequence of creates, updates, deletes and faults hits
the embedded API server — dropped watches, an informer cut off while the
history expires, silently stalled watches, 429 bursts, a server restart on
its data dir — the informer's cache, its handlers' view and the server's
objects end up equal, and no change reaches a handler twice. Where the
server kept its history (no expiry, no restart) every change is delivered
exactly once; otherwise a relist may fold changes together, as client-go's
``DeltaFIFO.Replace`` does."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client.client import ApiClient

from .conftest import make_client, make_informers
from .ledger import (
    CONFIGMAPS,
    Ledger,
    TrackedWriter,
    assert_exactly_once,
    assert_folded_at_most_once,
    converged,
)

NS = "default"
NAMES = ["a", "b", "c", "d"]

_write = st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from(NAMES))
_fault = st.tuples(
    st.sampled_from(["drop", "block", "unblock", "expire", "stall", "unstall", "throttle", "pause"]),
    st.just(""),
)
_restart = st.tuples(st.just("restart"), st.just(""))
OPS = st.lists(st.one_of(_write, _write, _write, _fault, _fault, _restart), max_size=16)


async def scenario(ops: list[tuple[str, str]], data_dir: Path) -> None:
    cp = ControlPlane(data_dir=data_dir, simulate_workloads=False, bookmark_interval=0.1)
    await cp.start()
    informer_client = make_client(cp, "informer")
    writer_client: ApiClient = make_client(cp, "writer")
    writer = TrackedWriter(writer_client, NS)
    await writer.create("a")
    informer = make_informers(informer_client, stall_timeout=0.5).informer(CONFIGMAPS, NS)
    ledger = Ledger().register(informer)
    informer.start()
    folded = False
    try:
        assert await informer.wait_synced(5)
        for op, name in ops:
            exists = cp.server.store.get("configmaps", NS, name) is not None if name else False
            if op == "create" or (op == "update" and not exists):
                await (writer.update(name) if exists else writer.create(name))
            elif op == "update":
                await writer.update(name)
            elif op == "delete" and exists:
                await writer.delete(name)
            elif op == "drop":
                cp.server.store.drop_watchers()
            elif op == "block":
                cp.server.faults.fail_next(10**6, 503, user_agent="informer")
                cp.server.store.drop_watchers()
            elif op == "unblock":
                cp.server.faults.fail_count = 0
            elif op == "expire":
                cp.server.store.expire_history()
                folded = True
            elif op in ("stall", "unstall"):
                cp.server.watch_settings.stalled = op == "stall"
            elif op == "throttle":
                cp.server.faults.fail_next(3, 429, retry_after=0)
            elif op == "pause":
                await asyncio.sleep(0.05)
            elif op == "restart":
                port = cp.server.port
                await cp.stop()
                await writer_client.close()  # its pooled connections died with the server
                cp = ControlPlane(
                    data_dir=data_dir, port=port, simulate_workloads=False, bookmark_interval=0.1
                )
                await cp.start()
                writer.client = writer_client = make_client(cp, "writer")
                folded = True
        cp.server.faults.fail_count = 0
        cp.server.watch_settings.stalled = False
        await converged(cp, informer, ledger, NS, timeout=8)
        if folded:
            assert_folded_at_most_once(ledger, writer)
        else:
            assert_exactly_once(ledger, writer)
            assert informer.relists == 0
    finally:
        await informer.stop()
        await informer_client.close()
        await writer_client.close()
        await cp.stop()


# No shrinking: each example runs a real server (restarts included), and
# shrinking a failure would take minutes; a failing sequence is short enough
# to read as it is.
@settings(
    max_examples=30,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
@given(OPS)
def test_cache_equals_server_and_no_change_is_delivered_twice(ops: list[tuple[str, str]]) -> None:
    with tempfile.TemporaryDirectory() as d:
        asyncio.run(scenario(ops, Path(d)))
