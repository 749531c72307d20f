"""The shared informer against a scripted fake list/watch source.

Behaviour follows client-go: ``tools/cache/reflector.go`` (list then watch
from the list's resourceVersion, resume after a closed watch from the last
seen version, relist on 410 Gone / Expired, bookmarks move the resume point,
server timeouts randomised in [t, 2t)), ``tools/cache/delta_fifo.go``
(``Replace`` reports objects missing from a relist as
``DeletedFinalStateUnknown``) and ``tools/cache/shared_informer.go``
(a late handler first gets adds for everything cached; relisted objects whose
resourceVersion did not change are only "sync" notifications, which we drop).
"""

from __future__ import annotations

from collections import deque

import pytest

from mo_operator.kube.cache.informer import Tombstone, is_tombstone, strip_managed_fields
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.frozen import FrozenDict
from mo_operator.kube.metrics.metrics import REGISTRY

from .fakes import FakeListerWatcher, FakeServer
from .informer_helpers import Recorder, eventually, make_informer


@pytest.fixture
def server() -> FakeServer:
    return FakeServer()


async def test_initial_list_is_paginated_and_delivered_in_resource_version_order(server: FakeServer) -> None:
    for name in ("e", "d", "c", "b", "a"):  # created in reverse name order
        server.create(name)
    lw = FakeListerWatcher(server)
    informer = make_informer(lw, page_size=2)
    rec = Recorder().register(informer)
    informer.start()
    try:
        assert await informer.wait_synced(2)
        assert lw.list_calls == [(2, None), (2, "0:2"), (2, "0:4")]
        assert [e[0] for e in rec.events] == ["add"] * 5
        assert [int(e[2]) for e in rec.events] == [1, 2, 3, 4, 5]
        assert sorted(informer.store.list_keys()) == sorted(server.state())
        assert lw.current.resource_version == "5"  # watch from the list's version
    finally:
        await informer.stop()


