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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.api.backup import BackupJob, BackupJobSpec, BackupSource
from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterStatus
from mo_operator.api.cnset import CNSetStatus
from mo_operator.api.kinds import API_VERSION
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.errors import AlreadyExists
from mo_operator.kube.meta.objects import labels_of, mapping_at
from mo_operator.kube.meta.times import format_time
from mo_operator.matrixone import backup as br
from mo_operator.matrixone import labels, ports

from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.writes import Writes
from .jobs import Admitted, JobActor, Outcome, build_job, job_labels

Obj = dict[str, Any]

KIND = "BackupJob"


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


class BackupJobActor(JobActor):
    kind = KIND
    model = BackupJob
    resource = r.BACKUPJOBS
    noun = "backup"
    failed_reason = "BackupFailed"

    def admit(self, ctx: Context) -> Admitted | None:
        try:
            job = admit(BackupJob, ctx.obj)
            return job, br.S3Target.of(dump(job.spec.target))
        except TerminalError as e:
            self.fail(ctx, e.reason, e.message)
        except ValueError as e:
            self.fail(ctx, "InvalidSpec", f"spec.target: {e}")
        return None

    # ---------------------------------------------------------------- start
    def _source(self, ctx: Context, spec: BackupJobSpec) -> Source | str:
        """The source, or what it waits for."""
        source = spec.source
        namespace = ctx.namespace
        if source.cn_set_ref:
            name = source.cn_set_ref
            if not source.secret_ref:
                raise TerminalError(
                    "InvalidSpec", "spec.source.secretRef: must be set when cnSetRef is the source"
                )
            cnset = self.env.caches.get(r.CNSETS, namespace, name)
            if cnset is None:
                return f"CNSet {name} not found"
            at = typed.status_of(CNSetStatus, cnset)
            if not at.host:
                return f"CNSet {name} has no SQL address yet"
            return Source(at.host, at.port or ports.CN_SQL, source.secret_ref, source_ref(namespace, source))
        name = str(source.cluster_ref)
        cluster = self.env.caches.get(r.MATRIXONE_CLUSTERS, namespace, name)
        if cluster is None:
            return f"MatrixOneCluster {name} not found"
        status = typed.status_of(MatrixOneClusterStatus, cluster)
        if not status.host:
            return f"MatrixOneCluster {name} has no SQL address yet"
        secret = source.secret_ref or (status.credential_ref.name if status.credential_ref else None)
        if not secret:
            return f"MatrixOneCluster {name} has no credential yet"
        return Source(status.host, status.port or ports.CN_SQL, secret, source_ref(namespace, source))

    def start(self, ctx: Context, job_spec: Admitted, plan: Writes) -> None:
        job, target = job_spec
        assert isinstance(job, BackupJob)
        spec = job.spec
        try:
            source = self._source(ctx, spec)
        except TerminalError as e:
            self.fail(ctx, e.reason, e.message)
            return
        if isinstance(source, str):
            self.pending(ctx, "WaitingForSource", source)
            return
        run = build_job(
            ctx.obj,
            KIND,
            image=self.env.settings.backup_image,
            script=br.backup_script(source.host, source.port, target),
            env=br.backup_env(source.secret, target),
            overlay=spec.overlay,
        )
        plan.create(run, r.JOBS)
        self.running(
            ctx, f"backing up {source.ref} ({source.host}:{source.port}) to {target.url} in Job {ctx.name}"
        )

    # ---------------------------------------------------------------- record
    def succeeded(self, ctx: Context, job_spec: Admitted, outcome: Outcome, plan: Writes) -> None:
        """Record the backup as a Backup (once), then the job as Completed."""
        job = job_spec[0]
        assert isinstance(job, BackupJob)
        spec = job.spec
        try:
            meta = br.parse_metadata(outcome.message)
        except br.MetadataError as e:
            self.fail(ctx, "InvalidMetadata", f"the backup ran but its metadata cannot be read: {e}")
            return
        name = br.backup_name(ctx.name, meta.id)
        existing = self.env.caches.get(r.BACKUPS, "", name)
        if existing is not None and mapping_at(existing, "meta").get("id") != meta.id:
            self.fail(
                ctx,
                "BackupNameTaken",
                f"backup {meta.id} cannot be recorded: Backup {name} already records backup "
                f"{mapping_at(existing, 'meta').get('id')}",
            )
            return
        if existing is None:
            backup = self._backup(ctx, spec, name, meta, outcome)
            plan.call(f"create Backup {name}", lambda: self._create(backup))
        ctx.status["backup"] = name
        self.complete(ctx, f"backup {meta.id} recorded as Backup {name}")

    def _backup(
        self, ctx: Context, spec: BackupJobSpec, name: str, meta: br.BackupMetadata, outcome: Outcome
    ) -> Obj:
        now = format_time(self.env.clock())
        record: Obj = {
            "location": dump(spec.target),
            "id": meta.id,
            "atTime": meta.at_time or outcome.started_at or now,
            "completeTime": meta.complete_time or outcome.finished_at or now,
            "sourceRef": source_ref(ctx.namespace, spec.source),
            "raw": meta.raw,
        }
        if meta.size is not None:
            record["size"] = meta.size
        backup_labels = job_labels(ctx.obj, KIND)
        schedule = labels_of(ctx.obj).get(labels.BACKUP_SCHEDULE)
        if schedule:
            backup_labels[labels.BACKUP_SCHEDULE] = schedule
        return {
            "apiVersion": API_VERSION,
            "kind": "Backup",
            "metadata": {"name": name, "labels": backup_labels},
            "meta": record,
        }

    async def _create(self, backup: Mapping[str, Any]) -> object:
        """Create the Backup; one already there is fine if it records the same backup."""
        try:
            return await self.env.client.create(r.BACKUPS, backup)
        except AlreadyExists:
            pass
        name = backup["metadata"]["name"]
        found = await self.env.client.get(r.BACKUPS, name)
        if mapping_at(found, "meta").get("id") != backup["meta"]["id"]:
            raise BackupConflict(f"Backup {name} exists and records another backup")
        return found
