"""A MatrixOneCluster with ``restoreFrom`` (controllers/cluster/restore.py): nothing is
created before its RestoreJob completed, the completion is recorded, a failure is told."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.api.base import parse
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.api.kinds import API_VERSION
from mo_operator.controllers.cluster.children import desired_children
from mo_operator.controllers.cluster.restore import placement, restore_gate, restore_job, restore_job_name
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.meta.conditions import get_condition
from mo_operator.matrixone import labels

from .backup_fakes import ended, env, meta
from .controller_fakes import FakeCaches, context, events

NOW = 1_700_000_000.0
SIMULATED = "localcluster.dev/simulated"


def typed(spec: dict[str, Any]) -> MatrixOneClusterSpec:
    """A cluster spec (as admitted) in the typed form the controller reads."""
    return parse(MatrixOneClusterSpec, spec)


def cluster(annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "version": "2.0.0",
        "restoreFrom": "nightly-4d21b",
        "logService": {
            "replicas": 3,
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": "bucket/copy"}},
            "nodeSelector": {SIMULATED: "true"},
            "overlay": {"tolerations": [{"key": SIMULATED, "operator": "Exists"}], "env": [{"name": "A"}]},
        },
        "tn": {"replicas": 1},
        **spec,
    }
    obj: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "MatrixOneCluster",
        "metadata": meta("copy", uid="uid-copy"),
        "spec": body,
        "status": {},
    }
    if annotations:
        obj["metadata"]["annotations"] = annotations
    return obj


def restore(phase: str | None, message: str = "", owner: str = "uid-copy") -> dict[str, Any]:
    job = restore_job(cluster(), typed(cluster()["spec"]))
    job["metadata"]["uid"] = "uid-restore"
    job["metadata"]["ownerReferences"][0]["uid"] = owner
    if phase:
        status = "True" if phase in ("Completed", "Failed") else "False"
        job["status"] = {"phase": phase, "conditions": [ended(status, "X", NOW, message)]}
    return job


async def gate(obj: dict[str, Any], *objs: dict[str, Any]) -> tuple[bool, Any, Any]:
    caches = FakeCaches(obj, *objs)
    e, client = env(caches, NOW)
    ctx = context(obj)
    job = caches.get(r.RESTOREJOBS, "ns", restore_job_name("copy"))
    ready = get_condition(ctx.status.get("conditions") or (), "Ready")
    found = restore_gate(ctx.obj, typed(obj["spec"]), job, ready.get("reason") if ready else None)
    plan = found.decision.act(ctx, e.client)
    if plan is not None:
        await plan(ctx)
    return found.open, ctx, client


def ready(ctx: Any) -> dict[str, Any]:
    found = get_condition(ctx.status.get("conditions") or (), "Ready")
    assert found is not None
    return dict(found)


async def test_a_cluster_without_restore_from_or_already_restored_goes_ahead() -> None:
    plain = cluster()
    del plain["spec"]["restoreFrom"]
    opened, ctx, client = await gate(plain)
    assert opened and not client.calls and not ctx.status
    opened, ctx, client = await gate(cluster({labels.RESTORE_COMPLETE: "True"}))
    assert opened and not client.calls and not ctx.status


async def test_the_restore_job_is_created_first_and_holds_everything_else() -> None:
    opened, ctx, client = await gate(cluster())
    assert not opened
    assert [(verb, kind) for verb, kind, _ in client.calls] == [("create", "RestoreJob")]
    job = client.calls[0][2]
    assert job["metadata"]["name"] == "restore-copy" and job["metadata"]["namespace"] == "ns"
    assert job["metadata"]["ownerReferences"][0]["uid"] == "uid-copy"
    assert job["metadata"]["labels"] == {labels.CLUSTER: "copy"}
    assert job["spec"] == {"backupName": "nightly-4d21b", "target": {"s3": {"path": "bucket/copy"}}}
    assert job["overlay"]["tolerations"] == [{"key": SIMULATED, "operator": "Exists"}]
    assert "env" not in job["overlay"]
    assert ready(ctx)["status"] == "False" and ready(ctx)["reason"] == "Restoring"
    assert ctx.status["phase"] == "NotReady" and ctx.status["credentialRef"] == {"name": "copy-credential"}


async def test_a_running_restore_is_followed_and_a_foreign_job_is_not_adopted() -> None:
    opened, ctx, client = await gate(cluster(), restore("Running", "restoring backup x"))
    assert not opened and not client.calls
    assert (
        ready(ctx)["message"]
        == "restoring Backup nightly-4d21b: RestoreJob restore-copy is Running: restoring backup x"
    )
    opened, ctx, client = await gate(cluster(), restore("Completed", owner="uid-someone-else"))
    assert not opened and not client.calls and ready(ctx)["reason"] == "RestoreBlocked"


async def test_a_failed_restore_leaves_the_cluster_not_ready_saying_why() -> None:
    failed = restore("Failed", "mo_br exited with code 1 in pod p: backup x not found at b/p")
    opened, ctx, client = await gate(cluster(), failed)
    assert not opened and not client.calls
    assert ready(ctx)["reason"] == "RestoreFailed"
    assert ready(ctx)["message"] == (
        "RestoreJob restore-copy failed: mo_br exited with code 1 in pod p: backup x not found at b/p; "
        "delete and recreate the cluster to retry"
    )
    assert [e[:2] for e in events(ctx)] == [("Warning", "RestoreFailed")]
    again = cluster()
    again["status"] = copy.deepcopy(ctx.status)
    _, ctx, _ = await gate(again, failed)
    assert not events(ctx), "told once"


async def test_a_completed_restore_is_recorded_and_opens_the_gate() -> None:
    opened, ctx, client = await gate(cluster(), restore("Completed"))
    assert opened
    assert client.calls == [
        (
            "patch",
            "MatrixOneCluster",
            {"name": "copy", "patch": {"metadata": {"annotations": {labels.RESTORE_COMPLETE: "True"}}}},
        )
    ]
    assert [e[:2] for e in events(ctx)] == [("Normal", "Restored")]


def test_the_restore_pod_is_placed_like_the_log_service() -> None:
    spec = cluster()["spec"]
    spec["logService"]["overlay"]["affinity"] = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}
                ]
            }
        }
    }
    out = placement(typed(spec))
    terms = out["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [
        {
            "matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["a"]},
                {"key": SIMULATED, "operator": "In", "values": ["true"]},
            ]
        }
    ]
    assert spec["logService"]["overlay"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"][0]["matchExpressions"] == [{"key": "zone", "operator": "In", "values": ["a"]}], (
        "the spec is not changed"
    )
    inherited = cluster(nodeSelector={"pool": "db"})["spec"]
    del inherited["logService"]["nodeSelector"], inherited["logService"]["overlay"]
    assert placement(typed(inherited)) == {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["db"]}]}
                    ]
                }
            }
        }
    }


def test_a_restored_clusters_log_service_bootstraps_from_the_restored_data() -> None:
    obj = cluster({labels.RESTORE_COMPLETE: "True"})
    (log, *_) = desired_children(obj, typed(obj["spec"]), {})
    assert log.obj["spec"]["initialConfig"]["restoreFrom"] == "hk_data"
    plain = cluster()
    del plain["spec"]["restoreFrom"]
    (log, *_) = desired_children(plain, typed(plain["spec"]), {})
    assert "restoreFrom" not in (log.obj["spec"].get("initialConfig") or {})
