"""Property: whatever mix of creates, updates, deletes and faults (dropped,
ended, silent and expired watches, failing lists) hits the server, the
informer's cache ends equal to the server's state, the handlers' view
(replaying add/update/delete) ends equal too, and no change is delivered
twice. Without 410s — where client-go's relist legitimately folds several
changes into one (``DeltaFIFO.Replace``) — every change is delivered exactly
once, in order."""

from __future__ import annotations

import asyncio
from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.frozen import thaw

from .fakes import FakeListerWatcher, FakeServer
from .informer_helpers import Recorder, eventually, make_informer

NAMES = [f"o{i}" for i in range(4)]

_write = st.tuples(st.sampled_from(["create", "update", "delete"]), st.sampled_from(NAMES))
_fault = st.tuples(st.sampled_from(["drop", "end", "bookmark", "expire", "stall", "fail_list"]), st.just(""))
_pause = st.tuples(st.just("yield"), st.sampled_from(["1", "3", "10"]))
OPS = st.lists(st.one_of(_write, _write, _write, _fault, _pause), max_size=40)

_KIND = {"ADDED": "add", "MODIFIED": "update", "DELETED": "delete"}


async def _scenario(ops: list[tuple[str, str]]) -> None:
    server = FakeServer()
    server.create("o0", v="initial")
    lw = FakeListerWatcher(server)
    informer = make_informer(lw, stall_timeout=0.02, page_size=2)
    rec = Recorder().register(informer)
    informer.start()
    expired = False
    counter = 0
    try:
        assert await informer.wait_synced(2)
        for op, arg in ops:
            counter += 1
            exists = f"default/{arg}" in server.objects
            if op == "create" or (op == "update" and not exists):
                if exists:
                    server.update(arg, v=str(counter))
                else:
                    server.create(arg, v=str(counter))
            elif op == "update":
                server.update(arg, v=str(counter))
            elif op == "delete" and exists:
                server.delete(arg)
            elif op == "drop":
                lw.drop()
            elif op == "end":
                lw.end()
            elif op == "bookmark":
                lw.bookmark()
            elif op == "expire":
                expired = True
                server.compact()
                lw.drop()
            elif op == "stall" and lw.sessions:
                lw.current.stalled = True
            elif op == "fail_list":
                lw.list_failures.append(ApiError(500, "InternalError", "injected"))
            elif op == "yield":
                for _ in range(int(arg)):
                    await asyncio.sleep(0)

        def converged() -> bool:
            if informer.last_resource_version != str(server.rv):
                return False  # still behind, even if the states happen to agree
            cached = {k: informer.store.get_by_key(k) for k in informer.store.list_keys()}
            return {k: thaw(o) for k, o in cached.items()} == server.state()

        await eventually(converged, timeout=5, what="the cache to match the server")
        assert rec.violations == []
        assert rec.model == server.state()
        delivered = Counter((kind, k, rv) for kind, k, rv in rec.events if kind != "delete")
        assert all(n == 1 for n in delivered.values()), delivered
        if not expired:
            expected = [
                (_KIND[c.type], f"default/{c.obj['metadata']['name']}", str(c.rv)) for c in server.history
            ]
            assert rec.events == expected
    finally:
        await informer.stop()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPS)
def test_cache_converges_to_server_state_and_each_change_is_delivered_once(
    ops: list[tuple[str, str]],
) -> None:
    asyncio.run(_scenario(ops))
