"""The Job controller (pkg/controller/job/job_controller.go, 1.28: pod
tracking with finalizers; docs: concepts/workloads/controllers/job)."""

from __future__ import annotations

import copy
from typing import Any

from mo_devkit.localcluster.simulator.core.actions import Create, Delete, Patch
from mo_devkit.localcluster.simulator.core.objects import find_condition
from mo_devkit.localcluster.simulator.decisions.job import TRACKING_FINALIZER, plan_job

T0 = 1_700_000_000.0


def job(**spec: Any) -> dict:
    return {
        "metadata": {"name": "pi", "namespace": "default", "uid": "job-uid"},
        "spec": {
            "parallelism": 2,
            "completions": 3,
            "backoffLimit": 1,
            "completionMode": "NonIndexed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "job-uid"}},
            "template": {
                "metadata": {"labels": {"batch.kubernetes.io/controller-uid": "job-uid", "job-name": "pi"}},
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "perl"}]},
            },
            **spec,
        },
        "status": {},
    }


class JWorld:
    def __init__(self, j: dict) -> None:
        self.job = j
        self.pods: dict[str, dict] = {}
        self.n = 0

    def step(self, now: float = T0) -> list[Any]:
        plan = plan_job(self.job, list(self.pods.values()), now, 0.01)
        if plan.status is not None:
            self.job["status"] = plan.status
        for a in [*plan.manage, *plan.actions]:
            if isinstance(a, Create):
                self.n += 1
                p = copy.deepcopy(a.obj)
                p["metadata"]["name"] = f"{p['metadata']['generateName']}{self.n}"
                p["metadata"]["uid"] = f"pod-{self.n}"
                p["status"] = {"phase": "Pending"}
                self.pods[p["metadata"]["name"]] = p
            elif isinstance(a, Patch) and a.patch_type == "json":
                fins = self.pods[a.name]["metadata"]["finalizers"]
                fins.remove(TRACKING_FINALIZER)
            elif isinstance(a, Delete) and a.kind.kind == "Pod":
                self.pods[a.name]["metadata"]["deletionTimestamp"] = "now"
        return [*plan.manage, *plan.actions]

    def finish(self, phase: str, count: int) -> None:
        running = [p for p in self.pods.values() if p["status"]["phase"] == "Pending"]
        for p in running[:count]:
            p["status"] = {
                "phase": phase,
                "containerStatuses": [
                    {
                        "state": {
                            "terminated": {
                                "exitCode": 0 if phase == "Succeeded" else 1,
                                "finishedAt": "2023-11-14T22:13:20Z",
                            }
                        }
                    }
                ],
            }


def test_creates_pods_up_to_parallelism_with_tracking_finalizer() -> None:
    w = JWorld(job())
    w.step()
    assert len(w.pods) == 2
    p = next(iter(w.pods.values()))
    assert p["metadata"]["finalizers"] == [TRACKING_FINALIZER]
    assert p["metadata"]["generateName"] == "pi-"
    assert p["metadata"]["ownerReferences"][0]["kind"] == "Job"
    assert w.job["status"]["active"] == 2 and "startTime" in w.job["status"]


def test_completes_after_completions_succeed_counting_through_uncounted_pods() -> None:
    w = JWorld(job())
    w.step()
    w.finish("Succeeded", 2)
    w.step()
    assert sorted(w.job["status"]["uncountedTerminatedPods"]["succeeded"]) == ["pod-1", "pod-2"]
    assert w.job["status"].get("succeeded", 0) == 0
    w.step()  # finalizers removed now that the status recorded them
    assert all(
        TRACKING_FINALIZER not in p["metadata"]["finalizers"]
        for p in w.pods.values()
        if p["status"]["phase"] == "Succeeded"
    )
    for _ in range(4):
        w.step()
        w.finish("Succeeded", 1)
    for _ in range(3):
        w.step()
    st = w.job["status"]
    assert st["succeeded"] == 3 and st["active"] == 0
    complete = find_condition(st["conditions"], "Complete")
    assert complete is not None and complete["status"] == "True" and "completionTime" in st


def test_fails_after_backoff_limit() -> None:
    w = JWorld(job(parallelism=1, completions=1, backoffLimit=1))
    for _ in range(12):
        w.step(now=T0 + 100)
        w.finish("Failed", 1)
    st = w.job["status"]
    failed = find_condition(st.get("conditions"), "Failed")
    assert failed is not None and failed["reason"] == "BackoffLimitExceeded"
    assert failed["message"] == "Job has reached the specified backoff limit"
    assert st["failed"] == 2


def test_suspended_job_runs_no_pods() -> None:
    w = JWorld(job(suspend=True))
    w.step()
    assert w.pods == {}
    cond = find_condition(w.job["status"]["conditions"], "Suspended")
    assert cond is not None and cond["reason"] == "JobSuspended"


def test_indexed_job_pods_carry_their_index() -> None:
    w = JWorld(job(completionMode="Indexed", parallelism=3, completions=3))
    w.step()
    idx = sorted(
        p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in w.pods.values()
    )
    assert idx == ["0", "1", "2"]
    p = next(iter(w.pods.values()))
    assert (
        p["spec"]["hostname"]
        == f"pi-{p['metadata']['annotations']['batch.kubernetes.io/job-completion-index']}"
    )
    w.finish("Succeeded", 3)
    for _ in range(4):
        w.step()
    assert w.job["status"]["completedIndexes"] == "0-2"
    assert find_condition(w.job["status"]["conditions"], "Complete") is not None


def test_a_failed_pod_is_replaced_only_after_its_failure_is_counted() -> None:
    """Even when the (scaled) back-off is already over: on the real controller
    the back-off (10 s) always outlasts the accounting, so status.failed moves
    first and the replacement comes a sync later, with the status counting it."""
    w = JWorld(job(parallelism=1, completions=1, backoffLimit=3))
    w.step()
    w.finish("Failed", 1)
    later = T0 + 100  # the back-off is long over
    seen = []
    for _ in range(4):
        w.step(now=later)
        st = w.job["status"]
        seen.append(
            (len(w.pods), st["active"], st["failed"], len(st["uncountedTerminatedPods"].get("failed", [])))
        )
    assert seen == [(1, 0, 0, 1), (1, 0, 0, 1), (1, 0, 1, 0), (2, 1, 1, 0)]
    plan = plan_job(w.job, list(w.pods.values()), later, 0.01)
    assert plan.manage == [] and plan.actions == [], "settled"
