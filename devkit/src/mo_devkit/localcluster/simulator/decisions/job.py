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

from mo_operator.kube.meta.times import format_time, parse_time

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


def _tracked(pod: Obj) -> bool:
    return TRACKING_FINALIZER in (meta(pod).get("finalizers") or [])


@dataclass
class _Accounting:
    """Finished pods as ``trackJobStatusAndRemoveFinalizers`` sees them: those
    already counted (``succeeded``/``failed``), those recorded in
    ``uncountedTerminatedPods`` awaiting their finalizer's release (``new_*``)."""

    succeeded: int
    failed: int
    new_succ: set[str]
    new_fail: set[str]
    #: Some failure left uncountedTerminatedPods in this sync.
    flushed_fail: bool
    #: Finalizer releases of pods the status already records.
    releases: list[Action]
    completed: set[int]

    @property
    def total_succ(self) -> int:
        return self.succeeded + len(self.new_succ)

    @property
    def total_fail(self) -> int:
        return self.failed + len(self.new_fail)


def _account(old: Obj, owned: Sequence[Obj], indexed: bool, completions: int) -> _Accounting:
    """Moves uids whose finalizer is gone from uncountedTerminatedPods into the
    counters, and records newly finished tracked pods there: the two-step
    hand-over that keeps a pod from being counted twice or not at all."""
    by_uid = {uid_of(p): p for p in owned}
    uncounted_old = old.get("uncountedTerminatedPods") or {}
    old_succ, old_fail = set(uncounted_old.get("succeeded") or []), set(uncounted_old.get("failed") or [])
    flushed_succ = {u for u in old_succ if u not in by_uid or not _tracked(by_uid[u])}
    flushed_fail = {u for u in old_fail if u not in by_uid or not _tracked(by_uid[u])}
    new_succ, new_fail = set(old_succ - flushed_succ), set(old_fail - flushed_fail)
    releases: list[Action] = []
    for p in owned:
        if not _tracked(p) or not _pod_done(p):
            continue
        u = uid_of(p)
        if u in old_succ or u in old_fail:
            releases.append(release_tracking_finalizer(p))  # recorded in status already: safe to release
        elif phase_of(p) == "Succeeded":
            new_succ.add(u)
        else:
            new_fail.add(u)
    completed = _expand(old.get("completedIndexes"))
    if indexed:
        completed |= {
            i
            for p in owned
            if phase_of(p) == "Succeeded" and (i := _index(p)) is not None and i < completions
        }
    return _Accounting(
        succeeded=int(old.get("succeeded") or 0) + len(flushed_succ),
        failed=int(old.get("failed") or 0) + len(flushed_fail),
        new_succ=new_succ,
        new_fail=new_fail,
        flushed_fail=bool(flushed_fail),
        releases=releases,
        completed=completed,
    )


def _int_or(spec: Obj, key: str, default: int) -> int:
    value = spec.get(key)
    return int(value) if value is not None else default


def _restarts(active: Sequence[Obj]) -> int:
    return sum(
        int(cs.get("restartCount") or 0)
        for p in active
        for cs in (status_of(p).get("containerStatuses") or [])
        + (status_of(p).get("initContainerStatuses") or [])
    )


def _finishing(
    spec: Obj, start: float | None, active: Sequence[Obj], acc: _Accounting, now: float
) -> tuple[tuple[str, str, str] | None, float | None]:
    """The verdict an unfinished Job reaches in this sync (type, reason,
    message), and when the active deadline would next need a look."""
    backoff_limit = _int_or(spec, "backoffLimit", 6)
    indexed = spec.get("completionMode") == "Indexed"
    completions = spec.get("completions")
    restarts = _restarts(active)
    on_failure_exceeded = (spec.get("template") or {}).get("spec", {}).get(
        "restartPolicy"
    ) == "OnFailure" and (restarts > 0 if backoff_limit == 0 else restarts >= backoff_limit)
    deadline = spec.get("activeDeadlineSeconds")
    if acc.total_fail > backoff_limit or on_failure_exceeded:
        return ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit"), None
    if deadline is not None and start is not None and now >= start + int(deadline):
        return ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline"), None
    if (
        (indexed and len(acc.completed) >= int(completions or 0))
        or (not indexed and completions is not None and acc.total_succ >= int(completions))
        or (not indexed and completions is None and acc.total_succ > 0 and not active)
    ):
        return ("Complete", "", ""), None
    if deadline is not None and start is not None:
        return None, start + int(deadline) - now
    return None, None


