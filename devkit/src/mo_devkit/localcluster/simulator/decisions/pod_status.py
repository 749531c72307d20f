"""What the kubelet writes for one pod: phase, conditions and container
statuses (pkg/kubelet/kubelet_pods.go ``getPhase`` and
pkg/kubelet/status/generate.go), and when it finalises a deleted pod."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from mo_operator.kube.meta.times import format_time

from ..behaviour import ContainerExit, PodVerdict
from ..core.objects import Obj, annotations_of, find_condition, is_deleting, merge_condition, status_of
from ..rules import RuleSet
from .containers import (
    ContainerRun,
    Profile,
    Timing,
    advance,
    container_status,
    profiles,
    run_from_status,
    stop,
)
from .references import Unmet

#: Conditions the kubelet owns (kubetypes.PodConditionByKubelet).
KUBELET_CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")


@dataclass(frozen=True)
class PodTimeline:
    seen: float
    init: tuple[ContainerRun, ...]
    main: tuple[ContainerRun, ...]
    stop_at: float | None = None


@dataclass(frozen=True)
class KubeletDecision:
    #: The status to write (None: nothing changed).
    status: Obj | None
    #: Annotations to merge into the pod (None: nothing to change).
    annotations: dict[str, str | None] | None
    #: Finalise: delete the pod with grace period 0.
    delete: bool
    wake_after: float | None
    timeline: PodTimeline = field(compare=False)


def timeline_from_status(pod: Obj, now: float) -> PodTimeline:
    st = status_of(pod)
    inits, mains = profiles(pod)

    def runs(profs: list[Profile], statuses: list[Mapping[str, Any]] | None) -> tuple[ContainerRun, ...]:
        by_name = {s.get("name"): s for s in statuses or []}
        return tuple(run_from_status(by_name.get(p.name), now) for p in profs)

    return PodTimeline(
        seen=now,
        init=runs(inits, st.get("initContainerStatuses")),
        main=runs(mains, st.get("containerStatuses")),
    )


def _names(items: list[str]) -> str:
    """A Go ``[]string`` printed with ``%s``: ``[a b]``."""
    return "[" + " ".join(items) + "]"


def pod_phase(
    pod: Obj,
    inits: list[Profile],
    init_runs: tuple[ContainerRun, ...],
    main_runs: tuple[ContainerRun, ...],
    terminal: bool,
) -> str:
    """``getPhase`` of pkg/kubelet/kubelet_pods.go."""
    restart = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    pending_init = False
    for prof, run in zip(inits, init_runs, strict=True):
        if prof.role == "sidecar":
            if not run.started:
                pending_init = True
            continue
        if run.state == "terminated" and run.exit_code == 0:
            continue
        if run.state == "terminated" and restart == "Never":
            return "Failed"
        pending_init = True
    if pending_init and not any(r.container_id for r in main_runs):
        return "Failed" if terminal and any(r.state == "terminated" for r in init_runs) else "Pending"
    waiting = running = stopped = succeeded = 0
    for run in main_runs:
        if run.state == "running":
            running += 1
        elif run.state == "terminated":
            stopped += 1
            if run.exit_code == 0:
                succeeded += 1
        elif run.last:
            stopped += 1
        else:
            waiting += 1
    if waiting > 0 and not terminal:
        return "Pending"
    if running > 0 and not terminal:
        return "Running"
    if stopped > 0 or terminal:
        if restart == "Always" and not terminal:
            return "Running"
        if stopped == succeeded and waiting == 0 and running == 0:
            return "Succeeded"
        if restart == "Never" or terminal:
            return "Failed"
        return "Running"
    return "Pending"


def _kubelet_conditions(
    pod: Obj,
    phase: str,
    inits: list[Profile],
    init_runs: tuple[ContainerRun, ...],
    mains: list[Profile],
    main_runs: tuple[ContainerRun, ...],
    others: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    # Initialized
    if phase == "Succeeded":
        initialized: dict[str, Any] = {"type": "Initialized", "status": "True", "reason": "PodCompleted"}
    else:
        incomplete = [
            p.name
            for p, r in zip(inits, init_runs, strict=True)
            if not (r.started if p.role == "sidecar" else (r.state == "terminated" and r.exit_code == 0))
        ]
        if incomplete and not any(r.container_id for r in main_runs):
            initialized = {
                "type": "Initialized",
                "status": "False",
                "reason": "ContainersNotInitialized",
                "message": f"containers with incomplete status: {_names(incomplete)}",
            }
        else:
            initialized = {"type": "Initialized", "status": "True"}
    # ContainersReady
    if phase in ("Succeeded", "Failed"):
        reason = "PodCompleted" if phase == "Succeeded" else "PodFailed"
        containers_ready: dict[str, Any] = {"type": "ContainersReady", "status": "False", "reason": reason}
    else:
        unready = [
            p.name for p, r in zip(inits, init_runs, strict=True) if p.role == "sidecar" and not r.ready
        ]
        unready += [p.name for p, r in zip(mains, main_runs, strict=True) if not r.ready]
        if unready:
            containers_ready = {
                "type": "ContainersReady",
                "status": "False",
                "reason": "ContainersNotReady",
                "message": f"containers with unready status: {_names(unready)}",
            }
        else:
            containers_ready = {"type": "ContainersReady", "status": "True"}
    # Ready: ContainersReady and every readiness gate
    ready = dict(containers_ready, type="Ready")
    if containers_ready["status"] == "True":
        problems = []
        for gate in (pod.get("spec") or {}).get("readinessGates") or []:
            ctype = gate.get("conditionType", "")
            c = find_condition(others, ctype)
            if c is None:
                problems.append(f'corresponding condition of pod readiness gate "{ctype}" does not exist.')
            elif c.get("status") != "True":
                problems.append(
                    f'the status of pod readiness gate "{ctype}" is not "True", but {c.get("status")}'
                )
        if problems:
            ready = {
                "type": "Ready",
                "status": "False",
                "reason": "ReadinessGatesNotReady",
                "message": ", ".join(problems),
            }
    return [initialized, ready, containers_ready, {"type": "PodScheduled", "status": "True"}]


def _conditions(
    pod: Obj, phase: str, timeline: PodTimeline, verdict: PodVerdict | None, now: str
) -> list[dict[str, Any]]:
    """Conditions others own first (kept, or set from the verdict), then the
    kubelet's own, each keeping its lastTransitionTime while its status holds."""
    old = list(status_of(pod).get("conditions") or [])
    out = [dict(c) for c in old if c.get("type") not in KUBELET_CONDITIONS]
    for vc in verdict.conditions if verdict is not None else ():
        out = merge_condition(out, {"lastProbeTime": None, **vc}, now)
    inits, mains = profiles(pod)
    for c in _kubelet_conditions(pod, phase, inits, timeline.init, mains, timeline.main, out):
        prev = find_condition(old, c["type"])
        out.append(merge_condition([prev] if prev else [], {"lastProbeTime": None, **c}, now)[0])
    return out


