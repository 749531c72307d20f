"""The BackupJob controller: one physical backup of a cluster with ``mo_br``, recorded
as a Backup.

The source is a MatrixOneCluster (its SQL address and credential Secret from its
status) or a CNSet (its address, with ``source.secretRef`` for the credential). While
the source has no address yet the job stays Pending and says what it waits for; once
it has one, the Job ``<bj>`` runs ``mo_br backup`` against it (see ``jobs``). Whether
the cluster answers is for the tool to find out: a cluster that is down fails the job
with the tool's own words.

On success the cluster-scoped Backup ``<bj>-<id[:5]>`` is created from the tool's
metadata (create-only: its name comes from the backup's ID, so a reconcile that runs
again after a crash finds it instead of making a second; a Backup of that name recording
another backup is reported, never overwritten). It has no owner: it records data that
outlives the job, and a cluster-scoped object cannot be owned by a namespaced one. It
carries the job's labels, so ``kubectl get backups -l matrixorigin.io/instance=<bj>``
finds it; a BackupJob of a BackupSchedule passes its ``matrixorigin.io/backup-schedule``
label on, which is how the schedule's retention finds its Backups.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.api.backup import Backup, BackupJob, BackupJobSpec, BackupJobStatus, BackupSource
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterStatus
from mo_operator.api.cnset import CNSetStatus
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.errors import AlreadyExists
from mo_operator.kube.meta.objects import labels_of
from mo_operator.kube.meta.times import format_time
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels, ports

from ..framework import resources as r
from ..framework import typed
from ..framework.decision import Decision
from ..framework.writes import Call, Create, Intent, Step, Writes
from .jobs import (
    COMPLETED,
    JobActor,
    JobView,
    Outcome,
    Refusal,
    Rules,
    admitted,
    build_job,
    complete,
    decide_job,
    fail,
    job_labels,
    pending,
    running,
)

Obj = dict[str, Any]

KIND = "BackupJob"
RULES = Rules(KIND, r.BACKUPJOBS, "backup", "BackupFailed")


class BackupConflict(Exception):
    """A Backup with the name this job's backup gets records another backup."""


@dataclass(frozen=True)
class Source:
    """Where the backup is taken from: an SQL address, the credential Secret, and the
    Backup's ``sourceRef``."""

    host: str
    port: int
    secret: str
    ref: str


def source_ref(namespace: str, source: BackupSource) -> str:
    """A Backup's ``sourceRef``: ``matrixonecluster/<ns>/<name>`` or ``cnset/<ns>/<name>``."""
    if source.cn_set_ref:
        return f"cnset/{namespace}/{source.cn_set_ref}"
    return f"matrixonecluster/{namespace}/{source.cluster_ref}"


@dataclass(frozen=True)
class BackupJobView:
    """What a BackupJob's decision reads: what every job reads; when its Job is to
    start, the source (the MatrixOneCluster or CNSet it names); once the tool
    succeeded, the Backup already named after its backup, if any; and how a Backup
    is recorded (the actor's create, which tells a Backup of that name recording
    another backup)."""

    job: JobView
    record: Callable[[Mapping[str, Any]], Step]
    source: Mapping[str, Any] | None = None
    recorded: Mapping[str, Any] | None = None


def target_of(job: BackupJob) -> br.S3Target | Refusal:
    """The storage the backup is written to, or why it cannot be."""
    try:
        return br.S3Target.of(dump(job.spec.target))
    except ValueError as e:
        return Refusal("InvalidSpec", f"spec.target: {e}")


def decide(view: BackupJobView) -> Decision:
    """The BackupJob's next step (see ``jobs.decide_job``). Pure: a function of ``view``."""
    return decide_job(view.job, RULES, lambda: _start(view), lambda outcome: _succeeded(view, outcome))


# ---------------------------------------------------------------- start
def _source(view: BackupJobView, spec: BackupJobSpec) -> Source | str | Refusal:
    """The source, what it waits for, or why it cannot be one."""
    source = spec.source
    namespace = view.job.namespace
    if source.cn_set_ref:
        name = source.cn_set_ref
        if not source.secret_ref:
            return Refusal("InvalidSpec", "spec.source.secretRef: must be set when cnSetRef is the source")
        if view.source is None:
            return f"CNSet {name} not found"
        at = typed.status_of(CNSetStatus, view.source)
        if not at.host:
            return f"CNSet {name} has no SQL address yet"
        return Source(at.host, at.port or ports.CN_SQL, source.secret_ref, source_ref(namespace, source))
    name = str(source.cluster_ref)
    if view.source is None:
        return f"MatrixOneCluster {name} not found"
    status = typed.status_of(MatrixOneClusterStatus, view.source)
    if not status.host:
        return f"MatrixOneCluster {name} has no SQL address yet"
    secret = source.secret_ref or (status.credential_ref.name if status.credential_ref else None)
    if not secret:
        return f"MatrixOneCluster {name} has no credential yet"
    return Source(status.host, status.port or ports.CN_SQL, secret, source_ref(namespace, source))


