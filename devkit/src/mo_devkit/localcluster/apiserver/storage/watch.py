"""Watch streams: replay from a resourceVersion (or the current state),
selector transitions (an object leaving a selector is a DELETED event),
bookmarks, the streaming list (``sendInitialEvents``, ended by a bookmark
annotated ``k8s.io/initial-events-end``), timeouts, 410 Gone for versions
that left the history, and the fault hooks that drop or stall watches."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web

from ..encoding.jsonutil import dumps
from ..errors import gone
from ..resources import ResourceType
from .store import Change, Expired, Store, WatchQueue

Obj = dict[str, Any]
Matcher = Callable[[Obj], bool]

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


BOOKMARK_INTERVAL = 60.0
"""Seconds between bookmarks on a watch that asked for them: kube-apiserver's
watch cache sends one about every minute and one 2 s before the watch's
deadline (cacher.go ``defaultBookmarkFrequency``, cache_watcher.go
``nextBookmarkTime``), so an informer must not count on more. Tests of
bookmarks themselves pass less."""

_BEFORE_DEADLINE = 2.0


def _next_bookmark(now: float, interval: float, deadline: float) -> float | None:
    """When the next bookmark is due: after ``interval``, or 2 s before the
    deadline if that is sooner; None once that moment has passed
    (``nextBookmarkTime``)."""
    due = min(now + interval, deadline - _BEFORE_DEADLINE)
    return due if due > now else None


class WatchSettings:
    def __init__(self, bookmark_interval: float = BOOKMARK_INTERVAL, default_timeout: float = 1800.0) -> None:
        self.bookmark_interval = bookmark_interval
        self.default_timeout = default_timeout
        self.stalled = False


def _line(event_type: str, obj_json: bytes) -> bytes:
    return b'{"type":"' + event_type.encode() + b'","object":' + obj_json + b"}\n"


def _encoder(render: Callable[[Obj], bytes] | None) -> Callable[[Change | Obj], bytes]:
    """Events as stored (JSON, reusing a change's encoding) or as ``render`` prints them."""
    if render is None:
        return lambda item: item.encoded_object() if isinstance(item, Change) else dumps(item)
    return lambda item: render(item.object if isinstance(item, Change) else item)


def _start(
    store: Store,
    resource: str,
    namespace: str | None,
    resource_version: str | None,
    matches: Matcher,
    send_initial_events: bool | None,
) -> tuple[int | None, list[Obj]]:
    """Where the stream starts: the version to replay from (None: now) and
    the current objects to send first as ADDED."""
    unversioned = resource_version in (None, "", "0")
    if send_initial_events or (send_initial_events is None and unversioned):
        return None, [o for o in store.list(resource, namespace) if matches(o)]
    if unversioned:
        return None, []
    return int(str(resource_version)), []  # the handler refused versions that are not numbers


def _drain(q: WatchQueue, matches: Matcher, encode: Callable[[Change | Obj], bytes]) -> bytes:
    batch = []
    while q.items:
        line = _event_line(q.items.popleft(), matches, encode)
        if line:
            batch.append(line)
    return b"".join(batch)


async def _stream(
    resp: web.StreamResponse,
    q: WatchQueue,
    store: Store,
    rt: ResourceType,
    matches: Matcher,
    encode: Callable[[Change | Obj], bytes],
    deadline: float,
    bookmarks: bool,
    settings: WatchSettings,
) -> None:
    """Sends changes as they come, and periodic bookmarks if asked, until the
    deadline or the queue closes; a stalled server (fault hook) sends nothing."""
    next_bookmark = (
        _next_bookmark(time.monotonic(), settings.bookmark_interval, deadline) if bookmarks else None
    )
    while not q.closed or q.items:
        now = time.monotonic()
        if now >= deadline:
            break
        if settings.stalled:
            await asyncio.sleep(min(0.2, deadline - now))
            continue
        if q.items:
            batch = _drain(q, matches, encode)
            if batch:
                await resp.write(batch)
            continue
        if q.closed:
            break
        if next_bookmark is not None and now >= next_bookmark:
            await resp.write(_line("BOOKMARK", dumps(_bookmark(rt, store.rv))))
            next_bookmark = _next_bookmark(now, settings.bookmark_interval, deadline)
        wait = min(deadline, next_bookmark if next_bookmark is not None else deadline) - time.monotonic()
        await q.wait(max(0.0, wait))


async def serve_watch(
    request: web.Request,
    store: Store,
    rt: ResourceType,
    namespace: str | None,
    resource_version: str | None,
    matches: Matcher,
    *,
    bookmarks: bool,
    timeout: float | None,
    settings: WatchSettings,
    render: Callable[[Obj], bytes] | None,
    send_initial_events: bool | None = None,
) -> web.StreamResponse:
    """``send_initial_events`` None is the classic watch (current state first
    only when no resourceVersion is given); True streams the current state
    then a bookmark marking its end (a consistent list over the watch); False
    starts at the given version, or now, with no initial state."""
    resp = web.StreamResponse(
        status=200, headers={"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    )
    await resp.prepare(request)
    encode = _encoder(render)
    since, initial = _start(
        store, rt.group_resource, namespace, resource_version, matches, send_initial_events
    )
    try:
        q = store.watch(rt.group_resource, namespace, since)
    except Expired as e:
        await resp.write(_line("ERROR", dumps(gone(str(e)).status())))
        return resp
    initial_rv = store.rv  # the list and the watch start at this version, with no await between
    try:
        for obj in initial:
            await resp.write(_line("ADDED", encode(obj)))
        if send_initial_events:
            await resp.write(
                _line("BOOKMARK", dumps(_bookmark(rt, initial_rv, {INITIAL_EVENTS_END: "true"})))
            )
        deadline = time.monotonic() + (timeout if timeout else settings.default_timeout)
        await _stream(resp, q, store, rt, matches, encode, deadline, bookmarks, settings)
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        store.unwatch(q)
    return resp


def _bookmark(rt: ResourceType, rv: int, annotations: dict[str, str] | None = None) -> Obj:
    meta: Obj = {"resourceVersion": str(rv)}
    if annotations:
        meta["annotations"] = annotations
    return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


def _event_line(change: Change, matches: Matcher, encode: Callable[[Change | Obj], bytes]) -> bytes | None:
    now_in = matches(change.object)
    if change.type == "ADDED":
        return _line("ADDED", encode(change)) if now_in else None
    if change.type == "DELETED":
        was_in = matches(change.old) if change.old is not None else now_in
        return _line("DELETED", encode(change)) if was_in else None
    was_in = matches(change.old) if change.old is not None else False
    if now_in and was_in:
        return _line("MODIFIED", encode(change))
    if now_in:
        return _line("ADDED", encode(change))
    if was_in:
        return _line("DELETED", encode(change))
    return None
