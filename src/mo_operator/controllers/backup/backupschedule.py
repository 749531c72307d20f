"""The BackupSchedule controller: BackupJobs on a cron schedule, and the deletion of the
Backups its retention no longer keeps.

A reconcile reads the schedule's BackupJobs, Backups, deletion Jobs and the restores in
progress from the cache, hands them to the pure decisions (``schedule_decisions``) with
the clock, and plans what they say: the run's BackupJob ``<schedule>-<minutes>`` (owned
by the schedule, labelled ``matrixorigin.io/backup-schedule`` so that its Backup is
too), the active BackupJobs a Replace run deletes, the ended ones beyond the history
limits. It requeues itself at the next scheduled time and is woken by its BackupJobs,
its Backups, its deletion Jobs' pods and the restores that hold a Backup back: nothing
polls. When no run is due and nothing expired, it writes nothing.

**Deleting a Backup.** Its data goes first, through the backup tool: the Job
``<backupjob>-rm`` (owned by the schedule, with the template's ``overlay`` over its pod:
the same tool, placed like the backups) runs ``mo_br delete <id>`` with the Backup's
metadata and its storage's keys, as a restore would. Once that Job succeeded the Backup
object is deleted (conditional on its uid), then the Job. A deletion that fails is
reported (``RetentionApplied=False``, reason ``DeletionFailed``) and its Job kept with
its pod's output; deleting that Job tries again. A Backup that a RestoreJob which has
not ended names, or that a MatrixOneCluster still restoring names in
``spec.restoreFrom``, is held until that restore ended.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from mo_operator.api.backup import Backup, BackupJobStatus, RestoreJob, RestoreJobStatus
from mo_operator.api.backupschedule import BackupSchedule, BackupScheduleSpec, BackupScheduleStatus
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneCluster
from mo_operator.api.cron import Schedule
from mo_operator.api.fields import parse_duration
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.controller.outcome import Requeue, TerminalError
from mo_operator.kube.meta.objects import labels_of, mapping_at, meta_of, namespace_of, view
from mo_operator.kube.meta.times import format_time, parse_time
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels

from ..cluster.restore import RESTORE_COMPLETE_VALUE
from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.decision import Decision, Emit, SetCondition
from ..framework.env import Caches, Env
from ..framework.meta import child_metadata, is_controlled_by, is_deleting, name_of, uid_of
from ..framework.typed import parse_status
from ..framework.writes import Create, Delete, Intent, Writes
from .jobs import COMPLETED, ENDED, FAILED, Outcome, build_job, job_outcome
from .schedule_decisions import (
    BackupRef,
    Retention,
    RunDecision,
    RunRef,
    ScheduleSpec,
    decide_history,
    decide_retention,
    decide_run,
    deletion_job_name,
    run_name,
)

Obj = dict[str, Any]

KIND: Final = "BackupSchedule"
SCHEDULED: Final = "Scheduled"
LAST_RUN: Final = "LastRunSucceeded"
RETENTION: Final = "RetentionApplied"


def schedule_spec(spec: BackupScheduleSpec) -> ScheduleSpec:
    """The decisions' view of an admitted (defaulted) spec."""
    deadline = spec.starting_deadline_seconds
    successful, failed = spec.successful_jobs_history_limit, spec.failed_jobs_history_limit
    return ScheduleSpec(
        schedule=Schedule(spec.schedule, spec.time_zone),
        suspend=bool(spec.suspend),
        concurrency=spec.concurrency_policy or "Forbid",
        starting_deadline=None if deadline is None else float(deadline),
        successful_history=3 if successful is None else successful,
        failed_history=1 if failed is None else failed,
    )


def retention_of(spec: BackupScheduleSpec) -> Retention:
    retention = spec.retention
    if retention is None:
        return Retention(count=None, max_age=None)
    age = retention.max_age
    return Retention(count=retention.count, max_age=None if age is None else parse_duration(age))


def _time(text: Any) -> float | None:
    return parse_time(text) if text else None


def _backup_time(backup: Mapping[str, Any]) -> float:
    """When a Backup started (``meta.atTime``); 0 for one that is not valid."""
    record = typed.read(Backup, backup)
    return (_time(record.meta.at_time) if record is not None else None) or 0.0


