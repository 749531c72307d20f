"""Waiting on what a user would see: a check polled until it holds, and the one
reading of ``Ready`` every test and benchmark shares.

``is_ready`` counts a ``Ready=True`` only when the status was written for the
object's latest generation: right after a spec change the old ``Ready=True``
still shows, and a check that believed it would pass before the controller
had even looked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from mo_operator.kube.meta.conditions import get_condition
from mo_operator.kube.meta.errors import ApiConnectionError


async def eventually(
    check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1, message: str = ""
) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy; return that."""
    last: Any = None
    try:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    last = check()
                    if asyncio.iscoroutine(last):
                        last = await last
                except Exception as e:
                    if not transient(e):
                        raise
                    last = e  # the API server restarts or throttles: ask again
                else:
                    if last:
                        return last
                await asyncio.sleep(interval)
    except TimeoutError:
        raise AssertionError(f"not true after {timeout}s: {message or check} (last: {last!r})") from None


class Unmet:
    """A check's "not yet", with what it saw: falsy for ``eventually``, and the
    words its timeout reports (a bare ``False`` tells nothing of where things stuck)."""

    __slots__ = ("seen",)

    def __init__(self, seen: str) -> None:
        self.seen = seen

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return self.seen


def transient(e: Exception) -> bool:
    """An API error a client rides out: the server is away, overloaded or throttling."""
    if isinstance(e, (ConnectionError, OSError, ApiConnectionError, TimeoutError)):
        return True
    status = getattr(e, "status", 0)
    return bool(status == 429 or status >= 500)


def condition(obj: Mapping[str, Any] | None, ctype: str) -> Mapping[str, Any]:
    """The object's condition of type ``ctype``; empty when it has none."""
    found = get_condition(((obj or {}).get("status") or {}).get("conditions") or (), ctype)
    return found or {}


def observed(obj: Mapping[str, Any] | None) -> bool:
    """The status was written for the object's latest generation."""
    meta, status = (obj or {}).get("metadata") or {}, (obj or {}).get("status") or {}
    return int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    """``Ready=True``, reported for the latest generation."""
    return obj is not None and condition(obj, "Ready").get("status") == "True" and observed(obj)


def is_settled(obj: Mapping[str, Any] | None) -> bool:
    """Ready, and every pod on the current spec (``UpToDate``), at the latest generation."""
    return is_ready(obj) and condition(obj, "UpToDate").get("status") == "True"