async def test_watch_events_reach_handlers_after_the_store(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    seen_in_store: list[str | None] = []

    def on_update(old: FrozenDict, new: FrozenDict) -> None:
        cached = informer.get("default", "a")
        seen_in_store.append(cached["data"]["v"] if cached else None)

    informer.add_event_handler(on_update=on_update)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a", v="1")
        server.update("a", v="2")
        server.delete("a")
        await eventually(lambda: len(rec.events) == 3)
        assert rec.events == [
            ("add", "default/a", "1"),
            ("update", "default/a", "2"),
            ("delete", "default/a", "3"),
        ]
        assert seen_in_store == ["2"]
        assert rec.tombstones == []  # a watched delete carries the final state, not a tombstone
        assert informer.get("default", "a") is None
    finally:
        await informer.stop()


async def test_dropped_watch_resumes_from_last_version_without_relisting(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")
        await eventually(lambda: len(rec.events) == 1)
        lw.drop()
        server.create("b")
        server.update("a", x="1")
        await eventually(lambda: len(rec.events) == 3)
        assert [s.resource_version for s in lw.sessions] == ["0", "1"]
        assert len(lw.list_calls) == 1
        assert rec.events == [
            ("add", "default/a", "1"),
            ("add", "default/b", "2"),
            ("update", "default/a", "3"),
        ]
        assert informer.restarts == {"dropped": 1}
        assert rec.violations == []
    finally:
        await informer.stop()


async def test_watch_ended_by_the_server_is_restarted_at_once(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    informer = make_informer(lw, watch_timeout=10)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")
        await eventually(lambda: informer.get("default", "a") is not None)
        lw.end()
        await eventually(lambda: len(lw.sessions) == 2)
        assert lw.sessions[1].resource_version == "1"
        assert informer.restarts == {"timeout": 1}
        assert all(10 <= s.timeout_seconds < 20 for s in lw.sessions)  # randomised in [t, 2t)
    finally:
        await informer.stop()


async def test_bookmark_moves_the_resume_point(server: FakeServer) -> None:
    """Changes outside the informer's namespace advance the server's version;
    a bookmark tells the informer, so a resume does not replay them."""
    lw = FakeListerWatcher(server, namespace="mine")
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a", namespace="mine")
        for i in range(3):
            server.create(f"other{i}", namespace="elsewhere")
        await eventually(lambda: len(rec.events) == 1)
        assert informer.last_resource_version == "1"
        lw.bookmark()
        await eventually(lambda: informer.last_resource_version == "4")
        lw.drop()
        await eventually(lambda: len(lw.sessions) == 2)
        assert lw.sessions[1].resource_version == "4"
        assert rec.events == [("add", "mine/a", "1")]
    finally:
        await informer.stop()


async def test_relist_after_410_reconciles_without_spurious_events(server: FakeServer) -> None:
    for name in ("same", "changed", "deleted", "recreated"):
        server.create(name)
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        assert len(rec.events) == 4
        old_uid = informer.get("default", "recreated")["metadata"]["uid"]  # type: ignore[index]
        lw.current.stalled = True  # the informer falls behind...
        server.update("changed", v="2")
        server.delete("deleted")
        server.delete("recreated")
        server.create("recreated")
        server.create("added")
        server.compact()  # ...and its version leaves the history
        lw.drop()
        await eventually(lambda: informer.relists == 1 and len(rec.events) == 9)
        assert sorted(rec.events[4:]) == sorted(
            [
                ("delete", "default/deleted", "3"),
                ("delete", "default/recreated", "4"),
                ("update", "default/changed", "5"),
                ("add", "default/recreated", "8"),
                ("add", "default/added", "9"),
            ]
        )
        # deletes first, then changes in resourceVersion order
        assert [e[0] for e in rec.events[4:6]] == ["delete", "delete"]
        assert [int(e[2]) for e in rec.events[6:]] == [5, 8, 9]
        assert sorted(rec.tombstones) == ["default/deleted", "default/recreated"]
        assert informer.get("default", "recreated")["metadata"]["uid"] != old_uid  # type: ignore[index]
        assert {k: o["metadata"]["resourceVersion"] for k, o in server.state().items()} == {
            f"default/{o['metadata']['name']}": o["metadata"]["resourceVersion"] for o in informer.list()
        }
        assert informer.restarts == {"dropped": 1, "expired": 1}
        assert rec.violations == []
        relists = REGISTRY.get_sample_value("informer_relists_total", {"resource": informer.name})
        assert relists == 1.0
        assert REGISTRY.get_sample_value("informer_cached_objects", {"resource": informer.name}) == 4.0
    finally:
        await informer.stop()


async def test_expired_watch_error_event_triggers_a_relist(server: FakeServer) -> None:
    from mo_operator.kube.client.watch import WatchExpired

    server.create("a")
    lw = FakeListerWatcher(server)
    lw.watch_failures.append(WatchExpired("too old"))
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await eventually(lambda: len(lw.list_calls) == 2 and len(lw.sessions) == 2)
        assert rec.events == [("add", "default/a", "1")]  # the relist found nothing new
        assert informer.restarts.get("expired") == 1
    finally:
        await informer.stop()


async def test_silent_watch_is_detected_and_restarted(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    lw.scripted.append({"stalled": True})
    informer = make_informer(lw, stall_timeout=0.05)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")  # never arrives on the stalled watch
        await eventually(lambda: len(rec.events) == 1)
        assert informer.restarts == {"stalled": 1}
        assert lw.sessions[0].closed
        assert lw.sessions[1].resource_version == "0"
        assert rec.events == [("add", "default/a", "1")]
    finally:
        await informer.stop()


async def test_stall_bound_defaults_to_twice_the_watch_timeout(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    informer = make_informer(lw, watch_timeout=30)
    informer.start()
    try:
        await eventually(lambda: len(lw.sessions) == 1)
        assert informer.stall_bound == 2 * lw.sessions[0].timeout_seconds
    finally:
        await informer.stop()


async def test_expired_continue_token_restarts_the_list_unpaginated(server: FakeServer) -> None:
    for name in "abcde":
        server.create(name)

    lw = FakeListerWatcher(server)
    original = server.list_page

    def expire_after_first_page(namespace: str | None, limit: int | None, token: str | None):  # type: ignore[no-untyped-def]
        page = original(namespace, limit, token)
        if token is None and limit is not None:
            server.expire_snapshots()
        return page

    server.list_page = expire_after_first_page  # type: ignore[method-assign]
    informer = make_informer(lw, page_size=2)
    rec = Recorder().register(informer)
    informer.start()
    try:
        assert await informer.wait_synced(2)
        assert lw.list_calls == [(2, None), (2, "0:2"), (None, None)]
        assert len(rec.events) == 5
    finally:
        await informer.stop()


async def test_list_errors_back_off_and_retry(server: FakeServer) -> None:
    server.create("a")
    lw = FakeListerWatcher(server, list_failures=deque([ApiError(500, "InternalError", "boom")] * 2))
    informer = make_informer(lw)
    informer.start()
    try:
        assert await informer.wait_synced(2)
        assert len(lw.list_calls) == 3
        assert informer.restarts == {"error": 2}
        assert informer.relists == 0  # failed lists are not relists
    finally:
        await informer.stop()


async def test_every_handler_gets_every_change_once_even_when_another_fails(server: FakeServer) -> None:
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)

    def broken(*_: object) -> None:
        raise RuntimeError("handler bug")

    informer.add_event_handler(broken, broken, broken)
    first = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")
        server.create("b")
        await eventually(lambda: len(first.events) == 2)
        late = Recorder().register(informer)  # registered after sync: replay of the cache
        assert late.events == [("add", "default/a", "1"), ("add", "default/b", "2")]
        server.update("a", v="1")
        server.delete("b")
        await eventually(lambda: len(first.events) == 4 and len(late.events) == 4)
        assert first.events == late.events
        assert first.violations == late.violations == []
    finally:
        await informer.stop()


async def test_duplicate_event_after_resume_is_not_delivered_twice(server: FakeServer) -> None:
    """A server replaying the event at the resume version must not produce a
    second notification (exactly-once)."""
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")
        await eventually(lambda: len(rec.events) == 1)
        informer._handle("ADDED", server.history[-1].obj)  # the same event again
        assert rec.events == [("add", "default/a", "1")]
    finally:
        await informer.stop()


async def test_cached_and_delivered_objects_are_read_only(server: FakeServer) -> None:
    server.create("a", v="1")
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    received: list[FrozenDict] = []
    informer.add_event_handler(on_add=received.append)
    informer.start()
    try:
        await informer.wait_synced(2)
        obj = received[0]
        with pytest.raises(TypeError):
            obj["data"]["v"] = "2"
        with pytest.raises(TypeError):
            obj["metadata"]["labels"] = {}
        assert informer.get("default", "a")["data"]["v"] == "1"  # type: ignore[index]
    finally:
        await informer.stop()


def test_tombstone_reads_like_the_object_and_is_flagged() -> None:
    last = {"metadata": {"name": "a", "namespace": "ns", "uid": "u1"}}
    t = Tombstone("ns/a", FrozenDict(last))
    assert is_tombstone(t) and t.final_state_unknown and t.key == "ns/a"
    assert t["metadata"]["name"] == "a" and t == last
    with pytest.raises(TypeError):
        t["spec"] = {}
    assert not is_tombstone(FrozenDict(last))


def test_managed_fields_are_stripped_without_touching_the_input() -> None:
    obj = {"metadata": {"name": "a", "managedFields": [{"manager": "x"}]}, "data": {}}
    stripped = strip_managed_fields(obj)
    assert "managedFields" not in stripped["metadata"]
    assert obj["metadata"]["managedFields"] == [{"manager": "x"}]
    plain = {"metadata": {"name": "b"}}
    assert strip_managed_fields(plain) is plain


async def test_events_and_bookmarks_keep_a_watch_from_counting_as_stalled(server: FakeServer) -> None:
    import asyncio

    lw = FakeListerWatcher(server)
    informer = make_informer(lw, stall_timeout=0.15)
    informer.start()
    try:
        await informer.wait_synced(2)
        for i in range(8):  # 0.4 s of traffic, never 0.15 s of silence
            if i % 2:
                lw.bookmark()
            else:
                server.create(f"o{i}")
            await asyncio.sleep(0.05)
        assert "stalled" not in informer.restarts
        assert len(lw.sessions) == 1
    finally:
        await informer.stop()


async def test_re_created_object_seen_only_as_added_is_a_delete_then_an_add(server: FakeServer) -> None:
    """If a DELETED event is lost but the re-creation (new uid) arrives, the
    old incarnation is reported deleted (tombstone) before the new one is added."""
    lw = FakeListerWatcher(server)
    informer = make_informer(lw)
    rec = Recorder().register(informer)
    informer.start()
    try:
        await informer.wait_synced(2)
        server.create("a")
        await eventually(lambda: len(rec.events) == 1)
        lw.current.stalled = True
        server.delete("a")
        server.create("a")
        server.history.pop(-2)  # the DELETED event is lost
        lw.current.stalled = False
        server.poke()
        await eventually(lambda: len(rec.events) == 3)
        assert rec.events[1:] == [("delete", "default/a", "1"), ("add", "default/a", "3")]
        assert rec.tombstones == ["default/a"]
        assert rec.violations == []
    finally:
        await informer.stop()
