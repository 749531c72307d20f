"""The ``mo-operator`` command's entry point: SIGTERM and SIGINT handled from its
first instruction.

Python's default SIGTERM kills the process at once (exit 143, nothing cleaned up),
and loading the command (its imports) takes a second or more: a pod stopped during
that second would be reported killed, not stopped. So :func:`main` installs its own
handlers before it imports anything else. A signal that comes while the command is
still loading ends the process at once with exit 0: nothing has started, so there
is nothing to stop, and raising from a handler there is not enough, since an
exception raised in the middle of some library's import or in a finaliser can be
swallowed on its way up. Once loaded, a signal raises ``SystemExit(0)`` and is
remembered (:func:`received`), so :class:`.shutdown.Shutdown` stops at once if one
came before it took the signals over; asyncio puts the defaults back when its loop
closes, and :func:`main` installs these handlers again for what is left of the
process.
"""

from __future__ import annotations

import os
import signal
from types import FrameType

__all__ = ["arm", "main", "received"]

SIGNALS = (signal.SIGTERM, signal.SIGINT)

_loading = True
_received: signal.Signals | None = None


def _exit(signum: int, frame: FrameType | None) -> None:
    global _received
    _received = signal.Signals(signum)
    if _loading:
        os._exit(0)
    raise SystemExit(0)


def arm() -> None:
    """From now on, SIGTERM or SIGINT ends the process with exit code 0."""
    for sig in SIGNALS:
        signal.signal(sig, _exit)


def received() -> signal.Signals | None:
    """The signal that came before the command's own handlers took over, if any."""
    return _received


def main() -> None:
    global _loading
    arm()
    try:
        from .main import main as command

        _loading = False
        command(prog_name="mo-operator")
    finally:
        arm()
