"""Lists and watches as informers use them (api-concepts.md, "Efficient
detection of changes", "Retrieving large results sets in chunks",
"Resource versions"): pagination with one snapshot version, selectors,
watch event types and order, selector transitions, 410 Gone, and how often
bookmarks come."""

from __future__ import annotations

from typing import Any

from .crds import install
from .harness import MERGE, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


async def _make(t: Target, name: str, labels: dict[str, str] | None = None, **extra: Any) -> Obj:
    body = {"metadata": {"name": name, "labels": {"case": "diff", **(labels or {})}}, **extra}
    reply = await t.post(t.ns_path("configmaps"), body)
    assert reply.code == 201, reply
    body = reply.body
    assert isinstance(body, dict)
    return body


def _names(reply_body: Obj) -> list[str]:
    return [i["metadata"]["name"] for i in reply_body.get("items", [])]


def _summary(events: list[Obj]) -> list[Any]:
    """Event types with the object's name, resourceVersion and data."""
    out: list[Any] = []
    for e in events:
        obj = e.get("object", {})
        meta = obj.get("metadata", {})
        version = {"resourceVersion": meta.get("resourceVersion")}
        out.append([e.get("type"), obj.get("kind"), meta.get("name"), version, obj.get("data")])
    return out


async def case_pagination(t: Target) -> Transcript:
    """Pages of ``limit`` items in name order, a continue token while more
    remain, remainingItemCount, and every page at the first page's
    resourceVersion even when objects change in between."""
    tr = Transcript()
    for i in range(5):
        await _make(t, f"cm-{i}")
    path = t.ns_path("configmaps")
    selector = {"labelSelector": "case=diff"}
    first = await t.get(path, params={"limit": "2", **selector})
    tr.add("first", [first.code, _names(first.body), first.body["metadata"]])
    await _make(t, "cm-9")  # after the snapshot: not in the following pages
    token = first.body["metadata"]["continue"]
    second = await t.get(path, params={"limit": "2", "continue": token, **selector})
    tr.add("second", [_names(second.body), second.body["metadata"]])
    third = await t.get(
        path, params={"limit": "2", "continue": second.body["metadata"]["continue"], **selector}
    )
    tr.add("third", [_names(third.body), third.body["metadata"]])
    tr.add("same version", len({p.body["metadata"]["resourceVersion"] for p in (first, second, third)}))
    fresh = await t.get(path, params=selector)
    tr.add(
        "unpaged", [_names(fresh.body), fresh.body["metadata"], fresh.body["kind"], fresh.body["apiVersion"]]
    )
    bad = await t.get(path, params={"limit": "2", "continue": "garbage"})
    # The message ends with the decoder's own words (Go's base64 and JSON errors).
    tr.add("bad continue", [bad.code, bad.body["reason"], bad.body["message"].split(": ")[:2]])
    return tr


async def case_pagination_counts_what_remains(t: Target) -> Transcript:
    """Without selectors a page says how many items remain
    (remainingItemCount), which etcd can count only when nothing is
    filtered out; a page that ends the list carries neither the count nor a
    continue token. (Secrets: no controller adds any to a new namespace.)"""
    tr = Transcript()
    path = t.ns_path("secrets")
    for i in range(5):
        await t.post(path, {"metadata": {"name": f"s{i}"}, "stringData": {"k": "v"}})
    first = await t.get(path, params={"limit": "2"})
    tr.add("first", [_names(first.body), first.body["metadata"]])
    last = await t.get(path, params={"limit": "3", "continue": first.body["metadata"]["continue"]})
    tr.add("last", [_names(last.body), last.body["metadata"]])
    return tr


