"""Decoding a Kubernetes watch stream, with bookmarks and expiry.

lightkube's watch hides BOOKMARK events and restarts on its own; an informer
needs both: bookmarks to keep its resume point fresh on quiet resources, and
control over what happens on 410 Gone (relist). So the client opens the
streaming request itself and this module turns its body into
``(type, object)`` pairs: one JSON document per line, decoded with msgspec
straight from bytes.

A watch whose resourceVersion has left the server's history ends in an
``ERROR`` event carrying a ``Status`` with code 410 (reason ``Expired``, or
``Gone`` on older servers) or, on some paths, an HTTP 410 answer; both become
``WatchExpired`` (see client-go ``tools/cache/reflector.go``,
``isExpiredError``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import msgspec

from ..meta.errors import ApiError, Gone

ADDED, MODIFIED, DELETED, BOOKMARK, ERROR = "ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"
EVENT_TYPES = frozenset((ADDED, MODIFIED, DELETED, BOOKMARK, ERROR))

WatchEvent = tuple[str, dict[str, Any]]

_decoder = msgspec.json.Decoder()


class WatchExpired(Gone):
    """The watch's resourceVersion is too old (410 Gone): the caller must
    list again and watch from the new list's resourceVersion."""

    def __init__(self, message: str = "resource version too old", reason: str = "Expired") -> None:
        super().__init__(410, reason, message)


def error_from_status(status: Mapping[str, Any]) -> ApiError:
    """The exception for a watch ``ERROR`` event's Status object."""
    code = status.get("code")
    reason = str(status.get("reason") or "")
    if code == 410 or reason in ("Expired", "Gone"):
        return WatchExpired(str(status.get("message") or "resource version too old"), reason or "Expired")
    return ApiError.from_status(status)


def decode_event(line: bytes) -> WatchEvent:
    """One watch line to ``(type, object)``; ERROR events are raised."""
    try:
        event = _decoder.decode(line)
        event_type, obj = event["type"], event["object"]
    except (msgspec.DecodeError, KeyError, TypeError) as e:
        raise ValueError(f"malformed watch event: {line[:200]!r}") from e
    if event_type == ERROR:
        raise error_from_status(obj if isinstance(obj, dict) else {})
    if event_type not in EVENT_TYPES or not isinstance(obj, dict):
        raise ValueError(f"unexpected watch event type {event_type!r}")
    return event_type, obj


async def decode_stream(chunks: AsyncIterator[bytes]) -> AsyncIterator[WatchEvent]:
    """Split a byte stream into lines and decode each as a watch event."""
    buffer = b""
    async for chunk in chunks:
        buffer += chunk
        if b"\n" not in buffer:
            continue
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield decode_event(line)
    if buffer.strip():
        yield decode_event(buffer)
