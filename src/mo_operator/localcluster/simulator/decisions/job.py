"""The Job controller's decision for one Job (pkg/controller/job, 1.28):
pods up to parallelism and completions, NonIndexed and Indexed completion,
tracking of finished pods through the ``batch.kubernetes.io/job-tracking``
finalizer and ``status.uncountedTerminatedPods``, the pod back-off, the
backoffLimit and activeDeadlineSeconds failures, suspension, and the
ttlSecondsAfterFinished clean-up of the TTL-after-finished controller."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.actions import Action, Create, Delete, Patch, pod_delete
from ..core.kinds import JOB, POD
from ..core.objects import (
    Obj,
    annotations_of,
    find_condition,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    parse_time,
    rfc3339,
    spec_of,
    status_of,
    uid_of,
)
from ..core.pods import is_pod_ready, phase_of
from .ownership import claim_children
from .replicaset import BURST, pod_from_template

TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
INDEX_KEY = "batch.kubernetes.io/job-completion-index"
BACKOFF_BASE = 10.0
BACKOFF_MAX = 360.0


@dataclass(frozen=True)
class JobPlan:
    #: Adoption, pod creations and deletions: written before the status, as
    #: ``manageJob`` runs before the status update (the status counts them).
    manage: list[Action]
    #: The status to write (None: already consistent).
    status: Obj | None
    #: Written after the status: tracking finalizers of pods it records, the TTL deletion.
    actions: list[Action]
    requeue_after: float | None = None


def _finished(job: Obj) -> str | None:
    for ctype in ("Complete", "Failed"):
        c = find_condition(status_of(job).get("conditions"), ctype)
        if c is not None and c.get("status") == "True":
            return ctype
    return None


def _pod_failed(pod: Obj) -> bool:
    """``isPodFailed`` without a podFailurePolicy: Failed, or deleted before
    it succeeded (an orphan that will never reach a phase)."""
    return phase_of(pod) == "Failed" or (is_deleting(pod) and phase_of(pod) != "Succeeded")


def _pod_done(pod: Obj) -> bool:
    return phase_of(pod) == "Succeeded" or _pod_failed(pod)


def _index(pod: Obj) -> int | None:
    raw = annotations_of(pod).get(INDEX_KEY)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


def _compress(indexes: set[int]) -> str:
    """Ordered ranges as ``status.completedIndexes`` writes them (``1,3-5``)."""
    out: list[str] = []
    run: list[int] = []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
        run = [i]
    if run:
        out.append(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}")
    return ",".join(out)


def _expand(text: str | None) -> set[int]:
    out: set[int] = set()
    for part in (text or "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _new_pod(job: Obj, index: int | None) -> Obj:
    pod = pod_from_template(job, JOB, spec_of(job).get("template") or {})
    pod["metadata"]["finalizers"] = [*pod["metadata"].get("finalizers", []), TRACKING_FINALIZER]
    if index is not None:
        pod["metadata"]["generateName"] = f"{name_of(job)}-{index}-"
        pod["metadata"].setdefault("annotations", {})[INDEX_KEY] = str(index)
        pod["metadata"]["labels"][INDEX_KEY] = str(index)
        pod["spec"]["hostname"] = f"{name_of(job)}-{index}"
        for c in pod["spec"].get("containers") or []:
            env = [e for e in c.get("env") or [] if e.get("name") != "JOB_COMPLETION_INDEX"]
            env.append(
                {
                    "name": "JOB_COMPLETION_INDEX",
                    "valueFrom": {"fieldRef": {"fieldPath": f"metadata.annotations['{INDEX_KEY}']"}},
                }
            )
            c["env"] = env
    return pod


def release_tracking_finalizer(pod: Obj) -> Patch:
    fins = list(meta(pod).get("finalizers") or [])
    i = fins.index(TRACKING_FINALIZER)
    path = f"/metadata/finalizers/{i}"
    return Patch(
        POD,
        namespace_of(pod),
        name_of(pod),
        [{"op": "test", "path": path, "value": TRACKING_FINALIZER}, {"op": "remove", "path": path}],
        patch_type="json",
    )


def _last_failure(pods: Sequence[Obj]) -> float | None:
    times = []
    for p in pods:
        if phase_of(p) != "Failed":
            continue
        for cs in status_of(p).get("containerStatuses") or []:
            t = parse_time(((cs.get("state") or {}).get("terminated") or {}).get("finishedAt"))
            if t is not None:
                times.append(t)
    return max(times, default=None)


def plan_job(job: Obj, pods: Sequence[Obj], now: float, time_scale: float) -> JobPlan:
    spec = spec_of(job)
    old = status_of(job)
    stamp = rfc3339(now)
    owned, manage = claim_children(job, JOB, POD, spec.get("selector"), pods)
    actions: list[Action] = []
    by_uid = {uid_of(p): p for p in owned}
    done_kind = _finished(job)
    indexed = spec.get("completionMode") == "Indexed"

    # --- finished-pod accounting through uncountedTerminatedPods
    uncounted_old = old.get("uncountedTerminatedPods") or {}
    old_succ, old_fail = set(uncounted_old.get("succeeded") or []), set(uncounted_old.get("failed") or [])
    flushed_succ = {
        u
        for u in old_succ
        if u not in by_uid or TRACKING_FINALIZER not in (meta(by_uid[u]).get("finalizers") or [])
    }
    flushed_fail = {
        u
        for u in old_fail
        if u not in by_uid or TRACKING_FINALIZER not in (meta(by_uid[u]).get("finalizers") or [])
    }
    new_succ, new_fail = set(old_succ - flushed_succ), set(old_fail - flushed_fail)
    for p in owned:
        if TRACKING_FINALIZER not in (meta(p).get("finalizers") or []) or not _pod_done(p):
            continue
        u = uid_of(p)
        if u in old_succ or u in old_fail:
            actions.append(release_tracking_finalizer(p))  # recorded in status already: safe to release
        elif phase_of(p) == "Succeeded":
            new_succ.add(u)
        else:
            new_fail.add(u)
    succeeded = int(old.get("succeeded") or 0) + len(flushed_succ)
    failed = int(old.get("failed") or 0) + len(flushed_fail)
    total_succ, total_fail = succeeded + len(new_succ), failed + len(new_fail)

    completed = _expand(old.get("completedIndexes"))
    if indexed:
        completions_n = int(spec.get("completions") or 0)
        completed |= {
            i
            for p in owned
            if phase_of(p) == "Succeeded" and (i := _index(p)) is not None and i < completions_n
        }

    active = [p for p in owned if not _pod_done(p) and not is_deleting(p)]
    parallelism = int(spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1)
    completions = spec.get("completions")
    backoff_limit = int(spec.get("backoffLimit", 6) if spec.get("backoffLimit") is not None else 6)
    suspended = bool(spec.get("suspend"))
    status: dict[str, Any] = {
        k: v for k, v in old.items() if k in ("startTime", "completionTime", "conditions")
    }
    conds = [dict(c) for c in status.get("conditions") or []]
    requeue: list[float] = []

    finishing: tuple[str, str, str] | None = None
    if done_kind is None:
        if not suspended and "startTime" not in status:
            status["startTime"] = stamp
        start = parse_time(status.get("startTime"))
        restarts = sum(
            int(cs.get("restartCount") or 0)
            for p in active
            for cs in (status_of(p).get("containerStatuses") or [])
            + (status_of(p).get("initContainerStatuses") or [])
        )
        on_failure_exceeded = (spec.get("template") or {}).get("spec", {}).get(
            "restartPolicy"
        ) == "OnFailure" and (restarts > 0 if backoff_limit == 0 else restarts >= backoff_limit)
        deadline = spec.get("activeDeadlineSeconds")
        if total_fail > backoff_limit or on_failure_exceeded:
            finishing = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
        elif deadline is not None and start is not None and now >= start + int(deadline):
            finishing = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
        elif (
            (indexed and len(completed) >= int(completions or 0))
            or (not indexed and completions is not None and total_succ >= int(completions))
            or (not indexed and completions is None and total_succ > 0 and not active)
        ):
            finishing = ("Complete", "", "")
        elif deadline is not None and start is not None:
            requeue.append(start + int(deadline) - now)

    if done_kind is not None or finishing is not None or suspended or is_deleting(job):
        want_active = 0
    elif indexed:
        want_active = min(parallelism, int(completions or 0) - len(completed))
    elif completions is None:
        want_active = len(active) if total_succ > 0 else parallelism
    else:
        want_active = min(parallelism, int(completions) - total_succ)
    want_active = max(0, want_active)

    if len(active) > want_active:
        ranked = sorted(
            active, key=lambda p: (1 if is_pod_ready(p) else 0, phase_of(p) == "Running", name_of(p))
        )
        manage += [pod_delete(p) for p in ranked[: len(active) - want_active]]
    elif len(active) < want_active and not (new_fail or flushed_fail):
        # A replacement for a failed pod waits until the failure is counted and a
        # sync later: the real back-off (10 s and more) always outlasts that
        # accounting, so status.failed moves before a new pod appears even when
        # the simulator's scaled back-off is shorter.
        delay = 0.0
        last = _last_failure(owned)
        if total_fail > 0 and last is not None:
            delay = last + time_scale * min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (total_fail - 1)) - now
        if delay > 0:
            requeue.append(delay)
        elif indexed:
            busy = {i for p in active if (i := _index(p)) is not None}
            free = [i for i in range(int(completions or 0)) if i not in completed and i not in busy]
            manage += [Create(POD, _new_pod(job, i)) for i in free[: min(want_active - len(active), BURST)]]
        else:
            manage += [Create(POD, _new_pod(job, None)) for _ in range(min(want_active - len(active), BURST))]

    if suspended and done_kind is None:
        if (find_condition(conds, "Suspended") or {}).get("status") != "True":
            conds = [c for c in conds if c.get("type") != "Suspended"]
            conds.append(
                {
                    "type": "Suspended",
                    "status": "True",
                    "reason": "JobSuspended",
                    "message": "Job suspended",
                    "lastProbeTime": stamp,
                    "lastTransitionTime": stamp,
                }
            )
    elif (c := find_condition(conds, "Suspended")) is not None and c.get("status") == "True":
        conds = [x for x in conds if x.get("type") != "Suspended"]
        conds.append(
            {
                "type": "Suspended",
                "status": "False",
                "reason": "JobResumed",
                "message": "Job resumed",
                "lastProbeTime": stamp,
                "lastTransitionTime": stamp,
            }
        )
        status["startTime"] = stamp

    # The finished condition is written once no pod is left to account for.
    if (
        finishing is not None
        and not active
        and not new_succ
        and not new_fail
        and not any(TRACKING_FINALIZER in (meta(p).get("finalizers") or []) for p in owned)
    ):
        ctype, reason, message = finishing
        cond: Obj = {"type": ctype, "status": "True", "lastProbeTime": stamp, "lastTransitionTime": stamp}
        if reason:
            cond["reason"], cond["message"] = reason, message
        conds.append(cond)
        if ctype == "Complete":
            status["completionTime"] = stamp
    elif finishing is not None:
        requeue.append(0.1)

    # manageJob counts the pods it just created or deleted as (in)active.
    made = sum(1 for a in manage if isinstance(a, Create))
    removed = sum(1 for a in manage if isinstance(a, Delete) and a.kind == POD)
    status.update(
        active=len(active) + made - removed,
        ready=sum(1 for p in active if is_pod_ready(p)),
        succeeded=succeeded,
        failed=failed,
        uncountedTerminatedPods={
            k: sorted(v) for k, v in (("succeeded", new_succ), ("failed", new_fail)) if v
        },
    )
    if conds:
        status["conditions"] = conds
    if indexed:
        status["completedIndexes"] = _compress(completed)

    # ttlSecondsAfterFinished (the TTL-after-finished controller).
    ttl = spec.get("ttlSecondsAfterFinished")
    finished_cond = next(
        (c for c in conds if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), None
    )
    if ttl is not None and finished_cond is not None and not is_deleting(job):
        at = (parse_time(finished_cond.get("lastTransitionTime")) or now) + int(ttl)
        if now >= at:
            actions.append(
                Delete(JOB, namespace_of(job), name_of(job), uid=uid_of(job), propagation="Foreground")
            )
        else:
            requeue.append(at - now)

    def norm(st: Obj) -> Obj:
        return {k: v for k, v in st.items() if v not in (None, 0, "", {}, [])}

    differs = norm(status) != norm(old)
    return JobPlan(manage, status if differs else None, actions, min(requeue) if requeue else None)
