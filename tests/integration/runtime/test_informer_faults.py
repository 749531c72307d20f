"""A shared informer against the embedded API server under the faults a real
one produces: dropped watches, 410 Gone, a silently stalled watch, a 429
storm and a server restart. After each, the cache, the handlers' view and
the server's objects agree, and no change was delivered twice (or, where the
server kept its history, missed).

The behaviour mirrors client-go's reflector (``tools/cache/reflector.go``):
resume a watch from the last resourceVersion seen, events' or bookmarks';
relist on "too old resource version" (410); back off on errors, 429
included (``isWatchErrorRetriable``/``backoffManager``); and the informer's
``DeltaFIFO.Replace`` for what a relist reports
(https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import time
from pathlib import Path

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.client.client import ApiClient

from .conftest import ClientFactory, make_client, make_informers
from .ledger import (
    CONFIGMAPS,
    Ledger,
    TrackedWriter,
    assert_exactly_once,
    assert_folded_at_most_once,
    cache_state,
    converged,
    eventually,
)

NS = "default"


async def start_informer(client: ApiClient) -> tuple[SharedInformer, Ledger]:
    informer = make_informers(client).informer(CONFIGMAPS, NS)
    ledger = Ledger().register(informer)
    informer.start()
    assert await informer.wait_synced(5)
    return informer, ledger


async def test_dropped_watches_resume_from_the_last_version(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    writer = TrackedWriter(clients("writer"), NS)
    for name in ("a", "b", "c"):
        await writer.create(name)
    informer, ledger = await start_informer(clients("informer"))
    try:
        for round_ in range(4):
            await writer.update("a")
            await writer.create(f"new-{round_}")
            control_plane.server.store.drop_watchers()
            await writer.update("b")
            if round_ == 2:
                await writer.delete("c")
            await asyncio.sleep(0.05)
            control_plane.server.store.drop_watchers()
        await converged(control_plane, informer, ledger, NS)
        assert_exactly_once(ledger, writer)
        assert informer.relists == 0
        assert informer.restarts.get("timeout", 0) >= 4  # each drop ended a watch
    finally:
        await informer.stop()


@pytest.mark.parametrize("how", ["expire_history", "small_history"])
async def test_410_gone_relists_without_spurious_events(tmp_path: Path, how: str) -> None:
    """While the informer cannot watch, objects change; when it resumes from
    a version the server no longer has, it gets 410, relists, and reports
    only real differences: nothing for an unchanged object, one update for
    a changed one, a tombstone for a deleted one, and a delete then an add
    for one deleted and re-created under the same name (new uid)."""
    cp = ControlPlane(history_size=20 if how == "small_history" else 1000, simulate_workloads=False)
    await cp.start(tmp_path / "kubeconfig")
    writer_client, informer_client = make_client(cp, "writer"), make_client(cp, "informer")
    writer = TrackedWriter(writer_client, NS)
    for name in ("same", "changed", "deleted", "recreated"):
        await writer.create(name)
    informer, ledger = await start_informer(informer_client)
    try:
        await converged(cp, informer, ledger, NS)
        before = len(ledger.upserts)
        cp.server.faults.fail_next(10**6, 503, user_agent="informer")  # it cannot watch meanwhile
        cp.server.store.drop_watchers()
        for _ in range(25 if how == "small_history" else 1):
            await writer.update("changed")
        await writer.delete("deleted")
        await writer.delete("recreated")
        await writer.create("recreated")
        await writer.create("added")
        if how == "expire_history":
            cp.server.store.expire_history()
        cp.server.faults.fail_count = 0
        state = await converged(cp, informer, ledger, NS)
        assert_folded_at_most_once(ledger, writer)
        assert informer.relists == 1
        assert informer.restarts.get("expired", 0) == 1
        assert sorted(ledger.upserts[before:]) == sorted(
            [(f"{NS}/{n}", state[f"{NS}/{n}"]) for n in ("changed", "recreated", "added")]
        )
        assert sorted(ledger.tombstones) == [f"{NS}/deleted", f"{NS}/recreated"]
    finally:
        await informer.stop()
        await writer_client.close()
        await informer_client.close()
        await cp.stop()


async def test_silently_stalled_watch_is_detected_and_restarted(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    """A watch that sends nothing, not even bookmarks, for longer than the
    stall bound is abandoned and opened again (client-go relies on the
    server's watch timeout for this; we also bound silence on our side)."""
    writer = TrackedWriter(clients("writer"), NS)
    informer, ledger = await start_informer(clients("informer"))
    try:
        await writer.create("before")
        await converged(control_plane, informer, ledger, NS)
        control_plane.server.watch_settings.stalled = True
        await writer.create("during")
        await writer.update("before")
        await asyncio.sleep(0.3)
        assert f"{NS}/during" not in cache_state(informer)  # the stall is real
        await eventually(lambda: informer.restarts.get("stalled", 0) >= 1, 5, "stall detection")
        control_plane.server.watch_settings.stalled = False
        await writer.create("after")
        await converged(control_plane, informer, ledger, NS)
        assert_exactly_once(ledger, writer)
        assert informer.relists == 0
    finally:
        control_plane.server.watch_settings.stalled = False
        await informer.stop()


async def test_429_storm_honours_retry_after_and_loses_nothing(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    """Every request meets 429 for a while: the client retries each write no
    sooner than the server's Retry-After (client-go ``rest/with_retry.go``),
    and the informer backs off and resumes its watch without a relist."""
    writer = TrackedWriter(clients("writer"), NS)
    names = [f"cm-{i}" for i in range(4)]
    for name in names:
        await writer.create(name)
    informer, ledger = await start_informer(clients("informer"))
    try:
        await converged(control_plane, informer, ledger, NS)
        t0 = time.time()
        control_plane.server.faults.fail_next(12, 429, retry_after=1)
        control_plane.server.store.drop_watchers()
        await asyncio.gather(*(writer.update(n) for n in names))
        await converged(control_plane, informer, ledger, NS)
        assert_exactly_once(ledger, writer)
        assert informer.relists == 0

        attempts = collections.defaultdict(list)
        for r in control_plane.server.faults.writes(user_agent="writer", since=t0):
            attempts[r.name].append((r.time, r.code))
        throttled = [a for a in attempts.values() if a[0][1] == 429]
        assert throttled, "the storm did not reach the writer"
        for tries in attempts.values():
            assert tries[-1][1] == 200
            for (t_prev, code), (t_next, _) in itertools.pairwise(tries):
                assert code == 429
                assert t_next - t_prev >= 0.95, f"retried after {t_next - t_prev:.2f}s, Retry-After was 1s"
    finally:
        await informer.stop()


async def test_api_server_restart_with_data_dir(tmp_path: Path) -> None:
    """The server goes away and comes back on the same port with its data
    dir (etcd keeps the objects, the watch cache starts empty): the informer
    rides out the refused connections, gets 410 for its old version, relists
    and ends equal to the server, changes made while it was away included."""
    data = tmp_path / "data"
    cp = ControlPlane(data_dir=data, simulate_workloads=False, bookmark_interval=0.5)
    await cp.start()
    informer_client = make_client(cp, "informer")
    writer_client = make_client(cp, "writer")
    writer = TrackedWriter(writer_client, NS)
    cp2: ControlPlane | None = None
    informer, ledger = await start_informer(informer_client)
    try:
        for name in ("kept", "changed", "deleted"):
            await writer.create(name)
        await converged(cp, informer, ledger, NS)
        cp.server.faults.fail_next(10**6, 503, user_agent="informer")
        cp.server.store.drop_watchers()
        await writer.update("changed")  # unseen by the informer before the restart
        await writer.delete("deleted")
        await cp.stop()
        await writer_client.close()
        await asyncio.sleep(0.3)  # refused connections meanwhile

        cp2 = ControlPlane(
            data_dir=data, port=cp.server.port, simulate_workloads=False, bookmark_interval=0.5
        )
        await cp2.start()
        writer_client = make_client(cp2, "writer")
        writer.client = writer_client
        await writer.create("after-restart")
        await converged(cp2, informer, ledger, NS)
        assert_folded_at_most_once(ledger, writer)
        assert informer.relists >= 1
        assert ledger.tombstones == [f"{NS}/deleted"]
        assert set(cache_state(informer)) == {f"{NS}/{n}" for n in ("kept", "changed", "after-restart")}
    finally:
        await informer.stop()
        await informer_client.close()
        await writer_client.close()
        if cp2 is not None:
            await cp2.stop()
