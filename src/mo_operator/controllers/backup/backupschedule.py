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
from typing import Any, Final

from mo_operator.api.backup import Backup, BackupJobStatus, RestoreJob, RestoreJobStatus
from mo_operator.api.backupschedule import BackupSchedule, BackupScheduleSpec
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneCluster
from mo_operator.api.cron import Schedule
from mo_operator.api.fields import parse_duration
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import labels_of, mapping_at, meta_of, view
from mo_operator.kube.meta.times import format_time, parse_time
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels

from ..cluster.restore import RESTORE_COMPLETE_VALUE
from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.env import Caches, Env
from ..framework.meta import child_metadata, is_controlled_by, is_deleting, uid_of
from ..framework.writes import Writes
from .jobs import COMPLETED, ENDED, FAILED, build_job, job_outcome
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


class BackupScheduleActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    # ------------------------------------------------------------- reading
    def runs(self, ctx: Context) -> list[Mapping[str, Any]]:
        return [j for j in self.env.caches.list(r.BACKUPJOBS, ctx.namespace) if is_controlled_by(j, ctx.obj)]

    def backups(self, ctx: Context) -> list[Mapping[str, Any]]:
        selector = {labels.BACKUP_SCHEDULE: ctx.name, labels.NAMESPACE: ctx.namespace}
        return [b for b in self.env.caches.list(r.BACKUPS, "", selector) if not is_deleting(b)]

    def deletion_jobs(self, ctx: Context) -> dict[str, Mapping[str, Any]]:
        selector = {labels.COMPONENT: KIND, labels.INSTANCE: ctx.name}
        jobs = self.env.caches.list(r.JOBS, ctx.namespace, selector)
        return {meta_of(j).name: j for j in jobs if is_controlled_by(j, ctx.obj)}

    # ------------------------------------------------------------- deciding
    async def observe(self, ctx: Context) -> Writes | None:
        try:
            spec = admit(BackupSchedule, ctx.obj).spec
        except TerminalError as e:
            ctx.set_condition(SCHEDULED, False, e.reason, e.message)
            return None
        plan = Writes(self.env.client)
        now = self.env.clock()
        jobs = self.runs(ctx)
        runs = [_run(j) for j in jobs]
        mine = {run.name for run in runs}
        taken = {meta_of(j).name for j in self.env.caches.list(r.BACKUPJOBS, ctx.namespace)} - mine
        sched = schedule_spec(spec)
        decision = decide_run(
            sched,
            name=ctx.name,
            created=parse_time(meta_of(ctx.obj).creation_timestamp) or now,
            last_schedule=_time(ctx.status.get("lastScheduleTime")),
            last_successful=_time(ctx.status.get("lastSuccessfulTime")),
            runs=runs,
            taken=taken,
            now=now,
        )
        uids = {meta_of(j).name: uid_of(j) for j in jobs}
        for name in decision.replace:
            plan.delete(r.BACKUPJOBS, ctx.namespace, name, uid=uids[name])
        if decision.start is not None:
            self.start(ctx, spec, decision, plan)
        for name in decide_history(sched, runs):
            plan.delete(r.BACKUPJOBS, ctx.namespace, name, uid=uids[name])
        self.record(ctx, sched, decision, runs, jobs)
        self.retain(ctx, spec, now, plan)
        if decision.next_run is not None:
            ctx.requeue(max(0.0, decision.next_run - now), "the next scheduled run")
        return plan or None

    def start(self, ctx: Context, spec: BackupScheduleSpec, decision: RunDecision, plan: Writes) -> None:
        assert decision.start is not None
        name = run_name(ctx.name, decision.start)
        at = format_time(decision.start)
        meta = child_metadata(ctx.obj, name, {labels.BACKUP_SCHEDULE: ctx.name})
        meta["annotations"] = {labels.SCHEDULED_AT: at}
        plan.create(
            {
                "apiVersion": API_VERSION,
                "kind": "BackupJob",
                "metadata": meta,
                "spec": dump(spec.template),
            },
            r.BACKUPJOBS,
        )
        missed = f" ({decision.missed} earlier run(s) missed, not caught up)" if decision.missed else ""
        replaced = f", replacing {', '.join(decision.replace)}" if decision.replace else ""
        ctx.event("Normal", "RunStarted", f"created BackupJob {name} for the run at {at}{replaced}{missed}")

    # ------------------------------------------------------------- status
    def record(
        self,
        ctx: Context,
        sched: ScheduleSpec,
        decision: RunDecision,
        runs: Sequence[RunRef],
        jobs: Sequence[Mapping[str, Any]],
    ) -> None:
        status = ctx.status
        for key, value in (
            ("lastScheduleTime", decision.last_schedule),
            ("lastSuccessfulTime", decision.last_successful),
            ("nextScheduleTime", decision.next_run),
        ):
            if value is None:
                status.pop(key, None)
            else:
                status[key] = format_time(value)
        if decision.active:
            status["active"] = list(decision.active)
        else:
            status.pop("active", None)
        if sched.suspend:
            ctx.set_condition(SCHEDULED, False, "Suspended", "spec.suspend is true: no new run starts")
        elif decision.skipped is not None:
            ctx.set_condition(
                SCHEDULED, False, "RunSkipped", f"the run due is not started: {decision.skipped}"
            )
        else:
            ctx.set_condition(SCHEDULED, True, SCHEDULED, f"next run at {status['nextScheduleTime']}")
        ended = sorted((run for run in runs if run.ended), key=lambda run: (run.scheduled, run.name))
        if not ended:
            return
        last = ended[-1]
        if last.phase == COMPLETED:
            ctx.set_condition(LAST_RUN, True, "BackupCompleted", f"BackupJob {last.name} completed")
        elif last.phase == FAILED:
            job = next(j for j in jobs if meta_of(j).name == last.name)
            why = (view(job).condition(ENDED) or {}).get("message") or "no reason given"
            ctx.set_condition(LAST_RUN, False, "BackupFailed", f"BackupJob {last.name} failed: {why}")

    # ------------------------------------------------------------- retention
    def retain(self, ctx: Context, spec: BackupScheduleSpec, now: float, plan: Writes) -> None:
        backups = {meta_of(b).name: b for b in self.backups(ctx)}
        refs = [BackupRef(name, _backup_time(b)) for name, b in backups.items()]
        in_use = backups_in_use(
            self.env.caches.list(r.RESTOREJOBS), self.env.caches.list(r.MATRIXONE_CLUSTERS)
        )
        verdict = decide_retention(retention_of(spec), refs, in_use, now)
        deletions = self.deletion_jobs(ctx)
        wanted = {self._deletion_job(backups[name]) for name in verdict.expired}
        for job_name, job in deletions.items():
            if job_name not in wanted and not is_deleting(job):
                # its Backup is gone (deleted, or no longer expired): the Job's work is done
                plan.delete(r.JOBS, ctx.namespace, job_name, uid=uid_of(job))
        failures = []
        for name in verdict.expired:
            failure = self._delete(ctx, spec, backups[name], deletions, plan)
            if failure:
                failures.append(failure)
        if failures:
            ctx.set_condition(RETENTION, False, "DeletionFailed", "; ".join(failures))
        elif verdict.held:
            held = ", ".join(verdict.held)
            ctx.set_condition(RETENTION, False, "BackupInUse", f"kept while a restore reads it: {held}")
        elif spec.retention is not None:
            ctx.set_condition(RETENTION, True, "Applied", f"{verdict.kept} Backup(s) kept")

    @staticmethod
    def _deletion_job(backup: Mapping[str, Any]) -> str:
        job = labels_of(backup).get(labels.INSTANCE) or meta_of(backup).name
        return deletion_job_name(job)

    def _delete(
        self,
        ctx: Context,
        spec: BackupScheduleSpec,
        backup: Mapping[str, Any],
        jobs: Mapping[str, Mapping[str, Any]],
        plan: Writes,
    ) -> str | None:
        """Plan the next step of deleting ``backup``; a failure's message, if it failed."""
        name = meta_of(backup).name
        job_name = self._deletion_job(backup)
        job = jobs.get(job_name)
        if job is None:
            record = typed.read(Backup, backup)
            if record is None:
                return f"Backup {name}: {typed.why_invalid(Backup, backup)}"
            meta = record.meta
            try:
                source = br.S3Target.of(dump(meta.location))
            except ValueError as e:
                return f"Backup {name}: meta.location: {e}"
            plan.create(
                build_job(
                    ctx.obj,
                    KIND,
                    image=self.env.settings.backup_image,
                    script=br.delete_script(meta.id),
                    env=br.delete_env(meta.raw, source),
                    overlay=spec.template.overlay,
                    name=job_name,
                ),
                r.JOBS,
            )
            ctx.event(
                "Normal", "DeletingBackup", f"Backup {name} expired: deleting its data in Job {job_name}"
            )
            return None
        selector = {labels.COMPONENT: KIND, labels.INSTANCE: ctx.name}
        outcome = job_outcome(job, self.env.caches.list(r.PODS, ctx.namespace, selector))
        if outcome.state == "failed":
            return f"Backup {name}: {outcome.message}"
        if outcome.state == "succeeded":
            plan.delete(r.BACKUPS, "", name, uid=uid_of(backup))
            ctx.event(
                "Normal", "BackupDeleted", f"Backup {name} expired: its data and the object are deleted"
            )
        return None

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