def _want_active(spec: Obj, active: Sequence[Obj], acc: _Accounting, stopping: bool) -> int:
    """How many pods should run: none once stopping (finished, suspended,
    deleted), else parallelism capped by the completions still missing."""
    if stopping:
        return 0
    parallelism = _int_or(spec, "parallelism", 1)
    completions = spec.get("completions")
    if spec.get("completionMode") == "Indexed":
        want = min(parallelism, int(completions or 0) - len(acc.completed))
    elif completions is None:
        want = len(active) if acc.total_succ > 0 else parallelism
    else:
        want = min(parallelism, int(completions) - acc.total_succ)
    return max(0, want)


def _manage_pods(
    job: Obj,
    owned: Sequence[Obj],
    active: Sequence[Obj],
    want: int,
    acc: _Accounting,
    now: float,
    time_scale: float,
) -> tuple[list[Action], float | None]:
    """``manageJob``: deletes the least advanced surplus pods, or creates the
    missing ones once the pod back-off has passed (returning the wait otherwise)."""
    if len(active) > want:
        ranked = sorted(
            active, key=lambda p: (1 if is_pod_ready(p) else 0, phase_of(p) == "Running", name_of(p))
        )
        return [pod_delete(p) for p in ranked[: len(active) - want]], None
    if len(active) >= want or acc.new_fail or acc.flushed_fail:
        # A replacement for a failed pod waits until the failure is counted and a
        # sync later: the real back-off (10 s and more) always outlasts that
        # accounting, so status.failed moves before a new pod appears even when
        # the simulator's scaled back-off is shorter.
        return [], None
    last = _last_failure(owned)
    if acc.total_fail > 0 and last is not None:
        delay = last + time_scale * min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (acc.total_fail - 1)) - now
        if delay > 0:
            return [], delay
    count = min(want - len(active), BURST)
    if spec_of(job).get("completionMode") != "Indexed":
        return [Create(POD, _new_pod(job, None)) for _ in range(count)], None
    busy = {i for p in active if (i := _index(p)) is not None}
    completions = int(spec_of(job).get("completions") or 0)
    free = [i for i in range(completions) if i not in acc.completed and i not in busy]
    return [Create(POD, _new_pod(job, i)) for i in free[:count]], None


def _suspension(conds: list[Obj], suspended: bool, done: bool, stamp: str) -> tuple[list[Obj], bool]:
    """The Suspended condition after this sync, and whether the Job was just
    resumed (which restarts its startTime)."""
    current = find_condition(conds, "Suspended") or {}
    others = [c for c in conds if c.get("type") != "Suspended"]
    if suspended and not done:
        if current.get("status") == "True":
            return conds, False
        status, reason, message, resumed = "True", "JobSuspended", "Job suspended", False
    elif current.get("status") == "True":
        status, reason, message, resumed = "False", "JobResumed", "Job resumed", True
    else:
        return conds, False
    cond = {
        "type": "Suspended",
        "status": status,
        "reason": reason,
        "message": message,
        "lastProbeTime": stamp,
        "lastTransitionTime": stamp,
    }
    return [*others, cond], resumed


def _finished_condition(finishing: tuple[str, str, str], stamp: str) -> Obj:
    ctype, reason, message = finishing
    cond: Obj = {"type": ctype, "status": "True", "lastProbeTime": stamp, "lastTransitionTime": stamp}
    if reason:
        cond["reason"], cond["message"] = reason, message
    return cond


