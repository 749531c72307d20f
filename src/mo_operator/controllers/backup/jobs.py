"""What BackupJob and RestoreJob share: the Job that runs ``mo_br``, reading its
outcome from the pod's status, the phases and the ``Ended`` condition, and the clean-up
of ended jobs after their ``ttl``.

**Phases.** Pending (nothing started: waiting for the source or the Backup) → Running
(the Job exists) → Completed or Failed, with condition ``Ended`` (upstream's type) False
while it runs and True once it ended, its reason and message saying how. Every step is
decided from the cache: the Job is named like the job object (a killed operator
restarted finds it instead of making a second one), and its result is read from its
pod's status, where it stays as long as the Job exists. A completed job's Job is deleted
only once the Completed phase is recorded; a failed job's Job is kept for
troubleshooting until the job object itself goes.

**Outcome.** The tool's container writes its result to its termination-message file
(on failure the kubelet falls back to the tail of its output), which the kubelet
publishes in ``status.containerStatuses[].state.terminated``: no Service, no polling of
the pod, nothing but read access to pods.

**TTL.** ``spec.ttl`` (1h by default) after ``Ended`` turned True, the job object is
deleted, and its Job with it (upstream's GC observer).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from mo_operator.api.backup import BackupJob, BackupJobStatus, RestoreJob, RestoreJobStatus
from mo_operator.api.base import dump
from mo_operator.api.common import POD_OVERLAY_FIELDS, JobOverlay
from mo_operator.api.fields import parse_duration
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import Requeue, TerminalError, Wait
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.kube.meta.objects import mapping_at, meta_of, namespace_of, status_of, view
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.decision import Decision, Emit, SetCondition
from ..framework.env import Caches, Env
from ..framework.meta import child_metadata, cluster_of, is_controlled_by, is_deleting, name_of, uid_of
from ..framework.typed import parse_status
from ..framework.writes import Delete, Intent
from ..specs import pods as podutil
from ..specs.podtemplate import _upsert, overlay_container

Obj = dict[str, Any]

PENDING: Final = "Pending"
RUNNING: Final = "Running"
COMPLETED: Final = "Completed"
FAILED: Final = "Failed"
ENDED: Final = "Ended"

DEFAULT_TTL_SECONDS: Final = 3600.0
JOB_MISSING_GRACE_SECONDS: Final = 10.0
"""How long a Running job waits for its Job to show in the cache before calling it deleted."""
CLEANUP_REQUEUE_SECONDS: Final = 0.5


def job_labels(owner: Mapping[str, Any], kind: str) -> dict[str, str]:
    """Labels of the Job and its pod: the three upstream selects by, plus the cluster's."""
    meta = owner["metadata"]
    out = {
        labels.NAMESPACE: str(meta.get("namespace") or ""),
        labels.INSTANCE: str(meta["name"]),
        labels.COMPONENT: kind,
    }
    cluster = cluster_of(owner)
    if cluster:
        out.update(labels.cluster_labels(cluster))
    return out


def build_job(
    owner: Mapping[str, Any],
    kind: str,
    *,
    image: str,
    script: str,
    env: Sequence[Obj],
    overlay: JobOverlay | None,
    name: str | None = None,
) -> Obj:
    """The Job ``name`` (the job object's by default) that runs ``script`` once (no retry:
    a backup is not idempotent), with the job object's ``overlay`` over its pod (the
    command stays ours)."""
    written: Obj = dump(overlay) if overlay is not None else {}
    container: Obj = {
        "name": br.CONTAINER,
        "image": image,
        "env": [dict(e) for e in env],
        "terminationMessagePath": br.TERMINATION_MESSAGE_PATH,
        "terminationMessagePolicy": br.TERMINATION_MESSAGE_POLICY,
    }
    overlay_container(container, written)
    container["command"] = ["/bin/sh", "-c", script]
    container.pop("args", None)
    containers = [container, *(dict(c) for c in written.get("sidecarContainers") or ())]
    pod_spec: Obj = {"containers": containers, "restartPolicy": "Never"}
    if written.get("volumes"):
        pod_spec["volumes"] = _upsert([], written["volumes"])
    for key in POD_OVERLAY_FIELDS:
        if written.get(key) is not None and written.get(key) != []:
            pod_spec[key] = written[key]
    obj_labels = job_labels(owner, kind)
    template_meta: Obj = {"labels": {**(written.get("podLabels") or {}), **obj_labels}}
    if written.get("podAnnotations"):
        template_meta["annotations"] = dict(written["podAnnotations"])
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": child_metadata(owner, name or name_of(owner), obj_labels),
        "spec": {
            "parallelism": 1,
            "completions": 1,
            "backoffLimit": 0,
            "template": {"metadata": template_meta, "spec": pod_spec},
        },
    }


