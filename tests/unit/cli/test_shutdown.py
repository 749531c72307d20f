"""A signal the entry point took before the command's own handlers were in place
is not lost: the command stops as if it came once they are."""

from __future__ import annotations

import asyncio
import signal

import pytest

from mo_operator.cli import entry
from mo_operator.cli.shutdown import Interrupted, Shutdown


async def test_a_signal_taken_while_loading_stops_the_command_once_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(entry, "_received", signal.SIGINT)
    shutdown = Shutdown().install()
    try:
        assert shutdown.requested.is_set() and shutdown.received is signal.SIGINT
        stopped: list[bool] = []
        shutdown.on_signal(lambda: stopped.append(True))
        assert stopped == [True]
        with pytest.raises(Interrupted):
            await shutdown.interruptible(asyncio.Event().wait())
    finally:
        _uninstall()


async def test_without_an_early_signal_the_command_runs_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entry, "_received", None)
    shutdown = Shutdown().install()
    try:
        assert not shutdown.requested.is_set()
        assert await shutdown.interruptible(_now()) == "done"
    finally:
        _uninstall()


async def _now() -> str:
    return "done"


def _uninstall() -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.remove_signal_handler(sig)
