"""What the operator's own client (``mo_operator.kube.client.client.ApiClient``)
sees of both servers: its pages, its errors (``ApiError`` status, reason,
details), its apply conflicts, its watch events and its expiry signal. The
operator is tested on the embedded server; these are the answers it must
get the same way from a real one."""

from __future__ import annotations

import asyncio
from typing import Any

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.client.watch import WatchExpired
from mo_operator.kube.meta.errors import ApiError

from .crds import install
from .harness import Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]

CONFIGMAPS = Resource("", "v1", "ConfigMap", "configmaps", True)


def _cm(t: Target, name: str, **data: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": t.ns, "labels": {"case": "client"}},
        "data": data,
    }


def _error(e: ApiError) -> Obj:
    return {"status": e.status, "reason": e.reason, "details": e.details}


async def case_client_pages_and_full_list(t: Target) -> Transcript:
    """list_page hands back a continue token while items remain; list
    follows them to the end."""
    tr = Transcript()
    for i in range(5):
        await t.client.create(CONFIGMAPS, _cm(t, f"c{i}"), t.ns)
    page = await t.client.list_page(CONFIGMAPS, t.ns, label_selector="case=client", limit=2)
    tr.add("page", [[o["metadata"]["name"] for o in page.items], page.continue_ is not None])
    rest = await t.client.list_page(
        CONFIGMAPS, t.ns, label_selector="case=client", limit=10, continue_=page.continue_
    )
    tr.add(
        "rest",
        [
            [o["metadata"]["name"] for o in rest.items],
            rest.continue_,
            rest.resource_version == page.resource_version,
        ],
    )
    whole = await t.client.list(CONFIGMAPS, t.ns, label_selector="case=client", limit=2)
    tr.add("whole", [o["metadata"]["name"] for o in whole.items])
    return tr


async def case_client_errors(t: Target) -> Transcript:
    """The ApiError a caller branches on: 404 NotFound, 409 AlreadyExists,
    409 Conflict on a stale update, 422 Invalid with causes."""
    tr = Transcript()
    for name, call in (
        ("get missing", t.client.get(CONFIGMAPS, "nope", t.ns)),
        ("create twice", _twice(t)),
        ("stale update", _stale(t)),
        ("invalid", t.client.create(CONFIGMAPS, _cm(t, "Bad_Name"), t.ns)),
    ):
        try:
            await call
            tr.add(name, "no error")
        except ApiError as e:
            tr.add(name, _error(e))
    tr.add("get_or_none", await t.client.get_or_none(CONFIGMAPS, "nope", t.ns))
    return tr


async def _twice(t: Target) -> None:
    await t.client.create(CONFIGMAPS, _cm(t, "twice"), t.ns)
    await t.client.create(CONFIGMAPS, _cm(t, "twice"), t.ns)


async def _stale(t: Target) -> None:
    first = await t.client.create(CONFIGMAPS, _cm(t, "stale", a="1"), t.ns)
    await t.client.update(CONFIGMAPS, {**first, "data": {"a": "2"}})
    await t.client.update(CONFIGMAPS, {**first, "data": {"a": "3"}})


async def case_client_apply_conflict_and_force(t: Target) -> Transcript:
    """apply with another manager's value fails with the conflict's causes;
    force takes the field."""
    tr = Transcript()
    await t.client.apply(_cm(t, "x", a="1"), field_manager="first")
    try:
        await t.client.apply(_cm(t, "x", a="2"), field_manager="second")
        tr.add("conflict", "no error")
    except ApiError as e:
        tr.add("conflict", _error(e))
    forced = await t.client.apply(_cm(t, "x", a="2"), field_manager="second", force=True)
    tr.add("forced", [forced["data"], [m["manager"] for m in forced["metadata"]["managedFields"]]])
    return tr


async def case_client_watch(t: Target) -> Transcript:
    """watch yields (type, object) from a version until the caller stops."""
    tr = Transcript()
    start = (await t.client.list_page(CONFIGMAPS, t.ns, label_selector="case=client")).resource_version
    events: list[Any] = []

    async def collect() -> None:
        async for kind, obj in t.client.watch(
            CONFIGMAPS, t.ns, resource_version=start, label_selector="case=client", timeout_seconds=30
        ):
            events.append([kind, obj["metadata"].get("name"), (obj.get("data") or {})])
            if len(events) == 3:
                return

    task = asyncio.create_task(collect())
    try:
        created = await t.client.create(CONFIGMAPS, _cm(t, "w", v="1"), t.ns)
        await t.client.update(CONFIGMAPS, {**created, "data": {"v": "2"}})
        await t.client.delete(CONFIGMAPS, "w", t.ns)
        await asyncio.wait_for(task, 15)
    finally:
        task.cancel()
    tr.add("events", events)
    return tr


async def case_client_watch_expired(t: Target) -> Transcript:
    """A version the server no longer holds raises WatchExpired, the
    informer's signal to relist. (A fresh custom resource: its watch cache
    on the real server begins when its CRD is served.)"""
    tr = Transcript()
    await install(t)
    widgets = Resource(f"{t.tag}.diff.example.com", "v1", "Widget", "widgets", True)
    await t.expire_history()
    try:
        async for _ in t.client.watch(widgets, t.ns, resource_version="1", timeout_seconds=5):
            tr.add("old version", "an event")
            break
    except WatchExpired as e:
        tr.add("old version", [type(e).__name__, e.status, e.reason])
    return tr
