"""MatrixOne's own morpc codec, client and servers, as ``../shared/mo-peer``'s binary
offers them (its README): one-shot commands (``encode``, ``client``) and long-running
ones (``serve``, ``proxy``) whose JSON lines are collected as they come.

A proxying dialer puts ``peer proxy`` between the operator's client and the simulated
MatrixOne: every connection the client opens goes through a proxy (one per server) that
decodes every frame both ways with MatrixOne's codec."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
from pathlib import Path
from typing import Any

from mo_devkit.localcluster.envtest import free_port
from mo_operator.matrixone import ports

ROOT = Path(__file__).resolve().parents[3]
UNPACK = ROOT.parent / "shared" / "mo-peer" / "unpack"
KINDS = {ports.LOG_SERVICE: "log", ports.CN_QUERY: "query", ports.TN_LOCK_SERVICE: "lock"}
"""Which codec a port speaks: the log service's, a CN's query service's, a TN's lock service's."""

Line = dict[str, Any]


def unpack(into: Path) -> Path:
    """The peer binary, unpacked by ``../shared/mo-peer/unpack`` as CI does."""
    out = subprocess.run([str(UNPACK), str(into)], check=True, capture_output=True, text=True)
    return Path(out.stdout.strip().splitlines()[-1])


class Running:
    """A long-running peer command and the JSON lines it printed so far."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[Line] = []
        self._ready = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for raw in self.process.stdout:
            if not raw.startswith(b"{"):
                continue  # MatrixOne's own log lines (zap) go to stdout too
            line = json.loads(raw)
            self.lines.append(line)
            if line.get("event") == "ready":
                self._ready.set()
            if line.get("event") == "fatal":
                self._ready.set()

    async def ready(self) -> None:
        async with asyncio.timeout(10):
            await self._ready.wait()
        fatal = [line for line in self.lines if line.get("event") == "fatal"]
        assert not fatal, fatal

    async def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


class Peer:
    def __init__(self, binary: Path) -> None:
        self.binary = binary

    async def once(self, *args: str) -> list[Line]:
        """A one-shot command's JSON lines."""
        process = await asyncio.create_subprocess_exec(
            str(self.binary), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
        )
        out, err = await asyncio.wait_for(process.communicate(), 20)
        lines = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
        assert process.returncode == 0, (args, lines, err.decode())
        return lines

    async def start(self, *args: str) -> Running:
        process = await asyncio.create_subprocess_exec(
            str(self.binary), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        running = Running(process)
        try:
            await running.ready()
        except BaseException:
            await running.stop()
            raise
        return running


class ProxyingDialer:
    """A dialer that reaches the simulated MatrixOne's servers (by its address book) through
    one ``peer proxy`` per server, so MatrixOne's codec reads every frame both ways."""

    def __init__(self, peer: Peer, book: Any) -> None:
        self.peer = peer
        self.book = book
        self.proxies: dict[int, tuple[int, Running]] = {}

    async def __call__(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        found = self.book().lookup(host, port)
        if not found:
            raise ConnectionRefusedError(f"{host}:{port}: nothing listens (or no such name)")
        target = found[0]
        if target not in self.proxies:
            listen = free_port()
            proxy = await self.peer.start(
                "proxy", "-listen", f"127.0.0.1:{listen}", "-to", f"127.0.0.1:{target}", "-kind", KINDS[port]
            )
            self.proxies[target] = (listen, proxy)
        return await asyncio.open_connection("127.0.0.1", self.proxies[target][0])

    def frames(self) -> list[Line]:
        return [
            line for _, proxy in self.proxies.values() for line in proxy.lines if line.get("event") == "frame"
        ]

    async def stop(self) -> None:
        for _, proxy in self.proxies.values():
            await proxy.stop()