def _status(
    pod: Obj,
    phase: str,
    timeline: PodTimeline,
    verdict: PodVerdict | None,
    now: float,
    host_ip: str,
    pod_ip: str,
) -> Obj:
    inits, mains = profiles(pod)
    st = dict(status_of(pod))
    st["phase"] = phase
    st["conditions"] = _conditions(pod, phase, timeline, verdict, format_time(now))
    st["hostIP"] = host_ip
    st["hostIPs"] = [{"ip": host_ip}]
    st["podIP"] = pod_ip
    st["podIPs"] = [{"ip": pod_ip}]
    st["startTime"] = st.get("startTime") or format_time(timeline.seen)
    if inits:
        st["initContainerStatuses"] = [
            container_status(r, p) for p, r in zip(inits, timeline.init, strict=True)
        ]
    st["containerStatuses"] = [container_status(r, p) for p, r in zip(mains, timeline.main, strict=True)]
    return st


def _crash_for(verdict: PodVerdict | None, prof: Profile) -> ContainerExit | None:
    crash = verdict.crash if verdict is not None else None
    if crash is None or crash.container not in (None, prof.name):
        return None
    return crash


def _completion_for(verdict: PodVerdict | None, prof: Profile) -> ContainerExit | None:
    completion = verdict.completion if verdict is not None else None
    if completion is None or completion.container not in (None, prof.name):
        return None
    return completion


def _annotation_changes(pod: Obj, verdict: PodVerdict | None) -> dict[str, str | None] | None:
    if verdict is None or not verdict.annotations:
        return None
    have = annotations_of(pod)
    changes = {
        k: v for k, v in verdict.annotations.items() if have.get(k) != v and not (v is None and k not in have)
    }
    return changes or None


def _tear_down(
    pod: Obj, tl: PodTimeline, now: float, timing: Timing, host_ip: str, pod_ip: str
) -> KubeletDecision:
    """A deleted pod: its containers run out the (scaled) grace period, then
    stop, and the pod's final status is written before it may go."""
    if tl.stop_at is None:
        grace = (pod.get("metadata") or {}).get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        ever_ran = any(r.container_id for r in tl.init + tl.main)
        tl = replace(tl, stop_at=now + (timing.scaled(float(grace)) if ever_ran else 0.0))
    assert tl.stop_at is not None
    if now < tl.stop_at:
        return KubeletDecision(None, None, False, tl.stop_at - now, tl)
    tl = replace(
        tl,
        init=tuple(stop(r, tl.stop_at) for r in tl.init),
        main=tuple(stop(r, tl.stop_at) for r in tl.main),
    )
    phase = pod_phase(pod, profiles(pod)[0], tl.init, tl.main, terminal=True)
    status = _status(pod, phase, tl, None, now, host_ip, pod_ip)
    return KubeletDecision(status if status != status_of(pod) else None, None, True, None, tl)


