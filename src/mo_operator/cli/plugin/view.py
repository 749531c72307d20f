"""What ``kubectl mo status`` shows of a cluster, read from the API in one pass:
each set with the version it asks for and the one its pods run, ready and
updated pods, the stores as the operator records HAKeeper's view of them, the
conditions that are not fine and the last Warning Events. Plain data, so that
``-o json`` prints exactly what the table shows."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from lightkube.resources.core_v1 import Event

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.steps import progress
from mo_operator.controllers.steps.status import PROGRESSING
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import annotations_of, mapping_at, name_of, spec_of, status_of, view
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.kube.meta.times import parse_time
from mo_operator.matrixone import labels
from mo_operator.matrixone.version import image_tag

EVENTS = Resource.of(Event)

SETS: tuple[tuple[Resource, str], ...] = (
    (r.LOGSETS, "log stores"),
    (r.DNSETS, "TN stores"),
    (r.TNSETS, "TN stores"),
    (r.CNSETS, "CNs"),
    (r.PROXYSETS, "proxies"),
    (r.WEBUIS, "web consoles"),
)
"""The kinds a cluster is made of, in dependency order, with what their pods are called."""
FINE_WHEN_FALSE = frozenset({"Ended", progress.UPGRADING, progress.SCALING})
"""Condition types whose False is not trouble (a job still running, no planned work running)."""
LAST_WARNINGS = 5


@dataclass
class ConditionView:
    object: str
    type: str
    status: str
    reason: str
    message: str


@dataclass
class SetView:
    kind: str
    name: str
    desired_version: str
    running_version: str
    ready: str
    replicas: int
    updated: int
    progress: str
    """``2/3 log stores updated``, or what the set waits for."""
    paused: bool


@dataclass
class StoreView:
    set: str
    pod: str
    state: str
    since: str = ""
    uuid: str = ""


@dataclass
class EventView:
    time: str
    object: str
    reason: str
    message: str
    count: int


@dataclass
class ClusterView:
    namespace: str
    name: str
    phase: str
    paused: bool
    desired_version: str
    running_version: str
    ready: str
    up_to_date: bool
    message: str
    sets: list[SetView] = field(default_factory=list)
    stores: list[StoreView] = field(default_factory=list)
    conditions: list[ConditionView] = field(default_factory=list)
    warnings: list[EventView] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return self.phase == "Ready" and self.up_to_date and all(s.updated == s.replicas for s in self.sets)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def paused(obj: Mapping[str, Any]) -> bool:
    return annotations_of(obj).get(labels.SKIP_SYNC, "") in ("true", "True", "1")


def not_fine(kind: str, obj: Mapping[str, Any]) -> list[ConditionView]:
    return [
        ConditionView(
            f"{kind} {name_of(obj)}",
            str(c.get("type")),
            str(c.get("status")),
            str(c.get("reason") or ""),
            str(c.get("message") or ""),
        )
        for c in view(obj).conditions
        if c.get("status") != "True"
        and c.get("type") not in FINE_WHEN_FALSE
        and (c.get("type"), c.get("reason")) != ("Synced", PROGRESSING)
    ]


def _desired_version(obj: Mapping[str, Any]) -> str:
    spec = spec_of(obj)
    return image_tag(str(spec.get("image") or "")) or str(spec.get("semanticVersion") or "")


def _progress(obj: Mapping[str, Any], noun: str) -> str:
    status = status_of(obj)
    replicas = int(spec_of(obj).get("replicas") or 0)
    updated = int(status.get("updatedReplicas") or 0)
    observed = int(status.get("observedGeneration") or 0) >= int(obj["metadata"].get("generation") or 0)
    if not observed:
        return "the operator has not seen the latest spec yet"
    current = next((c for c in view(obj).conditions if c.get("type") == "UpToDate"), None)
    if current is not None and current.get("reason") in ("NotStarted",):
        return str(current.get("message") or "not started")
    return f"{min(updated, replicas)}/{replicas} {noun} updated"


def _set_view(kind: str, obj: Mapping[str, Any], noun: str) -> SetView:
    status = status_of(obj)
    replicas = int(spec_of(obj).get("replicas") or 0)
    return SetView(
        kind=kind,
        name=name_of(obj),
        desired_version=_desired_version(obj),
        running_version=str(status.get("version") or ""),
        ready=str(status.get("readiness") or f"?/{replicas}"),
        replicas=replicas,
        updated=int(status.get("updatedReplicas") or 0),
        progress=_progress(obj, noun),
        paused=paused(obj),
    )


def _stores(kind: str, obj: Mapping[str, Any]) -> list[StoreView]:
    status = status_of(obj)
    label = f"{kind} {name_of(obj)}"
    if kind == "CNSet":
        return [
            StoreView(
                label, str(s.get("podName") or ""), str(s.get("state") or ""), uuid=str(s.get("uuid") or "")
            )
            for s in status.get("stores") or ()
        ]
    return [
        StoreView(
            label, str(s.get("podName") or ""), str(s.get("phase") or ""), str(s.get("lastTransition") or "")
        )
        for key in ("availableStores", "failedStores")
        for s in status.get(key) or ()
    ]


def _event_time(event: Mapping[str, Any]) -> str:
    return str(
        event.get("lastTimestamp")
        or mapping_at(event, "series").get("lastObservedTime")
        or event.get("eventTime")
        or event.get("firstTimestamp")
        or mapping_at(event, "metadata").get("creationTimestamp")
        or ""
    )


def warnings_of(
    events: Sequence[Mapping[str, Any]], names: set[str], last: int = LAST_WARNINGS
) -> list[EventView]:
    """The last ``last`` Warning Events about the objects ``names``, newest first."""
    chosen = [
        e
        for e in events
        if e.get("type") == "Warning" and str(mapping_at(e, "involvedObject").get("name")) in names
    ]
    chosen.sort(key=lambda e: parse_time(_event_time(e)) or 0.0, reverse=True)
    return [
        EventView(
            _event_time(e),
            f"{mapping_at(e, 'involvedObject').get('kind')} {mapping_at(e, 'involvedObject').get('name')}",
            str(e.get("reason") or ""),
            str(e.get("message") or ""),
            int(e.get("count") or mapping_at(e, "series").get("count") or 1),
        )
        for e in chosen[:last]
    ]


async def children_of(
    client: ApiClient, namespace: str, name: str
) -> list[tuple[str, Mapping[str, Any], str]]:
    """The cluster's sets (kind, object, what its pods are called), in dependency order."""
    selector = str(selector_from_labels(labels.cluster_labels(name)))
    listed = await asyncio.gather(*(client.list(res, namespace, label_selector=selector) for res, _ in SETS))
    return [
        (res.kind, obj, noun)
        for (res, noun), found in zip(SETS, listed, strict=True)
        for obj in sorted(found.items, key=name_of)
    ]


