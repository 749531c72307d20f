"""Reading pods: readiness, and why a pod is not becoming ready, in words a
platform engineer acts on (``ImagePullBackOff: image x not found``,
``CrashLoopBackOff (5 restarts): InvalidConfig: ...``, ``Unschedulable: 0/3
nodes...``). A crash-looping container is explained by its last run's
``lastState.terminated.message`` (its termination message: what the process
wrote to its termination-message file, or with ``FallbackToLogsOnError`` the
tail of its log), else by that run's exit code."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.meta.objects import mapping_at, meta_of, status_of, view
from mo_operator.kube.meta.times import format_time as format_time
from mo_operator.kube.meta.times import parse_time as parse_time
from mo_operator.matrixone import layout


def condition(pod: Mapping[str, Any], ctype: str) -> Mapping[str, Any] | None:
    return view(pod).condition(ctype)


def is_ready(pod: Mapping[str, Any]) -> bool:
    c = condition(pod, "Ready")
    return c is not None and c.get("status") == "True"


def not_ready_since(pod: Mapping[str, Any]) -> float | None:
    """When the pod last stopped being ready (or was created), None if it is ready."""
    if is_ready(pod):
        return None
    created = parse_time(meta_of(pod).creation_timestamp)
    ready = condition(pod, "Ready")
    changed = parse_time(ready.get("lastTransitionTime")) if ready else None
    times = [t for t in (created, changed) if t is not None]
    return max(times) if times else None


#: How much of a termination message a condition repeats (it may be a log tail).
MESSAGE_LIMIT = 300


def _one_line(text: str) -> str:
    """A termination message as one line of bounded length."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MESSAGE_LIMIT else flat[: MESSAGE_LIMIT - 3] + "..."


def _last_exit(status: Mapping[str, Any]) -> str | None:
    """Why the previous run of a container ended: its termination message (what
    the process wrote, or its log tail), else its exit code."""
    last = mapping_at(status, "lastState", "terminated")
    message = _one_line(str(last.get("message") or ""))
    if message:
        return message
    if last.get("exitCode"):
        return f"exit code {last['exitCode']}"
    return None


def _container_problem(status: Mapping[str, Any]) -> str | None:
    state = status.get("state") or {}
    restarts = int(status.get("restartCount") or 0)
    counted = f" ({restarts} restarts)" if restarts else ""
    waiting = state.get("waiting")
    if waiting and waiting.get("reason") not in (None, "ContainerCreating", "PodInitializing"):
        reason = str(waiting["reason"])
        if reason == "CrashLoopBackOff":
            # The back-off message only says when the next try is; the last
            # run says why it failed.
            detail = _last_exit(status)
        else:
            detail = str(waiting.get("message") or "") or None
        return f"{reason}{counted}" + (f": {detail}" if detail else "")
    terminated = state.get("terminated")
    if terminated and terminated.get("exitCode"):
        text = f"{terminated.get('reason') or 'Error'}: exit code {terminated['exitCode']}"
        message = _one_line(str(terminated.get("message") or ""))
        return text + (f": {message}" if message else "")
    if restarts and not status.get("ready"):
        last = _last_exit(status)
        return f"restarting{counted}" + (f": {last}" if last else "")
    return None


def failing(pod: Mapping[str, Any]) -> bool:
    """The pod says why it cannot become ready (no node, a container that crashes or
    cannot start), as opposed to one still starting."""
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        return True
    return any(_container_problem(s) for s in status_of(pod).get("containerStatuses") or ())


def problem(pod: Mapping[str, Any]) -> str:
    """Why the pod is not ready, as specifically as its status says."""
    status = status_of(pod)
    scheduled = condition(pod, "PodScheduled")
    if scheduled is not None and scheduled.get("status") == "False":
        return f"{scheduled.get('reason') or 'Unschedulable'}: {scheduled.get('message') or 'not scheduled'}"
    statuses = list(status.get("containerStatuses") or ())
    statuses.sort(key=lambda s: s.get("name") != layout.MAIN_CONTAINER)
    for s in statuses:
        found = _container_problem(s)
        if found:
            return found
    for c in status.get("conditions") or ():
        if (
            c.get("type") not in ("Ready", "ContainersReady", "PodScheduled", "Initialized")
            and c.get("status") == "False"
        ):
            return f"{c.get('type')}: {c.get('reason') or ''} {c.get('message') or ''}".strip()
    phase = status.get("phase") or "Pending"
    return f"{phase}, not ready"