async def case_list_resource_version_semantics(t: Target) -> Transcript:
    """resourceVersion="0" is served from the cache and ignores ``limit``;
    resourceVersionMatch needs a resourceVersion; an exact version lists
    the state as of that version."""
    tr = Transcript()
    first = await _make(t, "a")
    await _make(t, "b")
    path = t.ns_path("configmaps")
    sel = {"labelSelector": "case=diff"}
    any_version = await t.get(path, params={"resourceVersion": "0", "limit": "1", **sel})
    tr.add("rv=0 with limit", [_names(any_version.body), "continue" in any_version.body["metadata"]])
    tr.add("match without version", await t.get(path, params={"resourceVersionMatch": "NotOlderThan"}))
    exact = await t.get(
        path,
        params={
            "resourceVersion": first["metadata"]["resourceVersion"],
            "resourceVersionMatch": "Exact",
            **sel,
        },
    )
    tr.add("exact", [exact.code, _names(exact.body), exact.body["metadata"]])
    return tr


async def case_label_and_field_selectors(t: Target) -> Transcript:
    """Equality and set-based label selectors, and the field selectors every
    kind supports (name, namespace) and a pod's own."""
    tr = Transcript()
    await _make(t, "a", {"tier": "web", "env": "prod"})
    await _make(t, "b", {"tier": "db", "env": "prod"})
    await _make(t, "c", {"tier": "web"})
    path = t.ns_path("configmaps")
    for selector in (
        "tier=web",
        "tier!=web,case=diff",
        "env",
        "!env,case=diff",
        "tier in (db,cache)",
        "tier notin (web),case=diff",
        "env=prod,tier=web",
    ):
        tr.add(selector, _names((await t.get(path, params={"labelSelector": selector})).body))
    for selector in ("metadata.name=b", "metadata.name!=b,metadata.namespace=" + t.ns):
        reply = await t.get(path, params={"fieldSelector": selector, "labelSelector": "case=diff"})
        tr.add(selector, _names(reply.body))
    pods = await t.get(t.ns_path("pods"), params={"fieldSelector": "status.phase=Running,spec.nodeName="})
    tr.add("pod fields", [pods.code, _names(pods.body)])
    return tr


