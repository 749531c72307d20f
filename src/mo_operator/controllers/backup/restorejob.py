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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mo_operator.api.backup import Backup, RestoreJob, RestoreJobStatus
from mo_operator.api.base import dump
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import meta_of
from mo_operator.kube.meta.times import parse_time
from mo_operator.matrixone import backup as br

from ..framework import resources as r
from ..framework import typed
from ..framework.decision import Decision
from ..framework.writes import Create, Writes
from .jobs import (
    COMPLETED,
    JobActor,
    JobView,
    Refusal,
    Rules,
    admitted,
    build_job,
    complete,
    decide_job,
    fail,
    pending,
    running,
)

KIND = "RestoreJob"
RULES: Final = Rules(KIND, r.RESTOREJOBS, "restore", "RestoreFailed")
BACKUP_WAIT_SECONDS: Final = 30.0
"""How long a RestoreJob waits for its Backup to appear before it fails."""


@dataclass(frozen=True)
class RestoreJobView:
    """What a RestoreJob's decision reads: what every job reads, and the Backup it
    restores (read only when its Job is to start)."""

    job: JobView
    backup: Mapping[str, Any] | None = None


def target_of(job: RestoreJob) -> br.S3Target | Refusal:
    """The storage the backup is restored to, or why the job cannot run."""
    if job.spec.external_source is not None:
        return Refusal(
            "Unsupported",
            "spec.externalSource: restoring from storage that no Backup records is not supported; "
            "name a Backup in spec.backupName",
        )
    try:
        return br.S3Target.of(dump(job.spec.target))
    except ValueError as e:
        return Refusal("InvalidSpec", f"spec.target: restores can only be written to s3 ({e})")


def decide(view: RestoreJobView) -> Decision:
    """The RestoreJob's next step (see ``jobs.decide_job``). Pure: a function of ``view``."""
    return decide_job(view.job, RULES, lambda: _start(view), lambda _: _succeeded(view.job))


def _succeeded(view: JobView) -> Decision:
    job, target = view.job, view.target
    assert isinstance(job, RestoreJob) and target is not None
    return complete(view, f"restored Backup {job.spec.backup_name} to {target.url}", view.drafted(COMPLETED))


def _start(restore: RestoreJobView) -> Decision:
    """The Job, once the Backup is there; Pending a while until it is."""
    view = restore.job
    job, target = view.job, view.target
    assert isinstance(job, RestoreJob) and target is not None
    name = str(job.spec.backup_name)
    backup = restore.backup
    if backup is None:
        created = parse_time(meta_of(view.obj).creation_timestamp)
        waited = view.now - created if created is not None else BACKUP_WAIT_SECONDS
        if waited < BACKUP_WAIT_SECONDS:
            return pending(view, "BackupNotFound", f"waiting for Backup {name}, which does not exist (yet)")
        return fail(view, "BackupNotFound", f"Backup {name} does not exist")
    record = typed.read(Backup, backup)
    if record is None:
        return fail(view, "InvalidBackup", f"Backup {name}: {typed.why_invalid(Backup, backup)}")
    try:
        source = br.S3Target.of(dump(record.meta.location))
    except ValueError as e:
        return fail(view, "InvalidBackup", f"Backup {name}: meta.location: {e}")
    backup_id, raw = record.meta.id, record.meta.raw
    run = build_job(
        view.obj,
        KIND,
        image=view.image,
        script=br.restore_script(backup_id, source, target),
        env=br.restore_env(raw, source, target),
        overlay=job.overlay,
    )
    message = f"restoring backup {backup_id} (Backup {name}) to {target.url} in Job {view.name}"
    return running(view, message, (Create(r.JOBS, run),))


class RestoreJobActor(JobActor):
    rules = RULES
    status_model = RestoreJobStatus
    failed_reason = RULES.failed_reason

    async def read(self, ctx: Context) -> RestoreJobView:
        """Every read ``decide`` needs, once."""
        job, target, refused = admitted(RestoreJob, ctx.obj, target_of)
        view = self.job_view(ctx, job, target, refused)
        starts = job is not None and refused is None and view.run is None
        backup = self.env.caches.get(r.BACKUPS, "", str(job.spec.backup_name)) if starts and job else None
        return RestoreJobView(view, backup)

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)