def _ttl(job: Obj, conds: Sequence[Obj], now: float) -> tuple[list[Action], float | None]:
    """The TTL-after-finished controller: deletes a finished Job once
    ``ttlSecondsAfterFinished`` has passed since it finished."""
    ttl = spec_of(job).get("ttlSecondsAfterFinished")
    finished_cond = next(
        (c for c in conds if c.get("type") in ("Complete", "Failed") and c.get("status") == "True"), None
    )
    if ttl is None or finished_cond is None or is_deleting(job):
        return [], None
    at = (parse_time(finished_cond.get("lastTransitionTime")) or now) + int(ttl)
    if now >= at:
        return [Delete(JOB, namespace_of(job), name_of(job), uid=uid_of(job), propagation="Foreground")], None
    return [], at - now


def _norm(st: Obj) -> Obj:
    return {k: v for k, v in st.items() if v not in (None, 0, "", {}, [])}


def plan_job(job: Obj, pods: Sequence[Obj], now: float, time_scale: float) -> JobPlan:
    spec = spec_of(job)
    old = status_of(job)
    stamp = format_time(now)
    owned, manage = claim_children(job, JOB, POD, spec.get("selector"), pods)
    done_kind = _finished(job)
    indexed = spec.get("completionMode") == "Indexed"
    acc = _account(old, owned, indexed, int(spec.get("completions") or 0))
    active = [p for p in owned if not _pod_done(p) and not is_deleting(p)]
    suspended = bool(spec.get("suspend"))
    status: dict[str, Any] = {
        k: v for k, v in old.items() if k in ("startTime", "completionTime", "conditions")
    }
    requeue: list[float] = []

    finishing: tuple[str, str, str] | None = None
    if done_kind is None:
        if not suspended and "startTime" not in status:
            status["startTime"] = stamp
        finishing, deadline_wait = _finishing(spec, parse_time(status.get("startTime")), active, acc, now)
        requeue += [deadline_wait] if deadline_wait is not None else []

    stopping = done_kind is not None or finishing is not None or suspended or is_deleting(job)
    changes, backoff_wait = _manage_pods(
        job, owned, active, _want_active(spec, active, acc, stopping), acc, now, time_scale
    )
    manage += changes
    requeue += [backoff_wait] if backoff_wait is not None else []

    conds, resumed = _suspension(
        [dict(c) for c in status.get("conditions") or []], suspended, done_kind is not None, stamp
    )
    if resumed:
        status["startTime"] = stamp

    # The finished condition is written once no pod is left to account for.
    if finishing is not None:
        if not active and not acc.new_succ and not acc.new_fail and not any(_tracked(p) for p in owned):
            conds.append(_finished_condition(finishing, stamp))
            if finishing[0] == "Complete":
                status["completionTime"] = stamp
        else:
            requeue.append(0.1)

    # manageJob counts the pods it just created or deleted as (in)active.
    made = sum(1 for a in manage if isinstance(a, Create))
    removed = sum(1 for a in manage if isinstance(a, Delete) and a.kind == POD)
    status.update(
        active=len(active) + made - removed,
        ready=sum(1 for p in active if is_pod_ready(p)),
        succeeded=acc.succeeded,
        failed=acc.failed,
        uncountedTerminatedPods={
            k: sorted(v) for k, v in (("succeeded", acc.new_succ), ("failed", acc.new_fail)) if v
        },
    )
    if conds:
        status["conditions"] = conds
    if indexed:
        status["completedIndexes"] = _compress(acc.completed)

    deletion, ttl_wait = _ttl(job, conds, now)
    requeue += [ttl_wait] if ttl_wait is not None else []
    differs = _norm(status) != _norm(old)
    return JobPlan(
        manage, status if differs else None, acc.releases + deletion, min(requeue) if requeue else None
    )
