"""Table printers of Pods and Events, whose cells are summaries of container
and event histories rather than copied fields (``printPod`` and
``printEvent`` in ``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

import datetime
from typing import Any

from lightkube.models import core_v1

from .base import (
    AGE,
    NAME,
    Obj,
    Printer,
    age,
    column,
    doc,
    human_duration,
    meta,
    name,
    parse_time,
    since,
    spec,
    status,
)

_TERMINAL = ("Succeeded", "Failed")


def _restartable(container: Obj | None) -> bool:
    """An init container that keeps running beside the app (a sidecar)."""
    return bool(container) and container.get("restartPolicy") == "Always"  # type: ignore[union-attr]


def _condition_true(pod: Obj, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True" for c in status(pod).get("conditions") or []
    )


def _terminated_reason(term: Obj, prefix: str = "") -> str:
    if term.get("reason"):
        return prefix + str(term["reason"])
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


def _later(a: datetime.datetime | None, b: Any) -> datetime.datetime | None:
    t = parse_time(b)
    return t if t is not None and (a is None or t > a) else a


class _PodSummary:
    """Readiness, status reason and restarts of a pod, as ``printPod`` works them out."""

    def __init__(self, pod: Obj) -> None:
        s, st = spec(pod), status(pod)
        init_specs = {c.get("name"): c for c in s.get("initContainers") or []}
        self.total = len(s.get("containers") or []) + sum(1 for c in init_specs.values() if _restartable(c))
        self.ready = 0
        self.reason = st.get("reason") or st.get("phase", "")
        if any(
            c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
            for c in st.get("conditions") or []
        ):
            self.reason = "SchedulingGated"
        restarts, sidecar_restarts = 0, 0
        last, sidecar_last = None, None
        initializing = False
        for i, cs in enumerate(st.get("initContainerStatuses") or []):
            restarts += cs.get("restartCount", 0)
            finished = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt")
            last = _later(last, finished)
            sidecar = _restartable(init_specs.get(cs.get("name")))
            if sidecar:
                sidecar_restarts += cs.get("restartCount", 0)
                sidecar_last = _later(sidecar_last, finished)
            state = cs.get("state") or {}
            term, waiting = state.get("terminated"), state.get("waiting")
            if term and term.get("exitCode", 0) == 0:
                continue
            if sidecar and cs.get("started"):
                self.ready += 1 if cs.get("ready") else 0
                continue
            if term:
                self.reason = _terminated_reason(term, "Init:")
            elif waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing":
                self.reason = "Init:" + waiting["reason"]
            else:
                self.reason = f"Init:{i}/{len(init_specs)}"
            initializing = True
            break
        if not initializing or _condition_true(pod, "Initialized"):
            restarts, last = sidecar_restarts, sidecar_last
            running = False
            for cs in reversed(st.get("containerStatuses") or []):
                restarts += cs.get("restartCount", 0)
                last = _later(last, ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt"))
                state = cs.get("state") or {}
                term, waiting = state.get("terminated"), state.get("waiting")
                if waiting and waiting.get("reason"):
                    self.reason = waiting["reason"]
                elif term:
                    self.reason = _terminated_reason(term)
                elif cs.get("ready") and state.get("running") is not None:
                    running = True
                    self.ready += 1
            if self.reason == "Completed" and running:
                self.reason = "Running" if _condition_true(pod, "Ready") else "NotReady"
        if meta(pod).get("deletionTimestamp"):
            if st.get("reason") == "NodeLost":
                self.reason = "Unknown"
            elif st.get("phase") not in _TERMINAL:
                self.reason = "Terminating"
        self.restarts = restarts
        self.last_restart = last


def _readiness_gates(pod: Obj) -> str:
    gates = spec(pod).get("readinessGates") or []
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in status(pod).get("conditions") or []}
    true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
    return f"{true}/{len(gates)}"


def _pod(pod: Obj, now: datetime.datetime) -> list[Any]:
    summary = _PodSummary(pod)
    restarts = str(summary.restarts)
    if summary.restarts and summary.last_restart is not None:
        restarts = f"{summary.restarts} ({human_duration(now - summary.last_restart)} ago)"
    st = status(pod)
    return [
        name(pod),
        f"{summary.ready}/{summary.total}",
        summary.reason,
        restarts,
        age(pod, now),
        ((st.get("podIPs") or [{}])[0].get("ip")) or "<none>",
        spec(pod).get("nodeName") or "<none>",
        st.get("nominatedNodeName") or "<none>",
        _readiness_gates(pod),
    ]


def _pod_conditions(pod: Obj) -> list[Obj]:
    """Row conditions marking finished pods, which kubectl can hide."""
    phase = status(pod).get("phase")
    if phase == "Succeeded":
        return [
            {
                "type": "Completed",
                "status": "True",
                "reason": "Succeeded",
                "message": "The pod has completed successfully.",
            }
        ]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return []


POD = Printer(
    (
        NAME,
        column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
        column("Status", "string", "The aggregate status of the containers in this pod."),
        column(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container "
            "in this pod has restarted.",
        ),
        AGE,
        column("IP", "string", doc(core_v1.PodStatus, "podIP"), priority=1),
        column("Node", "string", doc(core_v1.PodSpec, "nodeName"), priority=1),
        column("Nominated Node", "string", doc(core_v1.PodStatus, "nominatedNodeName"), priority=1),
        column("Readiness Gates", "string", doc(core_v1.PodSpec, "readinessGates"), priority=1),
    ),
    _pod,
    _pod_conditions,
)

# events.k8s.io/v1 field -> the core/v1 Event field it is printed as.
_EVENTS_V1_FIELDS = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
    "deprecatedSource": "source",
}


def _event(event: Obj, now: datetime.datetime) -> list[Any]:
    event = {_EVENTS_V1_FIELDS.get(k, k): v for k, v in event.items()}  # core Events have none of these
    first = (
        since(event["firstTimestamp"], now)
        if event.get("firstTimestamp")
        else since(event.get("eventTime"), now)
    )
    last = since(event["lastTimestamp"], now) if event.get("lastTimestamp") else first
    count = event.get("count") or 0
    series = event.get("series")
    if isinstance(series, dict):
        last = since(series.get("lastObservedTime"), now)
        count = series.get("count", 0)
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API carry no count
    involved = event.get("involvedObject") or {}
    kind = str(involved.get("kind", "")).lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingController") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(event.get("message", "")).strip(),
        first,
        count,
        name(event),
    ]


EVENT = Printer(
    (
        column("Last Seen", "string", doc(core_v1.Event, "lastTimestamp")),
        column("Type", "string", doc(core_v1.Event, "type")),
        column("Reason", "string", doc(core_v1.Event, "reason")),
        column("Object", "string", doc(core_v1.Event, "involvedObject")),
        column("Subobject", "string", doc(core_v1.ObjectReference, "fieldPath"), priority=1),
        column("Source", "string", doc(core_v1.Event, "source"), priority=1),
        column("Message", "string", doc(core_v1.Event, "message")),
        column("First Seen", "string", doc(core_v1.Event, "firstTimestamp"), priority=1),
        column("Count", "string", doc(core_v1.Event, "count"), priority=1),
        {**NAME, "priority": 1},
    ),
    _event,
)