def _start(backup: BackupJobView) -> Decision:
    view = backup.job
    job, target = view.job, view.target
    assert isinstance(job, BackupJob) and target is not None
    spec = job.spec
    source = _source(backup, spec)
    if isinstance(source, Refusal):
        return fail(view, source.reason, source.message)
    if isinstance(source, str):
        return pending(view, "WaitingForSource", source)
    run = build_job(
        view.obj,
        KIND,
        image=view.image,
        script=br.backup_script(source.host, source.port, target),
        env=br.backup_env(source.secret, target),
        overlay=spec.overlay,
    )
    message = f"backing up {source.ref} ({source.host}:{source.port}) to {target.url} in Job {view.name}"
    return running(view, message, (Create(r.JOBS, run),))


# ---------------------------------------------------------------- record
def _succeeded(backup: BackupJobView, outcome: Outcome) -> Decision:
    """Record the backup as a Backup (once), then the job as Completed."""
    view = backup.job
    job = view.job
    assert isinstance(job, BackupJob)
    try:
        meta = br.parse_metadata(outcome.message)
    except br.MetadataError as e:
        return fail(view, "InvalidMetadata", f"the backup ran but its metadata cannot be read: {e}")
    name = br.backup_name(view.name, meta.id)
    existing = backup.recorded
    if existing is not None and recorded_id(existing) != meta.id:
        return fail(
            view,
            "BackupNameTaken",
            f"backup {meta.id} cannot be recorded: Backup {name} already records backup "
            f"{recorded_id(existing)}",
        )
    intents: tuple[Intent, ...] = ()
    if existing is None:
        record = _backup(view, job.spec, name, meta, outcome)
        intents = (Call(backup.record(record), f"create Backup {name}"),)
    status = BackupJobStatus(phase=COMPLETED, backup=name)
    return complete(view, f"backup {meta.id} recorded as Backup {name}", status, intents)


def _backup(view: JobView, spec: BackupJobSpec, name: str, meta: br.BackupMetadata, outcome: Outcome) -> Obj:
    now = format_time(view.now)
    record: Obj = {
        "location": dump(spec.target),
        "id": meta.id,
        "atTime": meta.at_time or outcome.started_at or now,
        "completeTime": meta.complete_time or outcome.finished_at or now,
        "sourceRef": source_ref(view.namespace, spec.source),
        "raw": meta.raw,
    }
    if meta.size is not None:
        record["size"] = meta.size
    backup_labels = job_labels(view.obj, KIND)
    schedule = labels_of(view.obj).get(labels.BACKUP_SCHEDULE)
    if schedule:
        backup_labels[labels.BACKUP_SCHEDULE] = schedule
    return {
        "apiVersion": API_VERSION,
        "kind": "Backup",
        "metadata": {"name": name, "labels": backup_labels},
        "meta": record,
    }


def recorded_id(backup: Mapping[str, Any]) -> str | None:
    """The ID of the backup a Backup records (None for one admission refuses: it is not
    overwritten either)."""
    record = typed.read(Backup, backup)
    return record.meta.id if record is not None else None


def recorded_name(view: JobView) -> str | None:
    """The Backup a succeeded tool run is recorded as, when its metadata reads."""
    if view.outcome is None or view.outcome.state != "succeeded":
        return None
    try:
        return br.backup_name(view.name, br.parse_metadata(view.outcome.message).id)
    except br.MetadataError:
        return None


class BackupJobActor(JobActor):
    rules = RULES
    status_model = BackupJobStatus
    failed_reason = RULES.failed_reason

    async def read(self, ctx: Context) -> BackupJobView:
        """Every read ``decide`` needs, once: the source only when the Job is to start,
        the Backup of the run only once the tool succeeded."""
        job, target, refused = admitted(BackupJob, ctx.obj, target_of)
        view = self.job_view(ctx, job, target, refused)
        caches = self.env.caches
        source = None
        if job is not None and refused is None and view.run is None:
            ref = job.spec.source
            if ref.cn_set_ref:
                source = caches.get(r.CNSETS, ctx.namespace, ref.cn_set_ref)
            else:
                source = caches.get(r.MATRIXONE_CLUSTERS, ctx.namespace, str(ref.cluster_ref))
        name = recorded_name(view)
        recorded = caches.get(r.BACKUPS, "", name) if name else None
        return BackupJobView(view, self._recorder, source, recorded)

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)

    def _recorder(self, backup: Mapping[str, Any]) -> Step:
        return functools.partial(self._create, backup)

    async def _create(self, backup: Mapping[str, Any]) -> object:
        """Create the Backup; one already there is fine if it records the same backup."""
        try:
            return await self.env.client.create(r.BACKUPS, backup)
        except AlreadyExists:
            pass
        name = backup["metadata"]["name"]
        found = await self.env.client.get(r.BACKUPS, name)
        if recorded_id(found) != backup["meta"]["id"]:
            raise BackupConflict(f"Backup {name} exists and records another backup")
        return found