async def case_watch_event_sequence(t: Target) -> Transcript:
    """From a listed version: ADDED, MODIFIED, DELETED in write order, each
    with the version of its write; the DELETED object is the last state."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    start = (await t.get(path, params={"labelSelector": "case=diff"})).body["metadata"]["resourceVersion"]
    async with t.watch(path, {"resourceVersion": start, "labelSelector": "case=diff"}) as w:
        await _make(t, "x", data={"v": "1"})
        await t.patch(t.ns_path("configmaps", "x"), {"data": {"v": "2"}}, MERGE)
        await t.patch(t.ns_path("configmaps", "x"), {"data": {"v": "2"}}, MERGE)  # no-op: no event
        await t.delete(t.ns_path("configmaps", "x"))
        tr.add("events", _summary(await w.count(3)))
    return tr


async def case_watch_selector_transitions(t: Target) -> Transcript:
    """An object entering a watch's selector is ADDED, leaving it DELETED
    (the watch cache's filtering, cacher.go)."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    start = (await t.get(path)).body["metadata"]["resourceVersion"]
    await _make(t, "x")
    async with t.watch(path, {"resourceVersion": start, "labelSelector": "on=yes"}) as w:
        obj = t.ns_path("configmaps", "x")
        await t.patch(obj, {"metadata": {"labels": {"on": "yes"}}}, MERGE)
        await t.patch(obj, {"data": {"k": "v"}}, MERGE)
        await t.patch(obj, {"metadata": {"labels": {"on": "no"}}}, MERGE)
        await t.patch(obj, {"data": {"k": "w"}}, MERGE)
        await t.patch(obj, {"metadata": {"labels": {"on": "yes"}}}, MERGE)
        tr.add("events", _summary(await w.count(4)))
    return tr


async def case_watch_from_zero_starts_with_the_state(t: Target) -> Transcript:
    """resourceVersion=0 (and none) starts with synthetic ADDED events for
    what exists, then the changes."""
    tr = Transcript()
    await _make(t, "b")
    await _make(t, "a")
    path = t.ns_path("configmaps")
    for version in ("0", None):
        params = {"labelSelector": "case=diff", **({"resourceVersion": version} if version else {})}
        async with t.watch(path, params) as w:
            initial = await w.count(2)
            await t.patch(t.ns_path("configmaps", "a"), {"data": {"n": str(version)}}, MERGE)
            tr.add(f"from {version}", sorted(_summary(initial)) + _summary((await w.count(3))[2:]))
    return tr


async def case_watch_field_selector_on_name(t: Target) -> Transcript:
    """What client-go's single-object watch (metadata.name=) sees."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    start = (await t.get(path)).body["metadata"]["resourceVersion"]
    async with t.watch(path, {"resourceVersion": start, "fieldSelector": "metadata.name=b"}) as w:
        await _make(t, "a")
        await _make(t, "b")
        await t.delete(t.ns_path("configmaps", "a"))
        await t.delete(t.ns_path("configmaps", "b"))
        tr.add("events", _summary(await w.count(2)))
    return tr


async def case_watch_too_old_version_is_gone(t: Target) -> Transcript:
    """A watch from a version older than the server keeps is answered 200,
    then one ERROR event with a 410 Expired Status; the informer relists.
    (On a fresh custom resource, whose watch cache begins when its CRD is
    served, long after version 1.)"""
    tr = Transcript()
    _, path = await install(t)
    await t.expire_history()
    async with t.watch(path, {"resourceVersion": "1"}) as w:
        events = await w.until(lambda e: False)
    tr.add("code", w.code)
    status = events[0]["object"] if events else {}
    # The message quotes the server's oldest version: its own number.
    tr.add("events", [[e["type"] for e in events], {k: v for k, v in status.items() if k != "message"}])
    tr.add("message", str(status.get("message", "")).split(":")[0])
    return tr


async def case_watch_invalid_resource_version(t: Target) -> Transcript:
    """A resourceVersion that is not a number fails the storage layer's parse:
    500, for a list and for a watch alike."""
    tr = Transcript()
    tr.add("list", await t.get(t.ns_path("configmaps"), params={"resourceVersion": "abc"}))
    async with t.watch(t.ns_path("configmaps"), {"resourceVersion": "abc"}) as w:
        events = await w.until(lambda e: False)
        tr.add("watch", [w.code, events])
    return tr


async def case_watch_bookmarks_come_before_the_deadline(t: Target) -> Transcript:
    """A watch that asks for bookmarks gets them only near its deadline on a
    short watch: kube-apiserver sends one about every minute and one 2 s
    before the timeout (cache_watcher.go nextBookmarkTime), in buckets of a
    second checked on a jittered 1 s timer, so the one before the deadline
    may come up to about a second early, and twice, or not at all
    ("we don't provide any guarantees on sending bookmarks"). An informer may
    count on no more. The watch then ends with no error."""
    tr = Transcript()
    await _make(t, "a")
    path = t.ns_path("configmaps")
    start = (await t.get(path)).body["metadata"]["resourceVersion"]
    params = {"resourceVersion": start, "allowWatchBookmarks": "true", "timeoutSeconds": "6"}
    async with t.watch(path, params) as w:
        await t.patch(t.ns_path("configmaps", "a"), {"data": {"k": "v"}}, MERGE)
        events = await w.until(lambda e: False, timeout=10)
    changes = [e for e in events if e["type"] != "BOOKMARK"]
    tr.add("changes", [_summary(changes), w.ended])
    # A bookmark's version is the newest the server has seen, which on a
    # shared cluster may be other objects' writes: never older than the
    # last event, and that is all a client may use.
    last = int(changes[-1]["object"]["metadata"]["resourceVersion"]) if changes else 0
    marks = [
        (int(e["object"]["metadata"]["resourceVersion"]) >= last, arrival > 2.5)
        for e, arrival in zip(events, w.arrivals, strict=True)
        if e["type"] == "BOOKMARK"
    ]
    tr.add(
        "bookmarks: not older than the last event, not before 2.5 s",
        [m == (True, True) for m in marks if m != (True, True)],
    )
    tr.add("at most two bookmarks", len(marks) <= 2)
    return tr
