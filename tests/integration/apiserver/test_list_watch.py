"""Lists and watches: selectors, pagination, watch from a resourceVersion,
bookmarks, timeouts and 410 Gone (https://kubernetes.io/docs/reference/using-api/api-concepts/)."""

from __future__ import annotations

import asyncio

from mo_devkit.localcluster.controlplane import ControlPlane

from .conftest import Raw, cm

NS = "/api/v1/namespaces/default"


async def _make(raw: Raw, n: int, prefix: str = "c", **labels: str) -> list[dict]:
    out = []
    for i in range(n):
        code, obj = await raw.post(
            f"{NS}/configmaps", cm(f"{prefix}{i:03d}", labels=dict(labels, idx=str(i % 3)))
        )
        assert code == 201
        out.append(obj)
    return out


async def test_label_and_field_selectors(raw: Raw) -> None:
    """labelSelector supports =, !=, in, notin, exists; fieldSelector supports
    metadata.name and unsupported fields are rejected (api-concepts#label-selectors,
    field-selectors docs)."""
    await _make(raw, 6, app="web")
    await _make(raw, 2, prefix="x", app="db")
    _, lst = await raw.get(f"{NS}/configmaps", params={"labelSelector": "app=web,idx in (0,2)"})
    assert sorted(o["metadata"]["name"] for o in lst["items"]) == ["c000", "c002", "c003", "c005"]
    _, lst = await raw.get(f"{NS}/configmaps", params={"labelSelector": "app!=web,idx"})
    assert [o["metadata"]["name"] for o in lst["items"]] == ["x000", "x001"]
    _, lst = await raw.get(f"{NS}/configmaps", params={"labelSelector": "!app"})
    assert all("app" not in (o["metadata"].get("labels") or {}) for o in lst["items"])
    _, lst = await raw.get(f"{NS}/configmaps", params={"fieldSelector": "metadata.name=c004"})
    assert [o["metadata"]["name"] for o in lst["items"]] == ["c004"]
    code, err = await raw.get(f"{NS}/configmaps", params={"fieldSelector": "data.foo=bar"})
    assert code == 400 and "is not a known field selector" in err["message"]


async def test_cluster_wide_list_spans_namespaces(raw: Raw) -> None:
    await raw.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}}
    )
    await raw.post("/api/v1/namespaces/other/configmaps", cm("o1"))
    await raw.post(f"{NS}/configmaps", cm("d1"))
    _, lst = await raw.get("/api/v1/configmaps")
    names = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in lst["items"]}
    assert {("other", "o1"), ("default", "d1")} <= names


async def test_pagination_is_a_consistent_snapshot(raw: Raw) -> None:
    """limit/continue pages all come from the resourceVersion of the first page;
    objects created meanwhile do not appear (api-concepts#retrieving-large-results-sets-in-chunks)."""
    await _make(raw, 7)
    code, page = await raw.get(f"{NS}/configmaps", params={"limit": "3"})
    assert code == 200 and len(page["items"]) == 3
    rv = page["metadata"]["resourceVersion"]
    assert page["metadata"]["remainingItemCount"] == 4
    await raw.post(f"{NS}/configmaps", cm("c999"))
    names = [o["metadata"]["name"] for o in page["items"]]
    while page["metadata"].get("continue"):
        _, page = await raw.get(
            f"{NS}/configmaps", params={"limit": "3", "continue": page["metadata"]["continue"]}
        )
        assert page["metadata"]["resourceVersion"] == rv
        names += [o["metadata"]["name"] for o in page["items"]]
    assert names == [f"c{i:03d}" for i in range(7)]


async def test_list_items_of_built_in_kinds_carry_no_type_meta(raw: Raw) -> None:
    """Typed lists omit apiVersion/kind on items; clients must not rely on them."""
    await _make(raw, 1)
    _, lst = await raw.get(f"{NS}/configmaps")
    assert lst["kind"] == "ConfigMapList" and lst["apiVersion"] == "v1"
    assert "kind" not in lst["items"][0]