@dataclass(frozen=True)
class Outcome:
    """How the tool run of a Job went, as its pod's status tells."""

    state: str
    """``running``, ``succeeded`` or ``failed``."""
    message: str = ""
    """The termination message (the tool's result, or its last output on failure); while
    running, what the pod waits for, if anything."""
    started_at: str | None = None
    finished_at: str | None = None

    @property
    def running(self) -> bool:
        return self.state == "running"


def _tool_status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    for status in status_of(pod).get("containerStatuses") or ():
        if status.get("name") == br.CONTAINER:
            return status  # type: ignore[no-any-return]
    return {}


def job_outcome(job: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> Outcome:
    """The outcome of ``job`` from its pods (those it controls) and its own conditions."""
    ours = sorted(
        (p for p in pods if is_controlled_by(p, job)),
        key=lambda p: meta_of(p).creation_timestamp,
        reverse=True,
    )
    ended: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for pod in ours:
        term = mapping_at(_tool_status(pod), "state").get("terminated")
        if term:
            ended.append((pod, term))
    for pod, term in sorted(ended, key=lambda pt: pt[1].get("exitCode") != 0):
        code = int(term.get("exitCode") or 0)
        message = str(term.get("message") or "").strip()
        if code == 0:
            return Outcome("succeeded", message, term.get("startedAt"), term.get("finishedAt"))
        said = f": {message}" if message else f" ({term.get('reason') or 'Error'})"
        return Outcome(
            "failed",
            f"mo_br exited with code {code} in pod {name_of(pod)}{said}",
            term.get("startedAt"),
            term.get("finishedAt"),
        )
    conditions = view(job).conditions
    failed = get_condition(conditions, "Failed")
    if failed is not None and failed.get("status") == "True":
        why = f"{failed.get('reason') or 'Failed'}: {failed.get('message') or ''}".rstrip(": ")
        return Outcome("failed", f"Job {name_of(job)} failed: {why}")
    complete = get_condition(conditions, "Complete")
    if complete is not None and complete.get("status") == "True":
        return Outcome(
            "failed", f"Job {name_of(job)} completed but its pod, which held the tool's result, is gone"
        )
    waiting = next((p for p in ours if status_of(p).get("phase") in (None, "Pending")), None)
    if waiting is not None:
        return Outcome("running", f"pod {name_of(waiting)}: {podutil.problem(waiting)}")
    return Outcome("running", "")


JobKind = BackupJob | RestoreJob
JobStatus = BackupJobStatus | RestoreJobStatus
J = TypeVar("J", BackupJob, RestoreJob)


def ttl_seconds(job: JobKind | None) -> float:
    """``spec.ttl`` of a job (read as admitted; the default for one that is not valid)."""
    text = job.spec.ttl if job is not None else None
    if not text:
        return DEFAULT_TTL_SECONDS
    try:
        return parse_duration(text)
    except ValueError:
        return DEFAULT_TTL_SECONDS


@dataclass(frozen=True)
class Rules:
    """What sets one job kind apart in the phases all share."""

    kind: str
    resource: Resource
    noun: str
    """What the Job does, for messages: ``backup``, ``restore``."""
    failed_reason: str


@dataclass(frozen=True)
class Refusal:
    """Why a job cannot run as written (its condition's reason and message)."""

    reason: str
    message: str


def admitted(
    model: type[J], obj: Mapping[str, Any], target_of: Callable[[J], br.S3Target | Refusal]
) -> tuple[J | None, br.S3Target | None, Refusal | None]:
    """The job as admitted, the storage its tool works on (``target_of``, the kind's),
    or why it cannot run: the refusal of its admission, else of its target."""
    try:
        job = admit(model, obj)
    except TerminalError as e:
        return None, None, Refusal(e.reason, e.message)
    target = target_of(job)
    if isinstance(target, Refusal):
        return job, None, target
    return job, target, None


@dataclass(frozen=True)
class JobView:
    """What every job kind's decision reads: the job object, its spec as admitted (None
    when admission refused it) and the storage its tool writes to (None when the job
    cannot run, ``refused`` saying why), its status draft, the clock, and its Job with
    the outcome read from the Job's pods (when the Job is ours)."""

    obj: Mapping[str, Any]
    job: JobKind | None
    target: br.S3Target | None
    refused: Refusal | None
    status: JobStatus
    now: float
    run: Mapping[str, Any] | None
    """The Job named like the job object."""
    outcome: Outcome | None
    """How the tool run went: read only when ``run`` is the job's own."""
    image: str
    poll: float
    """How soon a Pending job looks again for what it waits for."""

    @property
    def name(self) -> str:
        return name_of(self.obj)

    @property
    def namespace(self) -> str:
        return namespace_of(self.obj)

    @property
    def phase(self) -> str | None:
        return self.status.phase

    def drafted(self, phase: str) -> JobStatus:
        """The status with ``phase``, as this kind's status model."""
        return type(self.status)(phase=phase)


def read_job(
    caches: Caches, obj: Mapping[str, Any], kind: str, status: JobStatus
) -> tuple[Mapping[str, Any] | None, Outcome | None]:
    """The Job of a job object, and its outcome when the Job is the object's own (its
    pods are read only then)."""
    run = caches.get(r.JOBS, namespace_of(obj), name_of(obj))
    if run is None or not is_controlled_by(run, obj) or status.is_true(ENDED):
        return run, None
    pods = caches.list(r.PODS, namespace_of(obj), {labels.COMPONENT: kind, labels.INSTANCE: name_of(obj)})
    return run, job_outcome(run, pods)


def decide_job(
    view: JobView, rules: Rules, start: Callable[[], Decision], succeeded: Callable[[Outcome], Decision]
) -> Decision:
    """The next step of a job: clean up once it ended, fail it for a spec it cannot run,
    start its Job (``start``, the kind's), follow the Job, and end it as the tool's
    outcome says (``succeeded``, the kind's, on success). Pure: a function of ``view``."""
    ended = view.status.condition(ENDED)
    if ended is not None and ended.status == "True":
        return after_end(view, rules, ended.last_transition_time)
    if view.refused is not None:
        return fail(view, view.refused.reason, view.refused.message)
    if view.run is None:
        if view.phase == RUNNING:
            return job_missing(view, rules)
        return start()
    if not is_controlled_by(view.run, view.obj):
        return pending(view, "JobConflict", f"Job {view.name} exists and belongs to something else")
    outcome = view.outcome or Outcome("running")
    if outcome.running:
        return running(view, outcome.message or f"mo_br {rules.noun} runs in Job {view.name}")
    if outcome.state == "failed":
        return fail(view, rules.failed_reason, outcome.message)
    return succeeded(outcome)


# ------------------------------------------------------------------ phases
def pending(view: JobView, reason: str, message: str) -> Decision:
    return Decision(
        status=view.drafted(PENDING),
        conditions=(SetCondition(ENDED, False, reason, message),),
        later=Wait(view.poll, message),
    )


def running(view: JobView, message: str, intents: tuple[Intent, ...] = ()) -> Decision:
    """Running, announced once; ``intents``: what starts it."""
    events = (Emit("Normal", "Running", message),) if view.phase != RUNNING else ()
    return Decision(
        intents,
        view.drafted(RUNNING),
        (SetCondition(ENDED, False, "JobRunning", message),),
        events,
    )


def fail(view: JobView, reason: str, message: str) -> Decision:
    """Failed, announced once as a Warning; the job object goes after its ttl."""
    events = (Emit("Warning", reason, message),) if view.phase != FAILED else ()
    return Decision(
        status=view.drafted(FAILED),
        conditions=(SetCondition(ENDED, True, reason, message),),
        events=events,
        later=Requeue(ttl_seconds(view.job), "the ttl of the failed job"),
    )


def complete(view: JobView, message: str, status: JobStatus, intents: tuple[Intent, ...] = ()) -> Decision:
    """Completed (``status``: the kind's record of it), announced once; its Job goes next."""
    events = (Emit("Normal", "Completed", message),) if view.phase != COMPLETED else ()
    return Decision(
        intents,
        status,
        (SetCondition(ENDED, True, "JobComplete", message),),
        events,
        Requeue(CLEANUP_REQUEUE_SECONDS, "the Job of the completed job to delete"),
    )


def job_missing(view: JobView, rules: Rules) -> Decision:
    """Running, but the Job is not in the cache: just created (the cache lags), or
    deleted by someone before it ended."""
    running_since = view.status.condition(ENDED)
    since = podutil.parse_time(running_since.last_transition_time if running_since is not None else None)
    waited = view.now - since if since is not None else JOB_MISSING_GRACE_SECONDS
    if waited < JOB_MISSING_GRACE_SECONDS:
        return Decision(
            later=Wait(JOB_MISSING_GRACE_SECONDS - waited, f"Job {view.name} to show in the cache")
        )
    return fail(view, "JobMissing", f"Job {view.name} was deleted before the {rules.noun} ended")


# ---------------------------------------------------------------- clean-up
def after_end(view: JobView, rules: Rules, ended_at: str | None) -> Decision:
    """A completed job's Job goes at once; the job object goes ``ttl`` after it ended."""
    intents: list[Intent] = []
    run = view.run
    if (
        view.phase == COMPLETED
        and run is not None
        and is_controlled_by(run, view.obj)
        and not is_deleting(run)
    ):
        intents.append(Delete(r.JOBS, view.namespace, view.name, uid=uid_of(run)))
    ttl = ttl_seconds(view.job)
    since = podutil.parse_time(ended_at)
    left = ttl if since is None else since + ttl - view.now
    if left > 0:
        return Decision(tuple(intents), later=Requeue(left, "the job's ttl"))
    intents.append(Delete(rules.resource, view.namespace, view.name, uid=uid_of(view.obj)))
    return Decision(tuple(intents), log=(f"ended more than {int(ttl)}s ago (ttl): deleting",))


def decide_finalize(obj: Mapping[str, Any], run: Mapping[str, Any] | None) -> Decision:
    """A deleted job object stops its Job (a running tool with it) before it goes."""
    if run is None or not is_controlled_by(run, obj) or is_deleting(run):
        return Decision(finalized=True)
    return Decision((Delete(r.JOBS, namespace_of(obj), name_of(obj), uid=uid_of(run)),), finalized=True)


class JobActor:
    """Reads and acts for a job kind; the kind's ``read`` gathers its view and its
    ``decide`` says what to do with it."""

    def __init__(self, env: Env) -> None:
        self.env = env

    rules: Rules
    status_model: type[JobStatus]

    def job_view(
        self, ctx: Context, job: JobKind | None, target: br.S3Target | None, refused: Refusal | None
    ) -> JobView:
        """The reads every job kind makes, with what its admission said."""
        status = parse_status(self.status_model, ctx.status)
        run, outcome = read_job(self.env.caches, ctx.obj, self.rules.kind, status)
        return JobView(
            obj=ctx.obj,
            job=job,
            target=target,
            refused=refused,
            status=status,
            now=self.env.clock(),
            run=run,
            outcome=outcome,
            image=self.env.settings.backup_image,
            poll=self.env.settings.busy_poll_seconds,
        )

    async def finalize(self, ctx: Context) -> bool:
        run = self.env.caches.get(r.JOBS, ctx.namespace, ctx.name)
        return await decide_finalize(ctx.obj, run).finalize(ctx, self.env.client)
