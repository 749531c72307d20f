"""The RestoreJob controller: ``mo_br restore`` of a Backup into object storage, for a
new cluster to start from.

The Job ``<rj>`` gets the backup's metadata (``$RAW_META``, which the tool reads back
as its ``mo_br.meta``), the credentials of the backup's storage as ``AWS_*`` and those
of the target as ``RESTORE_*``, each from its own Secret (upstream reads the target's
from the source's Secret). Both Secrets are looked up in the RestoreJob's namespace.

A Backup the cache does not hold yet may still be on its way (created a moment ago),
so the job waits for it a short while, Pending with reason BackupNotFound, and then
fails. ``externalSource`` (upstream declares it and never reads it) fails the job with
a message saying so, as does a target that is not S3.
"""

from __future__ import annotations

from typing import Final

from mo_operator.api.backup import Backup, RestoreJob
from mo_operator.api.base import dump
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import meta_of
from mo_operator.kube.meta.times import parse_time
from mo_operator.matrixone import backup as br

from ..framework import resources as r
from ..framework import typed
from ..framework.admission import admit
from ..framework.writes import Writes
from .jobs import Admitted, JobActor, Outcome, build_job

KIND = "RestoreJob"
BACKUP_WAIT_SECONDS: Final = 30.0
"""How long a RestoreJob waits for its Backup to appear before it fails."""


class RestoreJobActor(JobActor):
    kind = KIND
    model = RestoreJob
    resource = r.RESTOREJOBS
    noun = "restore"
    failed_reason = "RestoreFailed"

    def admit(self, ctx: Context) -> Admitted | None:
        try:
            job = admit(RestoreJob, ctx.obj)
        except TerminalError as e:
            self.fail(ctx, e.reason, e.message)
            return None
        if job.spec.external_source is not None:
            self.fail(
                ctx,
                "Unsupported",
                "spec.externalSource: restoring from storage that no Backup records is not supported; "
                "name a Backup in spec.backupName",
            )
            return None
        try:
            return job, br.S3Target.of(dump(job.spec.target))
        except ValueError as e:
            self.fail(ctx, "InvalidSpec", f"spec.target: restores can only be written to s3 ({e})")
            return None

    def succeeded(self, ctx: Context, job_spec: Admitted, outcome: Outcome, plan: Writes) -> None:
        job, target = job_spec
        assert isinstance(job, RestoreJob)
        self.complete(ctx, f"restored Backup {job.spec.backup_name} to {target.url}")

    def start(self, ctx: Context, job_spec: Admitted, plan: Writes) -> None:
        job, target = job_spec
        assert isinstance(job, RestoreJob)
        name = str(job.spec.backup_name)
        backup = self.env.caches.get(r.BACKUPS, "", name)
        if backup is None:
            created = parse_time(meta_of(ctx.obj).creation_timestamp)
            waited = self.env.clock() - created if created is not None else BACKUP_WAIT_SECONDS
            if waited < BACKUP_WAIT_SECONDS:
                self.pending(ctx, "BackupNotFound", f"waiting for Backup {name}, which does not exist (yet)")
                return
            self.fail(ctx, "BackupNotFound", f"Backup {name} does not exist")
            return
        record = typed.read(Backup, backup)
        if record is None:
            self.fail(ctx, "InvalidBackup", f"Backup {name}: {typed.why_invalid(Backup, backup)}")
            return
        try:
            source = br.S3Target.of(dump(record.meta.location))
        except ValueError as e:
            self.fail(ctx, "InvalidBackup", f"Backup {name}: meta.location: {e}")
            return
        backup_id, raw = record.meta.id, record.meta.raw
        run = build_job(
            ctx.obj,
            KIND,
            image=self.env.settings.backup_image,
            script=br.restore_script(backup_id, source, target),
            env=br.restore_env(raw, source, target),
            overlay=job.overlay,
        )
        plan.create(run, r.JOBS)
        self.running(ctx, f"restoring backup {backup_id} (Backup {name}) to {target.url} in Job {ctx.name}")