async def cluster_view(client: ApiClient, cluster: Mapping[str, Any]) -> ClusterView:
    namespace, name = cluster["metadata"]["namespace"], name_of(cluster)
    children, pods, events = await asyncio.gather(
        children_of(client, namespace, name),
        client.list(r.PODS, namespace, label_selector=str(selector_from_labels(labels.cluster_labels(name)))),
        client.list(EVENTS, namespace, field_selector="type=Warning"),
    )
    status = status_of(cluster)
    up_to_date = next((c for c in view(cluster).conditions if c.get("type") == "UpToDate"), None)
    out = ClusterView(
        namespace=namespace,
        name=name,
        phase=str(status.get("phase") or "Unknown"),
        paused=paused(cluster),
        desired_version=str(spec_of(cluster).get("version") or ""),
        running_version=str(status.get("version") or ""),
        ready=str(status.get("readiness") or ""),
        up_to_date=bool(up_to_date and up_to_date.get("status") == "True"),
        message=str(status.get("message") or ""),
    )
    out.conditions.extend(not_fine("MatrixOneCluster", cluster))
    for kind, obj, noun in children:
        out.sets.append(_set_view(kind, obj, noun))
        out.stores.extend(_stores(kind, obj))
        out.conditions.extend(not_fine(kind, obj))
    names = {name, *(name_of(o) for _, o, _ in children), *(name_of(p) for p in pods.items)}
    out.warnings = warnings_of(events.items, names)
    return out