def _run(job: Mapping[str, Any]) -> RunRef:
    body = view(job)
    scheduled = _time(body.meta.annotations.get(labels.SCHEDULED_AT)) or parse_time(
        body.meta.creation_timestamp
    )
    status = typed.status_of(BackupJobStatus, job)
    ended = status.condition(ENDED)
    return RunRef(
        name=body.meta.name,
        scheduled=scheduled or 0.0,
        phase=status.phase or "Pending",
        ended_at=_time(ended.last_transition_time) if ended is not None and ended.status == "True" else None,
        deleting=is_deleting(job),
    )


def backups_in_use(
    restore_jobs: Iterable[Mapping[str, Any]], clusters: Iterable[Mapping[str, Any]]
) -> set[str]:
    """Backups that a restore which has not ended reads: a RestoreJob's ``backupName``,
    a MatrixOneCluster's ``restoreFrom`` until it recorded its restore as complete."""
    used = set()
    for job in restore_jobs:
        name = restored_backup(job)
        if name and not typed.status_of(RestoreJobStatus, job).is_true(ENDED):
            used.add(name)
    for cluster in clusters:
        name = restored_backup(cluster)
        if name and meta_of(cluster).annotations.get(labels.RESTORE_COMPLETE) != RESTORE_COMPLETE_VALUE:
            used.add(name)
    return used


def restored_backup(obj: Mapping[str, Any]) -> str | None:
    """The Backup a RestoreJob (``backupName``) or a MatrixOneCluster (``restoreFrom``) restores.

    An object admission refuses still names its Backup as written: it may be fixed and
    restore then, so its Backup is held rather than deleted under it."""
    if obj.get("kind") == "RestoreJob":
        job = typed.read(RestoreJob, obj)
        name = job.spec.backup_name if job is not None else mapping_at(obj, "spec").get("backupName")
    else:
        cluster = typed.read(MatrixOneCluster, obj)
        name = (
            cluster.spec.restore_from if cluster is not None else mapping_at(obj, "spec").get("restoreFrom")
        )
    return str(name) if name else None


@dataclass(frozen=True)
class ScheduleView:
    """What a BackupSchedule's decision reads: the schedule and its admitted spec, the
    clock, what its status draft says of its last runs, its BackupJobs (and the names
    other jobs of the namespace took), its Backups, the Jobs deleting expired ones with
    their outcomes, and the Backups a restore still reads."""

    schedule: Mapping[str, Any]
    spec: BackupScheduleSpec
    now: float
    last_schedule: float | None
    last_successful: float | None
    jobs: tuple[Mapping[str, Any], ...]
    taken: frozenset[str]
    backups: tuple[Mapping[str, Any], ...]
    deletions: Mapping[str, Mapping[str, Any]]
    """Deletion Jobs by name."""
    deletion_outcomes: Mapping[str, Outcome]
    in_use: frozenset[str]
    backup_image: str


def decide(view: ScheduleView) -> Decision:
    """Start the run that is due (replacing or skipping one still running, as the
    concurrency policy says), prune the history, report the runs, and apply retention.
    Pure: a function of ``view``."""
    spec, namespace, name = view.spec, namespace_of(view.schedule), name_of(view.schedule)
    runs = [_run(j) for j in view.jobs]
    sched = schedule_spec(spec)
    created = parse_time(meta_of(view.schedule).creation_timestamp) or view.now
    decision = decide_run(
        sched,
        name=name,
        created=created,
        last_schedule=view.last_schedule,
        last_successful=view.last_successful,
        runs=runs,
        taken=set(view.taken),
        now=view.now,
    )
    uids = {meta_of(j).name: uid_of(j) for j in view.jobs}
    intents: list[Intent] = [Delete(r.BACKUPJOBS, namespace, run, uid=uids[run]) for run in decision.replace]
    events: list[Emit] = []
    if decision.start is not None:
        job, started = _start(view, decision)
        intents.append(job)
        events.append(started)
    intents.extend(Delete(r.BACKUPJOBS, namespace, run, uid=uids[run]) for run in decide_history(sched, runs))
    status, conditions = _record(sched, decision, runs, view.jobs)
    retained = _retain(view)
    later = None
    if decision.next_run is not None:
        later = Requeue(max(0.0, decision.next_run - view.now), "the next scheduled run")
    return Decision(
        tuple(intents + list(retained.intents)),
        status,
        conditions + retained.conditions,
        tuple(events + list(retained.events)),
        later,
    )


