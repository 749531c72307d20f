"""The ``mo-operator`` command's entry point: SIGTERM and SIGINT handled from its
first instruction.

Python's default SIGTERM kills the process at once (exit 143, nothing cleaned up),
and loading the command (its imports) takes a second or more: a pod stopped during
that second would be reported killed, not stopped. So :func:`main` installs its own
handlers before it imports anything else, and a signal that comes while the command
is still loading ends it with exit 0: nothing has started, so there is nothing to
stop gracefully. Once a command runs its event loop, :class:`.shutdown.Shutdown`
takes the signals over and stops each stage gracefully; asyncio puts the defaults
back when that loop closes, and :func:`main` installs these handlers again for what
is left of the process.
"""

from __future__ import annotations

import signal
from types import FrameType

__all__ = ["arm", "main"]

SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


def arm() -> None:
    """From now on, SIGTERM or SIGINT ends the process with exit code 0."""
    for sig in SIGNALS:
        signal.signal(sig, _exit)


def main() -> None:
    arm()
    try:
        from .main import main as command

        command(prog_name="mo-operator")
    finally:
        arm()
