"""``mo-operator`` as a subprocess, as a pod or a user runs it: its stderr is
read as it comes, so a test waits for what the process said, signals it, and
checks how it ended."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp

STOP_SECONDS = 10.0
"""How long a signalled process may take to exit: "a few seconds", with room
for a loaded CI machine (a pod's grace period is 30 s)."""


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    """Poll ``check`` until it is true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting until {what}")
        await asyncio.sleep(0.1)


def run_with_webhook_url(kubeconfig: Path, webhook_port: int) -> list[str]:
    """``mo-operator run`` as an operator outside the cluster runs: its webhooks
    registered by URL and served on ``webhook_port``, no leader election, no
    probe or metrics port to collide with another test's."""
    return [
        "run",
        "--kubeconfig",
        str(kubeconfig),
        "--webhook-url",
        f"https://127.0.0.1:{webhook_port}",
        "--webhook-host",
        "127.0.0.1",
        "--webhook-port",
        str(webhook_port),
        "--no-leader-elect",
        "--health-probe-bind-address",
        "0",
        "--metrics-bind-address",
        "0",
    ]


class Command:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._said = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, *args: str, cwd: Path | None = None) -> Command:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "mo_operator.cli",
            *args,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            self.lines.append(raw.decode(errors="replace").rstrip("\n"))
            self._said.set()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def said(self, pattern: str) -> list[str]:
        return [line for line in self.lines if re.search(pattern, line)]

    async def wait_for(self, pattern: str, timeout: float = 60.0) -> str:
        """The first line matching ``pattern``, once the process has said it."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.said(pattern)
            if found:
                return found[0]
            if self.proc.returncode is not None or self._reader.done():
                raise AssertionError(
                    f"exited ({self.proc.returncode}) without saying {pattern!r}:\n{self.output}"
                )
            self._said.clear()
            try:
                await asyncio.wait_for(self._said.wait(), max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise AssertionError(f"never said {pattern!r} within {timeout}s:\n{self.output}") from None

    async def exit_code(self, timeout: float) -> int:
        await asyncio.wait_for(self.proc.wait(), timeout)
        await self._reader
        return self.proc.returncode or 0

    async def signal_and_wait(self, sig: int = signal.SIGTERM, timeout: float = STOP_SECONDS) -> int:
        """Signal the process; its exit code, which it must reach within ``timeout`` seconds."""
        self.proc.send_signal(sig)
        try:
            return await self.exit_code(timeout)
        except TimeoutError:
            raise AssertionError(f"still running {timeout}s after signal {sig}:\n{self.output}") from None

    async def kill(self) -> None:
        """The end of every test: a process the test did not stop is killed."""
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()
        await self._reader


async def http_get(url: str) -> tuple[int, str]:
    """Status and body; (0, error) when nothing answers."""
    try:
        async with aiohttp.ClientSession() as session, session.get(url) as resp:
            return resp.status, await resp.text()
    except aiohttp.ClientError as e:
        return 0, str(e)