def _start(view: ScheduleView, decision: RunDecision) -> tuple[Create, Emit]:
    assert decision.start is not None
    schedule = view.schedule
    name = run_name(name_of(schedule), decision.start)
    at = format_time(decision.start)
    meta = child_metadata(schedule, name, {labels.BACKUP_SCHEDULE: name_of(schedule)})
    meta["annotations"] = {labels.SCHEDULED_AT: at}
    job = {"apiVersion": API_VERSION, "kind": "BackupJob", "metadata": meta, "spec": dump(view.spec.template)}
    missed = f" ({decision.missed} earlier run(s) missed, not caught up)" if decision.missed else ""
    replaced = f", replacing {', '.join(decision.replace)}" if decision.replace else ""
    started = Emit("Normal", "RunStarted", f"created BackupJob {name} for the run at {at}{replaced}{missed}")
    return Create(r.BACKUPJOBS, job), started


def _record(
    sched: ScheduleSpec, decision: RunDecision, runs: Sequence[RunRef], jobs: Sequence[Mapping[str, Any]]
) -> tuple[BackupScheduleStatus, tuple[SetCondition, ...]]:
    """The status of the runs: times (None removes a field), active jobs, ``Scheduled``
    and ``LastRunSucceeded``."""
    status = BackupScheduleStatus(
        last_schedule_time=_format(decision.last_schedule),
        last_successful_time=_format(decision.last_successful),
        next_schedule_time=_format(decision.next_run),
        active=list(decision.active) or None,
    )
    if sched.suspend:
        scheduled = SetCondition(SCHEDULED, False, "Suspended", "spec.suspend is true: no new run starts")
    elif decision.skipped is not None:
        scheduled = SetCondition(
            SCHEDULED, False, "RunSkipped", f"the run due is not started: {decision.skipped}"
        )
    else:
        scheduled = SetCondition(SCHEDULED, True, SCHEDULED, f"next run at {status.next_schedule_time}")
    ended = sorted((run for run in runs if run.ended), key=lambda run: (run.scheduled, run.name))
    if not ended:
        return status, (scheduled,)
    last = ended[-1]
    if last.phase == COMPLETED:
        return status, (
            scheduled,
            SetCondition(LAST_RUN, True, "BackupCompleted", f"BackupJob {last.name} completed"),
        )
    if last.phase == FAILED:
        job = next(j for j in jobs if meta_of(j).name == last.name)
        ended_condition = typed.status_of(BackupJobStatus, job).condition(ENDED)
        why = (ended_condition.message if ended_condition is not None else "") or "no reason given"
        failed = SetCondition(LAST_RUN, False, "BackupFailed", f"BackupJob {last.name} failed: {why}")
        return status, (scheduled, failed)
    return status, (scheduled,)


def _format(at: float | None) -> str | None:
    return None if at is None else format_time(at)


def deletion_job(backup: Mapping[str, Any]) -> str:
    """The Job that deletes an expired Backup's data."""
    job = labels_of(backup).get(labels.INSTANCE) or meta_of(backup).name
    return deletion_job_name(job)


def _retain(view: ScheduleView) -> Decision:
    """Retention: the Jobs that delete the data of expired Backups, then the Backups,
    and ``RetentionApplied``."""
    schedule, spec = view.schedule, view.spec
    namespace = namespace_of(schedule)
    backups = {meta_of(b).name: b for b in view.backups}
    refs = [BackupRef(name, _backup_time(b)) for name, b in backups.items()]
    verdict = decide_retention(retention_of(spec), refs, set(view.in_use), view.now)
    wanted = {deletion_job(backups[name]) for name in verdict.expired}
    intents: list[Intent] = [
        # its Backup is gone (deleted, or no longer expired): the Job's work is done
        Delete(r.JOBS, namespace, job_name, uid=uid_of(job))
        for job_name, job in view.deletions.items()
        if job_name not in wanted and not is_deleting(job)
    ]
    events: list[Emit] = []
    failures = []
    for name in verdict.expired:
        failure = _delete(view, backups[name], intents, events)
        if failure:
            failures.append(failure)
    conditions: tuple[SetCondition, ...] = ()
    if failures:
        conditions = (SetCondition(RETENTION, False, "DeletionFailed", "; ".join(failures)),)
    elif verdict.held:
        held = ", ".join(verdict.held)
        conditions = (
            SetCondition(RETENTION, False, "BackupInUse", f"kept while a restore reads it: {held}"),
        )
    elif spec.retention is not None:
        conditions = (SetCondition(RETENTION, True, "Applied", f"{verdict.kept} Backup(s) kept"),)
    return Decision(tuple(intents), conditions=conditions, events=tuple(events))


