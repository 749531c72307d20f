"""A restarted server keeps its state (--data-dir, as etcd does for
kube-apiserver), and the test-only fault hooks and request log work."""

from __future__ import annotations

import asyncio
import os
import ssl
from pathlib import Path

import aiohttp

from mo_devkit.localcluster.controlplane import ControlPlane

from .conftest import Raw, cm

NS = "/api/v1/namespaces/default"


async def test_restart_with_data_dir_keeps_objects_and_the_counter(tmp_path: Path) -> None:
    """After a restart objects, uids and the resourceVersion counter survive;
    a watch from a pre-restart version gets 410 since the watch cache starts
    fresh (kube-apiserver re-initialises its watch cache from etcd)."""
    data = tmp_path / "data"
    cp = ControlPlane(data_dir=data, simulate_workloads=False)
    await cp.start(tmp_path / "kc")
    async with aiohttp.ClientSession() as s:
        raw = Raw(cp, s)
        _, obj = await raw.post(f"{NS}/configmaps", cm("keep", {"a": "1"}))
        await raw.post(f"{NS}/configmaps", cm("gone"))
        await raw.delete(f"{NS}/configmaps/gone")
        _, lst = await raw.get(f"{NS}/configmaps")
        rv_before = int(lst["metadata"]["resourceVersion"])
    port, token = cp.server.port, cp.server.token
    await cp.stop()

    cp2 = ControlPlane(data_dir=data, port=port, simulate_workloads=False)
    await cp2.start(tmp_path / "kc2")
    try:
        assert cp2.server.token == token
        async with aiohttp.ClientSession() as s:
            raw = Raw(cp2, s)
            code, again = await raw.get(f"{NS}/configmaps/keep")
            assert code == 200
            assert again["metadata"]["uid"] == obj["metadata"]["uid"]
            assert again["data"] == {"a": "1"}
            code, _ = await raw.get(f"{NS}/configmaps/gone")
            assert code == 404
            _, created = await raw.post(f"{NS}/configmaps", cm("after"))
            assert int(created["metadata"]["resourceVersion"]) > rv_before
            events = await raw.watch(
                f"{NS}/configmaps", {"resourceVersion": str(rv_before - 1)}, max_events=1
            )
            assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    finally:
        await cp2.stop()


def _modes(root: Path) -> dict[str, int]:
    """The permission bits of ``root`` and of everything under it, by relative path."""
    found = {".": root.stat().st_mode & 0o777}
    for path in root.rglob("*"):
        found[str(path.relative_to(root))] = path.stat().st_mode & 0o777
    return found


async def test_the_data_dir_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    """It holds the CA key, the admin token and every object, Secrets included: each
    file 0600 and each directory 0700 whatever the umask, and a directory left with
    wider permissions is narrowed when the server opens it again."""
    data = tmp_path / "data"
    old_umask = os.umask(0)
    try:
        cp = ControlPlane(data_dir=data, simulate_workloads=False)
        await cp.start(tmp_path / "kc")
        async with aiohttp.ClientSession() as s:
            secret = {"metadata": {"name": "s3"}, "stringData": {"AWS_SECRET_ACCESS_KEY": "k"}}
            await Raw(cp, s).post(f"{NS}/secrets", secret)
        await cp.stop()
        modes = _modes(data)
        assert {"token", "ca.key", "ca.crt", "store.jsonl"} <= set(modes), modes
        assert modes == {p: 0o700 if (data / p).is_dir() else 0o600 for p in modes}, modes
        assert (tmp_path / "kc").stat().st_mode & 0o777 == 0o600

        for path in [data, *data.iterdir()]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        cp = ControlPlane(data_dir=data, simulate_workloads=False)
        await cp.start(tmp_path / "kc")
        await cp.stop()
        assert set(_modes(data).values()) <= {0o600, 0o700}, _modes(data)
    finally:
        os.umask(old_umask)


async def test_injected_failures_and_retry_after(raw: Raw, control_plane: ControlPlane) -> None:
    control_plane.server.faults.fail_next(2, 429, retry_after=3)
    code, err = await raw.get(f"{NS}/configmaps")
    assert code == 429 and err["reason"] == "TooManyRequests"
    code, _ = await raw.get(f"{NS}/configmaps")
    assert code == 429
    code, _ = await raw.get(f"{NS}/configmaps")
    assert code == 200
    control_plane.server.faults.fail_next(1, 500)
    code, err = await raw.get(f"{NS}/configmaps")
    assert code == 500 and err["reason"] == "InternalError"


async def test_dropped_watches_end_their_streams(raw: Raw, control_plane: ControlPlane) -> None:
    async def drop() -> None:
        await asyncio.sleep(0.2)
        control_plane.server.store.drop_watchers()

    task = asyncio.create_task(drop())
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await raw.watch(f"{NS}/configmaps", {"resourceVersion": "1"}, timeout=5)
    await task
    assert loop.time() - t0 < 3


async def test_stalled_watch_sends_nothing(raw: Raw, control_plane: ControlPlane) -> None:
    control_plane.server.watch_settings.stalled = True
    _, obj = await raw.post(f"{NS}/configmaps", cm("a"))

    async def write() -> None:
        await asyncio.sleep(0.1)
        await raw.post(f"{NS}/configmaps", cm("b"))

    task = asyncio.create_task(write())
    events = await raw.watch(
        f"{NS}/configmaps",
        {"resourceVersion": obj["metadata"]["resourceVersion"], "allowWatchBookmarks": "true"},
        timeout=1.5,
    )
    await task
    assert events == []


async def test_request_log_counts_writes_by_manager(raw: Raw, control_plane: ControlPlane) -> None:
    await raw.post(f"{NS}/configmaps", cm("x"), params={"fieldManager": "me"})
    await raw.get(f"{NS}/configmaps/x")
    writes = control_plane.server.faults.writes(field_manager="me")
    assert [(w.verb, w.resource, w.name, w.code) for w in writes] == [("create", "configmaps", "", 201)]
    code, body = await raw.get("/localcluster/requests")
    assert code == 200 and any(r["verb"] == "get" and r["name"] == "x" for r in body["items"])


async def test_a_connection_that_outlives_the_server_is_answered_by_nothing(tmp_path: Path) -> None:
    """A client that connected while the server stopped, its TLS handshake not yet
    done (an informer reconnecting after the stop dropped its watch), must not be
    served by the stopped server's store, which no longer sees a write: as when a
    kube-apiserver process is gone, that connection is closed."""
    cp = ControlPlane(data_dir=tmp_path / "data", simulate_workloads=False)
    await cp.start(tmp_path / "kc")
    host, port, token = cp.server.host, cp.server.port, cp.server.token
    reader, writer = await asyncio.open_connection(host, port)  # accepted; no handshake yet
    await cp.stop()
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        await writer.start_tls(context)
        writer.write(
            f"GET {NS}/configmaps HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n\r\n".encode()
        )
        await writer.drain()
        status_line = await asyncio.wait_for(reader.readline(), 10)
    except (ConnectionError, ssl.SSLError):
        status_line = b""
    finally:
        writer.close()
    assert not status_line.startswith(b"HTTP/1.1 200"), status_line
