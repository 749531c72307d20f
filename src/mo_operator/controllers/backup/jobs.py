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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mo_operator.api.backup import BackupJob, RestoreJob
from mo_operator.api.base import dump
from mo_operator.api.common import POD_OVERLAY_FIELDS, JobOverlay
from mo_operator.api.fields import parse_duration
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.kube.meta.objects import mapping_at, meta_of, status_of, view
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels

from ..framework import resources as r
from ..framework import typed
from ..framework.env import Env
from ..framework.meta import child_metadata, cluster_of, is_controlled_by, is_deleting, name_of, uid_of
from ..framework.writes import Writes
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


def ttl_seconds(job: JobKind | None) -> float:
    """``spec.ttl`` of a job (read as admitted; the default for one that is not valid)."""
    text = job.spec.ttl if job is not None else None
    if not text:
        return DEFAULT_TTL_SECONDS
    try:
        return parse_duration(text)
    except ValueError:
        return DEFAULT_TTL_SECONDS


Admitted = tuple[JobKind, br.S3Target]
"""A job object as admitted (defaulted), and the S3 location its tool writes to."""


class JobActor:
    """The phases, conditions, events and clean-up of a job object that runs one Job.

    A kind says how its spec is admitted, how its Job starts and what success means;
    everything else (following the Job, failing, expiring) is here."""

    kind: str = ""
    model: type[JobKind]
    resource: Resource
    noun: str = ""
    """What the Job does, for messages: ``backup``, ``restore``."""
    failed_reason: str = ""

    def __init__(self, env: Env) -> None:
        self.env = env

    def admit(self, ctx: Context) -> Admitted | None:
        """The admitted object, or None once the job was failed for a bad spec."""
        raise NotImplementedError

    def start(self, ctx: Context, job_spec: Admitted, plan: Writes) -> None:
        """Plan the Job (Running), or say what the job waits for (Pending) or why it cannot run."""
        raise NotImplementedError

    def succeeded(self, ctx: Context, job_spec: Admitted, outcome: Outcome, plan: Writes) -> None:
        raise NotImplementedError

    async def observe(self, ctx: Context) -> Writes | None:
        plan = Writes(self.env.client)
        ended = self.ended(ctx)
        if ended is not None:
            self.after_end(ctx, ended, plan)
            return plan or None
        job_spec = self.admit(ctx)
        if job_spec is None:
            return None
        job = self.job(ctx)
        if job is None:
            if ctx.status.get("phase") == RUNNING:
                self.job_missing(ctx)
            else:
                self.start(ctx, job_spec, plan)
            return plan or None
        if not is_controlled_by(job, ctx.obj):
            self.pending(ctx, "JobConflict", f"Job {ctx.name} exists and belongs to something else")
            return None
        outcome = job_outcome(job, self.pods(ctx))
        if outcome.running:
            self.running(ctx, outcome.message or f"mo_br {self.noun} runs in Job {ctx.name}")
        elif outcome.state == "failed":
            self.fail(ctx, self.failed_reason, outcome.message)
        else:
            self.succeeded(ctx, job_spec, outcome, plan)
        return plan or None

    # ------------------------------------------------------------- reading
    @staticmethod
    def ended(ctx: Context) -> Mapping[str, Any] | None:
        found = get_condition(ctx.status.get("conditions") or (), ENDED)
        return found if found is not None and found.get("status") == "True" else None

    def job(self, ctx: Context) -> Mapping[str, Any] | None:
        return self.env.caches.get(r.JOBS, ctx.namespace, ctx.name)

    def pods(self, ctx: Context) -> list[Mapping[str, Any]]:
        selector = {labels.COMPONENT: self.kind, labels.INSTANCE: ctx.name}
        return self.env.caches.list(r.PODS, ctx.namespace, selector)

    # -------------------------------------------------------------- phases
    def pending(self, ctx: Context, reason: str, message: str) -> None:
        ctx.status["phase"] = PENDING
        ctx.set_condition(ENDED, False, reason, message)
        ctx.wait(self.env.settings.busy_poll_seconds, message)

    def running(self, ctx: Context, message: str) -> None:
        if ctx.status.get("phase") != RUNNING:
            ctx.event("Normal", "Running", message)
        ctx.status["phase"] = RUNNING
        ctx.set_condition(ENDED, False, "JobRunning", message)

    def fail(self, ctx: Context, reason: str, message: str) -> None:
        if ctx.status.get("phase") != FAILED:
            ctx.event("Warning", reason, message)
        ctx.status["phase"] = FAILED
        ctx.set_condition(ENDED, True, reason, message)
        ctx.requeue(ttl_seconds(typed.read(self.model, ctx.obj)), "the ttl of the failed job")

    def complete(self, ctx: Context, message: str) -> None:
        if ctx.status.get("phase") != COMPLETED:
            ctx.event("Normal", "Completed", message)
        ctx.status["phase"] = COMPLETED
        ctx.set_condition(ENDED, True, "JobComplete", message)
        ctx.requeue(CLEANUP_REQUEUE_SECONDS, "the Job of the completed job to delete")

    def job_missing(self, ctx: Context) -> None:
        """Running, but the Job is not in the cache: just created (the cache lags), or
        deleted by someone before it ended."""
        running = get_condition(ctx.status.get("conditions") or (), ENDED) or {}
        since = podutil.parse_time(running.get("lastTransitionTime"))
        waited = self.env.clock() - since if since is not None else JOB_MISSING_GRACE_SECONDS
        if waited < JOB_MISSING_GRACE_SECONDS:
            ctx.wait(JOB_MISSING_GRACE_SECONDS - waited, f"Job {ctx.name} to show in the cache")
            return
        self.fail(ctx, "JobMissing", f"Job {ctx.name} was deleted before the {self.noun} ended")

    # ------------------------------------------------------------ clean-up
    def after_end(self, ctx: Context, ended: Mapping[str, Any], plan: Writes) -> None:
        """A completed job's Job goes at once; the job object goes ``ttl`` after it ended."""
        job = self.job(ctx)
        if (
            ctx.status.get("phase") == COMPLETED
            and job is not None
            and is_controlled_by(job, ctx.obj)
            and not is_deleting(job)
        ):
            plan.delete(r.JOBS, ctx.namespace, ctx.name, uid=uid_of(job))
        ttl = ttl_seconds(typed.read(self.model, ctx.obj))
        since = podutil.parse_time(ended.get("lastTransitionTime"))
        left = ttl if since is None else since + ttl - self.env.clock()
        if left > 0:
            ctx.requeue(left, "the job's ttl")
            return
        plan.delete(self.resource, ctx.namespace, ctx.name, uid=uid_of(ctx.obj))
        ctx.log.info("ended more than %ss ago (ttl): deleting", int(ttl))

    async def finalize(self, ctx: Context) -> bool:
        """A deleted job object stops its Job (a running tool with it) before it goes."""
        job = self.job(ctx)
        if job is None or not is_controlled_by(job, ctx.obj) or is_deleting(job):
            return True
        plan = Writes(self.env.client)
        plan.delete(r.JOBS, ctx.namespace, ctx.name, uid=uid_of(job))
        await plan(ctx)
        return True
