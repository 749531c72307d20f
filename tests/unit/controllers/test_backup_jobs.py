"""The BackupJob and RestoreJob controllers (controllers/backup): the Job they run, the
outcome read from its pod, and every phase transition, on hand-built snapshots."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from mo_operator.api.backup import BackupJob, BackupJobSpec
from mo_operator.api.base import parse
from mo_operator.api.common import JobOverlay
from mo_operator.controllers.backup import BackupJobActor, RestoreJobActor
from mo_operator.controllers.backup.backupjob import BackupConflict
from mo_operator.controllers.backup.jobs import build_job, job_outcome, ttl_seconds
from mo_operator.controllers.backup.restorejob import BACKUP_WAIT_SECONDS
from mo_operator.controllers.specs.pods import parse_time
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.matrixone import labels

from .backup_fakes import (
    META,
    NOW,
    backup_object,
    backupjob,
    ended,
    env,
    job_of,
    job_pod,
    restorejob,
    source_cluster,
    terminated,
)
from .controller_fakes import FakeCaches, context, events

Obj = dict[str, Any]


def cond(ctx: Any, ctype: str = "Ended") -> Obj:
    found = get_condition(ctx.status.get("conditions") or (), ctype)
    assert found is not None, ctx.status
    return dict(found)


async def observe(actor_type: type, obj: Obj, *objs: Obj, now: float = NOW) -> tuple[Any, Any, Any]:
    caches = FakeCaches(obj, *objs)
    e, client = env(caches, now)
    ctx = context(caches.objs[0])
    plan = await actor_type(e).observe(ctx)
    if plan:
        await plan(ctx)
    return ctx, plan, client


# ------------------------------------------------------------------ the Job
def test_the_job_runs_the_tool_once_with_credentials_from_secrets_and_the_overlay() -> None:
    owner = backupjob()
    overlay = {
        "command": ["/bin/false"],
        "env": [{"name": "HTTP_PROXY", "value": "http://proxy:3128"}],
        "tolerations": [{"key": "dedicated", "operator": "Exists"}],
        "podLabels": {"team": "dba", labels.INSTANCE: "not-this"},
        "imagePullPolicy": "Always",
    }
    env_vars = [{"name": "MO_USER", "valueFrom": {"secretKeyRef": {"name": "c", "key": "username"}}}]
    job = build_job(
        owner,
        "BackupJob",
        image="mobr:1",
        script="/mo_br backup",
        env=env_vars,
        overlay=parse(JobOverlay, overlay),
    )
    assert job["metadata"]["name"] == "nightly"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-nightly"
    assert job["spec"]["backoffLimit"] == 0 and job["spec"]["completions"] == 1
    pod = job["spec"]["template"]
    assert pod["spec"]["restartPolicy"] == "Never"
    assert pod["spec"]["tolerations"] == overlay["tolerations"]
    assert pod["metadata"]["labels"] == {
        "team": "dba",
        labels.NAMESPACE: "ns",
        labels.INSTANCE: "nightly",
        labels.COMPONENT: "BackupJob",
    }
    (container,) = pod["spec"]["containers"]
    assert container["name"] == "br" and container["image"] == "mobr:1"
    assert container["command"] == ["/bin/sh", "-c", "/mo_br backup"] and "args" not in container
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert container["terminationMessagePath"] == "/dev/termination-log"
    assert container["imagePullPolicy"] == "Always"
    assert [e["name"] for e in container["env"]] == ["MO_USER", "HTTP_PROXY"]


def test_the_outcome_is_read_from_the_tool_container_of_the_jobs_own_pods() -> None:
    owner = backupjob()
    job = job_of(owner)
    ok = job_outcome(job, [job_pod(owner, terminated(0, META + "\n"), "Succeeded")])
    assert ok.state == "succeeded" and ok.message == META and ok.started_at == "2023-11-14T22:13:20Z"
    bad = job_outcome(job, [job_pod(owner, terminated(1, "mo_br backup: no route"), "Failed")])
    assert bad.state == "failed"
    assert bad.message == "mo_br exited with code 1 in pod nightly-x7k2p: mo_br backup: no route"
    silent = job_outcome(job, [job_pod(owner, terminated(137), "Failed")])
    assert silent.message.endswith("(Error)")
    stranger = job_pod(owner, terminated(0, META), "Succeeded")
    stranger["metadata"]["ownerReferences"][0]["uid"] = "uid-another-job"
    assert job_outcome(job, [stranger]).running
    waiting = job_pod(owner, {"waiting": {"reason": "ImagePullBackOff", "message": "not found"}}, "Pending")
    assert job_outcome(job, [waiting]).message == "pod nightly-x7k2p: ImagePullBackOff: not found"
    assert job_outcome(job_of(owner, failed="DeadlineExceeded"), []).message == (
        "Job nightly failed: DeadlineExceeded: too bad"
    )
    assert (
        "its pod, which held the tool's result, is gone"
        in job_outcome(job_of(owner, complete=True), []).message
    )


def test_ttl_defaults_to_an_hour() -> None:
    def with_ttl(ttl: str | None) -> BackupJob:
        spec = BackupJobSpec.model_construct(ttl=ttl)  # unchecked: a ttl admission would refuse too
        return BackupJob.model_construct(spec=spec)

    assert ttl_seconds(None) == 3600, "an invalid job"
    assert ttl_seconds(with_ttl(None)) == 3600
    assert ttl_seconds(with_ttl("90s")) == 90
    assert ttl_seconds(with_ttl("bogus")) == 3600


# -------------------------------------------------------------- BackupJob
async def test_a_backup_waits_pending_for_its_source() -> None:
    ctx, plan, _ = await observe(BackupJobActor, backupjob())
    assert not plan and ctx.status["phase"] == "Pending"
    assert cond(ctx)["status"] == "False" and cond(ctx)["reason"] == "WaitingForSource"
    assert cond(ctx)["message"] == "MatrixOneCluster mo not found" and ctx.requeue_after == 0.5
    ctx, plan, _ = await observe(BackupJobActor, backupjob(), source_cluster(credentialRef=None))
    assert cond(ctx)["message"] == "MatrixOneCluster mo has no credential yet"


async def test_a_backup_starts_one_job_against_the_clusters_address_with_its_credential() -> None:
    ctx, _, client = await observe(BackupJobActor, backupjob(), source_cluster())
    assert [(verb, kind) for verb, kind, _ in client.calls] == [("create", "Job")]
    job = client.calls[0][2]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    script = container["command"][2]
    words = shlex.split(script.split("&&")[0])
    assert words[:4] == ["/mo_br", "backup", "--host=mo-proxy.ns", "--port=6001"]
    assert "mo-credential" in str(container["env"]) and "password" not in script.replace("--password", "")
    assert all("valueFrom" in e for e in container["env"])
    assert ctx.status["phase"] == "Running" and cond(ctx)["reason"] == "JobRunning"
    assert (
        "backing up matrixonecluster/ns/mo (mo-proxy.ns:6001) to s3://backups/daily" in cond(ctx)["message"]
    )
    assert events(ctx) == [("Normal", "Running", cond(ctx)["message"])]


async def test_a_running_backup_waits_on_its_pod_without_writing() -> None:
    bj = backupjob({"phase": "Running", "conditions": [ended("False", "JobRunning", NOW - 5)]})
    ctx, plan, client = await observe(BackupJobActor, bj, job_of(bj), job_pod(bj, {"running": {}}))
    assert not plan and not client.calls and ctx.status["phase"] == "Running"
    assert ctx.requeue_after is None


async def test_a_successful_backup_is_recorded_as_a_backup_then_completed() -> None:
    bj = backupjob({"phase": "Running", "conditions": [ended("False", "JobRunning", NOW - 5)]})
    ctx, _, client = await observe(
        BackupJobActor, bj, source_cluster(), job_of(bj), job_pod(bj, terminated(0, META), "Succeeded")
    )
    assert [(verb, kind) for verb, kind, _ in client.calls] == [("create", "Backup")]
    backup = client.calls[0][2]
    assert backup["metadata"]["name"] == "nightly-4d21b" and "namespace" not in backup["metadata"]
    assert "ownerReferences" not in backup["metadata"]
    assert backup["metadata"]["labels"][labels.INSTANCE] == "nightly"
    assert backup["meta"] == {
        "location": backupjob()["spec"]["target"],
        "id": "4d21b228-10dd-11ef-9497-26dd28356ef2",
        "atTime": "2023-11-14T22:13:20Z",
        "completeTime": "2023-11-14T22:13:21Z",
        "sourceRef": "matrixonecluster/ns/mo",
        "raw": META,
        "size": 1048576,
    }
    assert ctx.status["phase"] == "Completed" and ctx.status["backup"] == "nightly-4d21b"
    assert cond(ctx)["status"] == "True" and cond(ctx)["reason"] == "JobComplete"
    assert (
        "Normal",
        "Completed",
        "backup 4d21b228-10dd-11ef-9497-26dd28356ef2 recorded as Backup nightly-4d21b",
    ) in (events(ctx))


async def test_a_restarted_operator_records_the_same_backup_once() -> None:
    """Killed after the Job was made but before its status said so: the Job is found,
    and a Backup already made for this backup is not made again."""
    bj = backupjob({"phase": "Pending"})
    done = job_pod(bj, terminated(0, META), "Succeeded")
    ctx, _, client = await observe(BackupJobActor, bj, job_of(bj), done, backup_object())
    assert not client.calls and ctx.status["phase"] == "Completed"
    ctx, _, client = await observe(BackupJobActor, bj, job_of(bj), done)
    assert [kind for _, kind, _ in client.calls] == ["Backup"]


async def test_a_backup_name_taken_by_another_backup_is_never_overwritten() -> None:
    bj = backupjob({"phase": "Running"})
    done = job_pod(bj, terminated(0, META), "Succeeded")
    other = backup_object(backup_id="4d21b000-other")
    ctx, _, client = await observe(BackupJobActor, bj, job_of(bj), done, other)
    assert not client.calls and ctx.status["phase"] == "Failed" and cond(ctx)["reason"] == "BackupNameTaken"
    # ... nor when the cache had not shown it yet: the create finds it, and the reconcile fails
    caches = FakeCaches(bj, job_of(bj), done)
    e, client = env(caches)
    plan = await BackupJobActor(e).observe(context(caches.objs[0]))
    caches.add(other)
    assert plan is not None
    with pytest.raises(BackupConflict):
        await plan(context(bj))


async def test_a_failed_backup_keeps_its_job_and_says_why() -> None:
    bj = backupjob({"phase": "Running"})
    failed = job_pod(
        bj, terminated(1, "mo_br backup: cannot connect to MatrixOne at mo-proxy.ns:6001"), "Failed"
    )
    ctx, plan, client = await observe(BackupJobActor, bj, job_of(bj), failed)
    assert not plan and not client.calls
    assert ctx.status["phase"] == "Failed" and cond(ctx)["reason"] == "BackupFailed"
    assert "exited with code 1" in cond(ctx)["message"] and "cannot connect" in cond(ctx)["message"]
    assert events(ctx)[0][:2] == ("Warning", "BackupFailed")
    assert ctx.requeue_after == 3600
    garbled = job_pod(bj, terminated(0, "??"), "Succeeded")
    ctx, *_ = await observe(BackupJobActor, bj, job_of(bj), garbled)
    assert cond(ctx)["reason"] == "InvalidMetadata"


async def test_an_ended_backup_deletes_its_job_then_itself_after_its_ttl() -> None:
    bj = backupjob(
        {
            "phase": "Completed",
            "backup": "nightly-4d21b",
            "conditions": [ended("True", "JobComplete", NOW - 10)],
        },
        ttl="1m",
    )
    ctx, _, client = await observe(BackupJobActor, bj, job_of(bj))
    assert client.calls == [
        (
            "delete",
            "Job",
            {
                "name": "nightly",
                "uid": "uid-job",
                "grace_period_seconds": None,
                "propagation_policy": "Background",
                "missing_ok": True,
            },
        )
    ]
    assert ctx.requeue_after == pytest.approx(50, abs=1)
    ctx, plan, client = await observe(BackupJobActor, bj)
    assert not plan and ctx.requeue_after == pytest.approx(50, abs=1)
    ctx, _, client = await observe(BackupJobActor, bj, now=NOW + 51)
    assert [(verb, kind, call["uid"]) for verb, kind, call in client.calls] == [
        ("delete", "BackupJob", "uid-nightly")
    ]
    failed = backupjob({"phase": "Failed", "conditions": [ended("True", "BackupFailed", NOW - 10)]})
    ctx, _, client = await observe(BackupJobActor, failed, job_of(failed))
    assert not client.calls, "a failed job's Job stays until the job goes"


async def test_a_running_backup_whose_job_vanished_fails_after_a_grace() -> None:
    bj = backupjob({"phase": "Running", "conditions": [ended("False", "JobRunning", NOW - 2)]})
    ctx, plan, client = await observe(BackupJobActor, bj, source_cluster())
    assert not plan and ctx.status["phase"] == "Running" and ctx.requeue_after == pytest.approx(8, abs=1)
    ctx, plan, client = await observe(BackupJobActor, bj, source_cluster(), now=NOW + 20)
    assert not client.calls and ctx.status["phase"] == "Failed" and cond(ctx)["reason"] == "JobMissing"


async def test_bad_specs_end_the_job_with_a_message_naming_the_field() -> None:
    ctx, *_ = await observe(BackupJobActor, backupjob(target={"fileSystem": {"path": "/mnt"}}))
    assert ctx.status["phase"] == "Failed" and cond(ctx)["reason"] == "InvalidSpec"
    assert "spec.target.fileSystem" in cond(ctx)["message"]
    ctx, *_ = await observe(BackupJobActor, backupjob(source={"cnSetRef": "mo-tp"}))
    assert cond(ctx)["reason"] == "InvalidSpec" and "spec.source.secretRef" in cond(ctx)["message"]


async def test_a_backup_through_a_cnset_uses_its_address_and_the_given_secret() -> None:
    cnset = {
        "kind": "CNSet",
        "metadata": {"name": "mo-tp", "namespace": "ns"},
        "status": {"host": "mo-tp-cn.ns", "port": 6001},
    }
    ctx, _, client = await observe(
        BackupJobActor, backupjob(source={"cnSetRef": "mo-tp", "secretRef": "dba"}), cnset
    )
    container = client.calls[0][2]["spec"]["template"]["spec"]["containers"][0]
    assert "--host=mo-tp-cn.ns" in container["command"][2]
    assert container["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "dba"
    assert "cnset/ns/mo-tp" in cond(ctx)["message"]


async def test_deleting_a_backup_job_stops_its_job() -> None:
    bj = backupjob()
    caches = FakeCaches(bj, job_of(bj))
    e, client = env(caches)
    assert await BackupJobActor(e).finalize(context(bj)) is True
    assert [(verb, kind) for verb, kind, _ in client.calls] == [("delete", "Job")]
    e, client = env(FakeCaches(bj))
    assert await BackupJobActor(e).finalize(context(bj)) is True and not client.calls


# ------------------------------------------------------------- RestoreJob
async def test_a_restore_waits_a_while_for_its_backup_then_fails() -> None:
    created = parse_time(restorejob()["metadata"]["creationTimestamp"])
    assert created is not None
    ctx, plan, _ = await observe(RestoreJobActor, restorejob(), now=created + 10)
    assert not plan and ctx.status["phase"] == "Pending" and cond(ctx)["reason"] == "BackupNotFound"
    ctx, plan, _ = await observe(RestoreJobActor, restorejob(), now=created + BACKUP_WAIT_SECONDS + 1)
    assert ctx.status["phase"] == "Failed" and cond(ctx)["message"] == "Backup nightly-4d21b does not exist"


async def test_a_restore_hands_the_backup_metadata_and_each_sides_keys_to_the_tool() -> None:
    ctx, _, client = await observe(
        RestoreJobActor, restorejob(overlay={"serviceAccountName": "s3-writer"}), backup_object()
    )
    job = client.calls[0][2]
    spec = job["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == "s3-writer"
    container = spec["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["RAW_META"]["value"] == META
    assert env["AWS_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"]["name"] == "s3-keys"
    assert env["RESTORE_ACCESS_KEY_ID"]["valueFrom"]["secretKeyRef"]["name"] == "t-keys"
    assert "/mo_br restore 4d21b228-10dd-11ef-9497-26dd28356ef2 --restore_dir s3" in container["command"][2]
    assert "--restore_bucket=bucket --restore_filepath=copy" in container["command"][2]
    assert ctx.status["phase"] == "Running"


async def test_a_restore_completes_or_fails_with_the_tools_words() -> None:
    rj = restorejob({"phase": "Running"})
    ok = job_pod(rj, terminated(0), "Succeeded")
    ctx, *_ = await observe(RestoreJobActor, rj, backup_object(), job_of(rj), ok)
    assert ctx.status["phase"] == "Completed"
    assert cond(ctx)["message"] == "restored Backup nightly-4d21b to s3://bucket/copy"
    bad = job_pod(rj, terminated(1, "mo_br restore: backup x not found at b/p"), "Failed")
    ctx, *_ = await observe(RestoreJobActor, rj, backup_object(), job_of(rj), bad)
    assert ctx.status["phase"] == "Failed" and cond(ctx)["reason"] == "RestoreFailed"
    assert "backup x not found at b/p" in cond(ctx)["message"]


async def test_restores_it_cannot_run_fail_at_once() -> None:
    external = restorejob(backupName=None, externalSource={"s3": {"path": "b/p"}})
    del external["spec"]["backupName"]
    ctx, *_ = await observe(RestoreJobActor, external)
    assert cond(ctx)["reason"] == "Unsupported" and "spec.externalSource" in cond(ctx)["message"]
    ctx, *_ = await observe(
        RestoreJobActor, restorejob(target={"fileSystem": {"path": "/mnt"}}), backup_object()
    )
    assert cond(ctx)["reason"] == "InvalidSpec" and "only be written to s3" in cond(ctx)["message"]
