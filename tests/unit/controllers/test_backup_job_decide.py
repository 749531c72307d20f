"""The BackupJob's and RestoreJob's ``decide``: each phase's next step as data (intents,
status, the ``Ended`` condition, Events, when to look again), with no client and no
event loop."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from mo_operator.api.backup import BackupJob, BackupJobStatus, RestoreJob, RestoreJobStatus
from mo_operator.api.common import SharedStorageProvider
from mo_operator.controllers.backup import backupjob, restorejob
from mo_operator.controllers.backup.jobs import JobView, Outcome, Refusal, admitted, decide_finalize
from mo_operator.controllers.framework.decision import Decision
from mo_operator.controllers.framework.typed import parse_status
from mo_operator.controllers.framework.writes import Call, Create, Delete, Intent
from mo_operator.kube.controller.outcome import Requeue, Wait
from mo_operator.kube.meta.frozen import freeze

from .backup_fakes import (
    META,
    NOW,
    backup_object,
    ended,
    job_of,
    source_cluster,
)
from .backup_fakes import backupjob as a_backupjob
from .backup_fakes import restorejob as a_restorejob

Obj = dict[str, Any]
RUNNING = {"phase": "Running", "conditions": [ended("False", "JobRunning", NOW - 2)]}
DONE = Outcome("succeeded", META, "2023-11-14T22:13:20Z", "2023-11-14T22:13:22Z")


@dataclass
class Case:
    obj: Obj
    run: str | None = None
    """The Job: ``ours``, ``theirs`` or none."""
    outcome: Outcome | None = None
    source: Obj | None = None
    """The BackupJob's source, or the RestoreJob's Backup."""
    recorded: Obj | None = None
    now: float = NOW
    phase: str | None = None
    ended: tuple[bool, str] | None = None
    intents: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    later: tuple[type, float] | None = None


def _theirs(owner: Obj) -> Obj:
    job = job_of(owner)
    job["metadata"]["ownerReferences"] = [
        {"kind": "CronJob", "name": "x", "uid": "uid-x", "controller": True}
    ]
    return job


def _describe(intent: Intent) -> str:
    match intent:
        case Create(resource, obj):
            return f"create {resource.kind} {obj['metadata']['name']}"
        case Delete(resource, _, name):
            return f"delete {resource.kind} {name}"
        case Call(_, what):
            return f"call {what}"
    raise AssertionError(intent)


def job_view(case: Case, admitted: tuple[Any, Any, Any], status_model: type) -> JobView:
    obj = freeze(case.obj)
    run = None
    if case.run == "ours":
        run = freeze(job_of(case.obj))
    elif case.run == "theirs":
        run = freeze(_theirs(case.obj))
    job, target, refused = admitted
    return JobView(
        obj=obj,
        job=job,
        target=target,
        refused=refused,
        status=parse_status(status_model, case.obj.get("status") or {}),
        now=case.now,
        run=run,
        outcome=case.outcome if case.run == "ours" else None,
        image="mobr:1",
        poll=0.5,
    )


async def _never() -> None:
    raise AssertionError("decide never runs a step")


def _no_step(backup: Any) -> Any:
    return _never


def decide_backup(case: Case) -> Decision:
    view = job_view(case, admitted(BackupJob, freeze(case.obj), backupjob.target_of), BackupJobStatus)
    source = freeze(case.source) if case.source is not None else None
    recorded = freeze(case.recorded) if case.recorded is not None else None
    return backupjob.decide(backupjob.BackupJobView(view, _no_step, source, recorded))


def decide_restore(case: Case) -> Decision:
    view = job_view(case, admitted(RestoreJob, freeze(case.obj), restorejob.target_of), RestoreJobStatus)
    backup = freeze(case.source) if case.source is not None else None
    return restorejob.decide(restorejob.RestoreJobView(view, backup))


def _cnset(host: str | None) -> Obj:
    return {"kind": "CNSet", "metadata": {"name": "mo-tp", "namespace": "ns"}, "status": {"host": host}}


BACKUP_CASES = {
    "a backup waits pending for a cluster that is not there": Case(
        a_backupjob(), phase="Pending", ended=(False, "WaitingForSource"), later=(Wait, 0.5)
    ),
    "nor starts before the cluster has a credential": Case(
        a_backupjob(),
        source=source_cluster(credentialRef=None),
        phase="Pending",
        ended=(False, "WaitingForSource"),
        later=(Wait, 0.5),
    ),
    "a backup starts its Job once the cluster has an address and a credential": Case(
        a_backupjob(),
        source=source_cluster(),
        phase="Running",
        ended=(False, "JobRunning"),
        intents=["create Job nightly"],
        events=["Running"],
    ),
    "a backup through a CNSet waits for its address": Case(
        a_backupjob(source={"cnSetRef": "mo-tp", "secretRef": "dba"}),
        source=_cnset(None),
        phase="Pending",
        ended=(False, "WaitingForSource"),
        later=(Wait, 0.5),
    ),
    "and starts once it has one": Case(
        a_backupjob(source={"cnSetRef": "mo-tp", "secretRef": "dba"}),
        source=_cnset("mo-tp-cn.ns"),
        phase="Running",
        ended=(False, "JobRunning"),
        intents=["create Job nightly"],
        events=["Running"],
    ),
    "a CNSet source without a secret fails at once": Case(
        a_backupjob(source={"cnSetRef": "mo-tp"}),
        source=_cnset("mo-tp-cn.ns"),
        phase="Failed",
        ended=(True, "InvalidSpec"),
        events=["InvalidSpec"],
        later=(Requeue, 3600),
    ),
    "a target that is not S3 fails at once": Case(
        a_backupjob(target={"fileSystem": {"path": "/mnt"}}),
        phase="Failed",
        ended=(True, "InvalidSpec"),
        events=["InvalidSpec"],
        later=(Requeue, 3600),
    ),
    "a running tool is followed without a write or an Event": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=Outcome("running", ""),
        phase="Running",
        ended=(False, "JobRunning"),
    ),
    "a Job of that name that is not ours holds the backup back": Case(
        a_backupjob(),
        run="theirs",
        phase="Pending",
        ended=(False, "JobConflict"),
        later=(Wait, 0.5),
    ),
    "a failed tool fails the job with its words, once": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=Outcome("failed", "mo_br exited with code 1"),
        phase="Failed",
        ended=(True, "BackupFailed"),
        events=["BackupFailed"],
        later=(Requeue, 3600),
    ),
    "a succeeded tool is recorded as a Backup, then the job completes": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=DONE,
        phase="Completed",
        ended=(True, "JobComplete"),
        intents=["call create Backup nightly-4d21b"],
        events=["Completed"],
        later=(Requeue, 0.5),
    ),
    "a Backup already recorded is not recorded twice": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=DONE,
        recorded=backup_object(),
        phase="Completed",
        ended=(True, "JobComplete"),
        events=["Completed"],
        later=(Requeue, 0.5),
    ),
    "a Backup of that name recording another backup is never overwritten": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=DONE,
        recorded=backup_object(backup_id="4d21b000-other"),
        phase="Failed",
        ended=(True, "BackupNameTaken"),
        events=["BackupNameTaken"],
        later=(Requeue, 3600),
    ),
    "metadata that does not read fails the job": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=Outcome("succeeded", "??"),
        phase="Failed",
        ended=(True, "InvalidMetadata"),
        events=["InvalidMetadata"],
        later=(Requeue, 3600),
    ),
    "a Running job whose Job the cache does not show yet waits a grace": Case(
        a_backupjob(copy.deepcopy(RUNNING)), source=source_cluster(), later=(Wait, 8)
    ),
    "and fails once the grace is over": Case(
        a_backupjob(copy.deepcopy(RUNNING)),
        source=source_cluster(),
        now=NOW + 20,
        phase="Failed",
        ended=(True, "JobMissing"),
        events=["JobMissing"],
        later=(Requeue, 3600),
    ),
    "a completed job deletes its Job and waits out its ttl": Case(
        a_backupjob({"phase": "Completed", "conditions": [ended("True", "JobComplete", NOW - 10)]}, ttl="1m"),
        run="ours",
        intents=["delete Job nightly"],
        later=(Requeue, 50),
    ),
    "a failed job keeps its Job for troubleshooting": Case(
        a_backupjob({"phase": "Failed", "conditions": [ended("True", "BackupFailed", NOW - 10)]}),
        run="ours",
        later=(Requeue, 3590),
    ),
    "an ended job goes once its ttl is over": Case(
        a_backupjob({"phase": "Completed", "conditions": [ended("True", "JobComplete", NOW - 10)]}, ttl="1m"),
        now=NOW + 51,
        intents=["delete BackupJob nightly"],
    ),
}

RESTORE_CASES = {
    "a restore waits a while for its Backup": Case(
        a_restorejob(),
        phase="Pending",
        ended=(False, "BackupNotFound"),
        later=(Wait, 0.5),
    ),
    "then fails": Case(
        a_restorejob(),
        now=NOW + 60,
        phase="Failed",
        ended=(True, "BackupNotFound"),
        events=["BackupNotFound"],
        later=(Requeue, 3600),
    ),
    "a restore starts its Job once its Backup is there": Case(
        a_restorejob(),
        source=backup_object(),
        phase="Running",
        ended=(False, "JobRunning"),
        intents=["create Job restore1"],
        events=["Running"],
    ),
    "an external source is refused, saying so": Case(
        a_restorejob(externalSource={"s3": {"path": "b/p"}}, backupName=None),
        phase="Failed",
        ended=(True, "Unsupported"),
        events=["Unsupported"],
        later=(Requeue, 3600),
    ),
    "a restore completes as its tool succeeded": Case(
        a_restorejob(copy.deepcopy(RUNNING)),
        run="ours",
        outcome=Outcome("succeeded", ""),
        phase="Completed",
        ended=(True, "JobComplete"),
        events=["Completed"],
        later=(Requeue, 0.5),
    ),
    "a completed restore announces it once": Case(
        a_restorejob({"phase": "Completed", "conditions": [ended("False", "JobRunning", NOW - 2)]}),
        run="ours",
        outcome=Outcome("succeeded", ""),
        phase="Completed",
        ended=(True, "JobComplete"),
        later=(Requeue, 0.5),
    ),
}


def check(decision: Decision, case: Case) -> None:
    assert [_describe(i) for i in decision.intents] == case.intents
    assert all(i.uid for i in decision.intents if isinstance(i, Delete)), "deletes are conditional"
    status = decision.status
    phase = status.phase if isinstance(status, (BackupJobStatus, RestoreJobStatus)) else status.get("phase")
    assert phase == case.phase
    assert [(c.status, c.reason) for c in decision.conditions if c.type == "Ended"] == (
        [case.ended] if case.ended else []
    )
    assert [e.reason for e in decision.events] == case.events
    if case.later is None:
        assert decision.later is None
    else:
        kind, after = case.later
        assert isinstance(decision.later, kind) and decision.later.after == pytest.approx(after, abs=1)


@pytest.mark.parametrize("case", BACKUP_CASES.values(), ids=BACKUP_CASES.keys())
def test_a_backup_job_decides(case: Case) -> None:
    check(decide_backup(case), case)


@pytest.mark.parametrize("case", RESTORE_CASES.values(), ids=RESTORE_CASES.keys())
def test_a_restore_job_decides(case: Case) -> None:
    check(decide_restore(case), case)


def test_the_backup_recorded_carries_the_tools_metadata_and_the_jobs_labels() -> None:
    recorded: list[Obj] = []

    def record(backup: Obj) -> Any:
        recorded.append(backup)
        return _never

    case = BACKUP_CASES["a succeeded tool is recorded as a Backup, then the job completes"]
    view = job_view(case, admitted(BackupJob, freeze(case.obj), backupjob.target_of), BackupJobStatus)
    decision = backupjob.decide(backupjob.BackupJobView(view, record))
    assert decision.status == BackupJobStatus(phase="Completed", backup="nightly-4d21b")
    (backup,) = recorded
    assert backup["meta"]["id"] == "4d21b228-10dd-11ef-9497-26dd28356ef2"
    assert backup["meta"]["sourceRef"] == "matrixonecluster/ns/mo"
    assert backup["metadata"]["labels"]["matrixorigin.io/instance"] == "nightly"


@pytest.mark.parametrize(
    ("run", "left"),
    [("ours", ["delete Job nightly"]), ("theirs", []), ("deleting", []), (None, [])],
)
def test_a_deleted_job_stops_only_its_own_job_still_there(run: str | None, left: list[str]) -> None:
    owner = a_backupjob()
    found = None
    if run == "theirs":
        found = _theirs(owner)
    elif run is not None:
        found = job_of(owner)
        if run == "deleting":
            found["metadata"]["deletionTimestamp"] = "2023-11-14T22:13:30Z"
    decision = decide_finalize(freeze(owner), freeze(found) if found is not None else None)
    assert decision.finalized and [_describe(i) for i in decision.intents] == left


FILE_SYSTEM = {"fileSystem": {"path": "/mnt"}}
EXTERNAL = {"s3": {"path": "b/p"}}
ADMITTED_CASES: dict[str, tuple[Any, Obj, Any, str | None, Refusal | None]] = {
    "a backup job admitted runs against its S3 target": (
        BackupJob,
        a_backupjob(),
        backupjob.target_of,
        "backups/daily",
        None,
    ),
    "a restore job admitted runs against its S3 target": (
        RestoreJob,
        a_restorejob(),
        restorejob.target_of,
        "bucket/copy",
        None,
    ),
    "a spec admission refuses is refused as admission words it, with no job": (
        BackupJob,
        a_backupjob(ttl="bogus"),
        backupjob.target_of,
        None,
        Refusal("InvalidSpec", 'spec.ttl: time: invalid duration "bogus"'),
    ),
    "a restore to storage other than S3 is refused, saying restores go to s3 only": (
        RestoreJob,
        a_restorejob(target=FILE_SYSTEM),
        restorejob.target_of,
        None,
        Refusal(
            "InvalidSpec", "spec.target: restores can only be written to s3 (only s3 storage is supported)"
        ),
    ),
    "an external source is refused before the target is looked at": (
        RestoreJob,
        a_restorejob(externalSource=EXTERNAL, target=FILE_SYSTEM, backupName=None),
        restorejob.target_of,
        None,
        Refusal(
            "Unsupported",
            "spec.externalSource: restoring from storage that no Backup records is not supported; "
            "name a Backup in spec.backupName",
        ),
    ),
}


@pytest.mark.parametrize(
    ("model", "obj", "target_of", "path", "refused"), ADMITTED_CASES.values(), ids=ADMITTED_CASES.keys()
)
def test_a_job_is_admitted_with_its_target_or_refused_saying_why(
    model: Any, obj: Obj, target_of: Any, path: str | None, refused: Refusal | None
) -> None:
    job, target, refusal = admitted(model, freeze(obj), target_of)
    assert refusal == refused
    assert (f"{target.bucket}/{target.path}" if target is not None else None) == path
    assert (job is None) == (refused is not None and refused.message.startswith("spec.ttl")), (
        "a job admission refused has no spec; one whose target is refused keeps it"
    )


def test_a_backup_targets_storage_it_cannot_write_to_is_refused_naming_spec_target() -> None:
    """Admission refuses such a target first; the job's own check says the same if one gets past it."""
    job, _, _ = admitted(BackupJob, freeze(a_backupjob()), backupjob.target_of)
    assert job is not None
    unwritable = job.model_copy(
        update={"spec": job.spec.model_copy(update={"target": SharedStorageProvider()})}
    )
    assert backupjob.target_of(unwritable) == Refusal(
        "InvalidSpec", "spec.target: only s3 storage is supported"
    )