async def test_watch_from_a_resource_version_sees_every_later_change_in_order(raw: Raw) -> None:
    """A watch started at resourceVersion R gets every change after R, in order
    (api-concepts#efficient-detection-of-changes)."""
    objs = await _make(raw, 2)
    start = objs[-1]["metadata"]["resourceVersion"]

    async def mutate() -> None:
        await asyncio.sleep(0.1)
        await raw.post(f"{NS}/configmaps", cm("new"))
        _, o = await raw.get(f"{NS}/configmaps/c000")
        await raw.put(f"{NS}/configmaps/c000", dict(o, data={"x": "1"}))
        await raw.delete(f"{NS}/configmaps/c001")

    task = asyncio.create_task(mutate())
    events = await raw.watch(f"{NS}/configmaps", {"resourceVersion": start}, max_events=3, timeout=5)
    await task
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "new"),
        ("MODIFIED", "c000"),
        ("DELETED", "c001"),
    ]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and rvs[0] > int(start)


async def test_watch_without_a_version_starts_with_the_current_state(raw: Raw) -> None:
    """Without resourceVersion a watch first sends ADDED for every existing object
    ("Get State and Start at Most Recent")."""
    await _make(raw, 3)
    events = await raw.watch(f"{NS}/configmaps", {}, max_events=3, timeout=3)
    assert [e["type"] for e in events] == ["ADDED"] * 3


async def test_streaming_list_sends_the_state_then_an_end_bookmark_then_changes(raw: Raw) -> None:
    """KEP-3157 (WatchList, used by client-go reflectors and kubectl 1.3x):
    ``sendInitialEvents=true`` streams the current state as ADDED events, then
    a BOOKMARK annotated ``k8s.io/initial-events-end`` at the version of that
    state, then later changes (api-concepts#streaming-lists)."""
    await _make(raw, 2)
    params = {
        "sendInitialEvents": "true",
        "resourceVersionMatch": "NotOlderThan",
        "allowWatchBookmarks": "true",
    }
    _, lst = await raw.get(f"{NS}/configmaps")
    listed_rv = int(lst["metadata"]["resourceVersion"])

    async def later() -> None:
        await asyncio.sleep(0.5)
        await raw.post(f"{NS}/configmaps", cm("late"))

    writer = asyncio.create_task(later())
    events = await raw.watch(f"{NS}/configmaps", params, max_events=10, timeout=2)
    await writer
    events = events[:3] + [e for e in events[3:] if e["type"] != "BOOKMARK"]  # periodic ones
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "BOOKMARK", "ADDED"]
    assert [e["object"]["metadata"]["name"] for e in events[:2]] == ["c000", "c001"]
    end = events[2]["object"]["metadata"]
    assert end["annotations"] == {"k8s.io/initial-events-end": "true"}
    assert int(end["resourceVersion"]) == listed_rv
    assert events[3]["object"]["metadata"]["name"] == "late"


async def test_streaming_list_without_bookmarks_or_match_is_invalid(raw: Raw) -> None:
    """``ValidateListOptions``: sendInitialEvents needs resourceVersionMatch=NotOlderThan
    and allowWatchBookmarks=true; resourceVersionMatch alone is forbidden on a watch."""
    code, err = await raw.get(f"{NS}/configmaps", params={"watch": "true", "sendInitialEvents": "true"})
    assert code == 422 and err["details"]["kind"] == "ListOptions"
    assert {c["field"] for c in err["details"]["causes"]} == {"resourceVersionMatch", "allowWatchBookmarks"}
    code, err = await raw.get(
        f"{NS}/configmaps", params={"watch": "true", "resourceVersionMatch": "NotOlderThan"}
    )
    assert code == 422 and err["details"]["causes"][0]["field"] == "resourceVersionMatch"