def _delete(
    view: ScheduleView, backup: Mapping[str, Any], intents: list[Intent], events: list[Emit]
) -> str | None:
    """The next step of deleting ``backup``; a failure's message, if it failed."""
    name = meta_of(backup).name
    job_name = deletion_job(backup)
    if job_name not in view.deletions:
        record = typed.read(Backup, backup)
        if record is None:
            return f"Backup {name}: {typed.why_invalid(Backup, backup)}"
        meta = record.meta
        try:
            source = br.S3Target.of(dump(meta.location))
        except ValueError as e:
            return f"Backup {name}: meta.location: {e}"
        job = build_job(
            view.schedule,
            KIND,
            image=view.backup_image,
            script=br.delete_script(meta.id),
            env=br.delete_env(meta.raw, source),
            overlay=view.spec.template.overlay,
            name=job_name,
        )
        intents.append(Create(r.JOBS, job))
        events.append(
            Emit("Normal", "DeletingBackup", f"Backup {name} expired: deleting its data in Job {job_name}")
        )
        return None
    outcome = view.deletion_outcomes[job_name]
    if outcome.state == "failed":
        return f"Backup {name}: {outcome.message}"
    if outcome.state == "succeeded":
        intents.append(Delete(r.BACKUPS, "", name, uid=uid_of(backup)))
        events.append(
            Emit("Normal", "BackupDeleted", f"Backup {name} expired: its data and the object are deleted")
        )
    return None


class BackupScheduleActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def read(self, ctx: Context, spec: BackupScheduleSpec) -> ScheduleView:
        """Every read ``decide`` needs, once."""
        caches, namespace = self.env.caches, ctx.namespace
        jobs = tuple(j for j in caches.list(r.BACKUPJOBS, namespace) if is_controlled_by(j, ctx.obj))
        mine = {meta_of(j).name for j in jobs}
        taken = frozenset(meta_of(j).name for j in caches.list(r.BACKUPJOBS, namespace)) - mine
        selector = {labels.BACKUP_SCHEDULE: ctx.name, labels.NAMESPACE: namespace}
        backups = tuple(b for b in caches.list(r.BACKUPS, "", selector) if not is_deleting(b))
        own = {labels.COMPONENT: KIND, labels.INSTANCE: ctx.name}
        deletions = {
            meta_of(j).name: j for j in caches.list(r.JOBS, namespace, own) if is_controlled_by(j, ctx.obj)
        }
        pods = caches.list(r.PODS, namespace, own) if deletions else []
        drafted = parse_status(BackupScheduleStatus, ctx.status)
        return ScheduleView(
            schedule=ctx.obj,
            spec=spec,
            now=self.env.clock(),
            last_schedule=_time(drafted.last_schedule_time),
            last_successful=_time(drafted.last_successful_time),
            jobs=jobs,
            taken=taken,
            backups=backups,
            deletions=deletions,
            deletion_outcomes={name: job_outcome(job, pods) for name, job in deletions.items()},
            in_use=frozenset(backups_in_use(caches.list(r.RESTOREJOBS), caches.list(r.MATRIXONE_CLUSTERS))),
            backup_image=self.env.settings.backup_image,
        )

    async def observe(self, ctx: Context) -> Writes | None:
        try:
            spec = admit(BackupSchedule, ctx.obj).spec
        except TerminalError as e:
            ctx.set_condition(SCHEDULED, False, e.reason, e.message)
            return None
        return decide(await self.read(ctx, spec)).act(ctx, self.env.client)

    async def finalize(self, ctx: Context) -> bool:
        return True


def _schedule_of(backup: Mapping[str, Any] | None) -> list[Request]:
    if backup is None:
        return []
    found = labels_of(backup)
    schedule, namespace = found.get(labels.BACKUP_SCHEDULE), found.get(labels.NAMESPACE)
    return [Request(namespace, schedule)] if schedule and namespace else []


def schedules_of_backup(backup: Mapping[str, Any]) -> Iterable[Request]:
    """The schedule whose retention keeps ``backup``."""
    return _schedule_of(backup)


def schedules_of_restore(caches: Caches) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """A restore that starts or ends holds or frees a Backup: its schedule looks again."""

    def mapper(obj: Mapping[str, Any]) -> Iterable[Request]:
        name = restored_backup(obj)
        return _schedule_of(caches.get(r.BACKUPS, "", name)) if name else []

    return mapper