def _config_error(run: ContainerRun, prof: Profile, unmet: Unmet, now: float) -> ContainerRun | None:
    """The container waiting with ``CreateContainerConfigError``, when its environment
    cannot be made and it was never created (a running container is left alone)."""
    why = unmet.env.get(prof.name)
    if why is None or run.container_id:
        return None
    if run.reason == "CreateContainerConfigError" and run.message == why:
        return run
    return replace(run, state="waiting", reason="CreateContainerConfigError", message=why, since=now)


def _advance_inits(
    pod: Obj,
    tl: PodTimeline,
    rules: RuleSet,
    now: float,
    timing: Timing,
    wakes: list[float],
    unmet: Unmet,
) -> tuple[list[ContainerRun], bool]:
    """Init containers one after another, each once the previous one is done
    (exited 0, or started for a sidecar); True when all are done."""
    init_runs = list(tl.init)
    for i, prof in enumerate(profiles(pod)[0]):
        blocked = _config_error(init_runs[i], prof, unmet, now)
        if blocked is not None:
            init_runs[i] = blocked
            return init_runs, False
        step = advance(init_runs[i], prof, pod, rules, now, timing, allow_ready=True)
        init_runs[i] = step.run
        if step.wake_after is not None:
            wakes.append(step.wake_after)
        if prof.role == "sidecar":
            done = step.run.started
        else:
            done = step.run.state == "terminated" and step.run.exit_code == 0
        if not done:
            return init_runs, False
    return init_runs, True


def _advance_mains(
    pod: Obj,
    tl: PodTimeline,
    rules: RuleSet,
    verdict: PodVerdict | None,
    now: float,
    timing: Timing,
    wakes: list[float],
    unmet: Unmet,
) -> list[ContainerRun]:
    """The main containers, created together once the init containers are done."""
    allow_ready = verdict is None or verdict.ready is not False
    main_runs = list(tl.main)
    for i, prof in enumerate(profiles(pod)[1]):
        run = main_runs[i]
        if run.state == "waiting" and run.reason == "PodInitializing":
            run = replace(run, reason="ContainerCreating", since=now)
        blocked = _config_error(run, prof, unmet, now)
        if blocked is not None:
            main_runs[i] = blocked
            continue
        step = advance(
            run,
            prof,
            pod,
            rules,
            now,
            timing,
            allow_ready=allow_ready,
            crash=_crash_for(verdict, prof),
            completion=_completion_for(verdict, prof),
        )
        main_runs[i] = step.run
        if step.wake_after is not None:
            wakes.append(step.wake_after)
    return main_runs


def sync_pod(
    pod: Obj,
    *,
    timeline: PodTimeline | None,
    now: float,
    rules: RuleSet,
    verdict: PodVerdict | None,
    timing: Timing,
    host_ip: str,
    pod_ip: str,
    unmet: Unmet | None = None,
) -> KubeletDecision:
    """One kubelet pass over a pod bound to a live simulated node. ``unmet``: the
    Secrets and ConfigMaps it needs that are missing (``references.py``); a pod
    whose volumes cannot be set up starts nothing until they can."""
    tl = timeline or timeline_from_status(pod, now)
    if status_of(pod).get("phase") in ("Succeeded", "Failed"):
        return KubeletDecision(None, None, is_deleting(pod), None, tl)
    if is_deleting(pod):
        return _tear_down(pod, tl, now, timing, host_ip, pod_ip)
    unmet = unmet or Unmet()

    wakes: list[float] = []
    if unmet.volume is not None and not any(r.container_id for r in tl.init + tl.main):
        status = _status(pod, "Pending", tl, verdict, now, host_ip, pod_ip)
        changed = status if status != status_of(pod) else None
        return KubeletDecision(changed, _annotation_changes(pod, verdict), False, None, tl)
    init_runs, inits_done = _advance_inits(pod, tl, rules, now, timing, wakes, unmet)
    if inits_done:
        main_runs = _advance_mains(pod, tl, rules, verdict, now, timing, wakes, unmet)
    else:
        main_runs = [
            replace(r, reason="PodInitializing") if r.state == "waiting" and not r.container_id else r
            for r in tl.main
        ]
    tl = replace(tl, init=tuple(init_runs), main=tuple(main_runs))
    phase = pod_phase(pod, profiles(pod)[0], tl.init, tl.main, terminal=False)
    status = _status(pod, phase, tl, verdict, now, host_ip, pod_ip)
    wake = None if phase in ("Succeeded", "Failed") else (min(wakes) if wakes else None)
    changed = status if status != status_of(pod) else None
    return KubeletDecision(changed, _annotation_changes(pod, verdict), False, wake, tl)