async def test_watch_without_initial_events_starts_now(raw: Raw) -> None:
    """``sendInitialEvents=false`` with no resourceVersion: no synthetic ADDED
    events for what exists, only later changes."""
    await _make(raw, 2)
    params = {"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan"}

    async def later() -> None:
        await asyncio.sleep(0.5)
        await raw.post(f"{NS}/configmaps", cm("late"))

    writer = asyncio.create_task(later())
    events = await raw.watch(f"{NS}/configmaps", params, max_events=1, timeout=5)
    await writer
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "late")]


async def test_watch_selector_transitions_are_added_and_deleted(raw: Raw) -> None:
    """An object that starts or stops matching a watch's selector is sent as
    ADDED or DELETED (apiserver cacher: watch filter transitions)."""
    _, obj = await raw.post(f"{NS}/configmaps", cm("t", labels={"app": "a"}))
    start = obj["metadata"]["resourceVersion"]

    async def mutate() -> None:
        await asyncio.sleep(0.1)
        _, o = await raw.get(f"{NS}/configmaps/t")
        _, o = await raw.put(
            f"{NS}/configmaps/t", {**o, "metadata": {**o["metadata"], "labels": {"app": "b"}}}
        )
        await raw.put(f"{NS}/configmaps/t", {**o, "metadata": {**o["metadata"], "labels": {"app": "a"}}})

    task = asyncio.create_task(mutate())
    events = await raw.watch(
        f"{NS}/configmaps", {"resourceVersion": start, "labelSelector": "app=a"}, max_events=2, timeout=5
    )
    await task
    assert [e["type"] for e in events] == ["DELETED", "ADDED"]


async def test_bookmarks_carry_the_current_resource_version(raw: Raw) -> None:
    """With allowWatchBookmarks the server sends BOOKMARK events holding only
    a resourceVersion (api-concepts#watch-bookmarks). The interval is
    shortened here, for this test of bookmarks alone: the default is
    kube-apiserver's minute."""
    raw.cp.server.watch_settings.bookmark_interval = 0.5
    objs = await _make(raw, 1)
    events = await raw.watch(
        f"{NS}/configmaps",
        {"resourceVersion": objs[0]["metadata"]["resourceVersion"], "allowWatchBookmarks": "true"},
        max_events=1,
        timeout=3,
    )
    assert events and events[0]["type"] == "BOOKMARK"
    assert events[0]["object"]["kind"] == "ConfigMap"
    assert int(events[0]["object"]["metadata"]["resourceVersion"]) >= int(
        objs[0]["metadata"]["resourceVersion"]
    )
    assert set(events[0]["object"]["metadata"]) == {"resourceVersion"}


async def test_watch_timeout_seconds_ends_the_stream(raw: Raw) -> None:
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    events = await raw.watch(f"{NS}/configmaps", {"resourceVersion": "1", "timeoutSeconds": "1"}, timeout=10)
    assert loop.time() - t0 < 5
    assert all(e["type"] != "ERROR" for e in events)


async def test_watch_from_a_version_out_of_history_is_gone(raw: Raw, control_plane: ControlPlane) -> None:
    """Once the version has been compacted the watch answers an ERROR event with a
    410 Expired Status ("too old resource version"), and clients relist
    (api-concepts#410-gone-responses)."""
    objs = await _make(raw, 1)
    old = objs[0]["metadata"]["resourceVersion"]
    await _make(raw, control_plane.server.store.history_size + 5, prefix="h")
    events = await raw.watch(f"{NS}/configmaps", {"resourceVersion": old}, max_events=1, timeout=3)
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"
    assert "too old resource version" in events[0]["object"]["message"]


async def test_expired_continue_token_is_gone(raw: Raw, control_plane: ControlPlane) -> None:
    await _make(raw, 4)
    _, page = await raw.get(f"{NS}/configmaps", params={"limit": "2"})
    control_plane.server.store._snapshots.clear()
    code, err = await raw.get(
        f"{NS}/configmaps", params={"limit": "2", "continue": page["metadata"]["continue"]}
    )
    assert code == 410 and err["reason"] == "Expired"
