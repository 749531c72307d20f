"""Reading pods: readiness and the words a stalled roll uses for a pod.

A container that keeps exiting waits in CrashLoopBackOff; why its last run
ended is in ``lastState.terminated`` (exitCode, reason, and the termination
message: https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/).
"""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.behaviour import ContainerExit, PodVerdict
from mo_devkit.localcluster.simulator.decisions.containers import Timing
from mo_devkit.localcluster.simulator.decisions.pod_status import sync_pod
from mo_devkit.localcluster.simulator.rules import RuleSet
from mo_operator.controllers.specs import pods


def pod(
    *statuses: dict[str, Any], conditions: list[dict[str, Any]] | None = None, phase: str = "Running"
) -> dict[str, Any]:
    return {
        "metadata": {"name": "mo-tp-cn-1", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "status": {
            "phase": phase,
            "conditions": conditions if conditions is not None else [{"type": "Ready", "status": "False"}],
            "containerStatuses": list(statuses),
        },
    }


def container(name: str = "main", **fields: Any) -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": 0, **fields}


BACKING_OFF = {
    "waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s restarting failed container=main"}
}


def test_a_crash_loop_says_why_the_last_run_ended() -> None:
    last = {
        "terminated": {
            "exitCode": 2,
            "reason": "Error",
            "message": "InvalidConfig: fileservice must define LOCAL",
        }
    }
    found = pods.problem(pod(container(state=BACKING_OFF, restartCount=3, lastState=last)))
    assert found == "CrashLoopBackOff (3 restarts): InvalidConfig: fileservice must define LOCAL"


def test_without_a_message_the_exit_code_says_it() -> None:
    last = {"terminated": {"exitCode": 137, "reason": "Error"}}
    found = pods.problem(pod(container(state=BACKING_OFF, restartCount=1, lastState=last)))
    assert found == "CrashLoopBackOff (1 restarts): exit code 137"
    assert pods.problem(pod(container(state=BACKING_OFF, restartCount=1))) == "CrashLoopBackOff (1 restarts)"


def test_a_log_tail_becomes_one_bounded_line() -> None:
    tail = "starting\n  loading config\npanic: " + "x" * 400 + "\n"
    last = {"terminated": {"exitCode": 2, "reason": "Error", "message": tail}}
    found = pods.problem(pod(container(state=BACKING_OFF, restartCount=2, lastState=last)))
    assert found.startswith("CrashLoopBackOff (2 restarts): starting loading config panic: xxx")
    assert "\n" not in found and found.endswith("...")
    assert len(found) == len("CrashLoopBackOff (2 restarts): ") + pods.MESSAGE_LIMIT


def test_between_crashes_a_running_container_still_explains_itself() -> None:
    last = {"terminated": {"exitCode": 1, "reason": "Error", "message": "BadImage: not MatrixOne"}}
    running = {"running": {"startedAt": "2024-01-01T00:01:00Z"}}
    found = pods.problem(pod(container(state=running, restartCount=4, lastState=last)))
    assert found == "restarting (4 restarts): BadImage: not MatrixOne"
    assert pods.problem(pod(container(state=running, restartCount=4))) == "restarting (4 restarts)"


def test_a_terminated_container_names_its_exit_and_message() -> None:
    terminated = {"terminated": {"exitCode": 2, "reason": "Error", "message": "InvalidConfig: bad"}}
    assert (
        pods.problem(pod(container(state=terminated), phase="Failed"))
        == "Error: exit code 2: InvalidConfig: bad"
    )
    plain = {"terminated": {"exitCode": 3, "reason": "Error"}}
    assert pods.problem(pod(container(state=plain), phase="Failed")) == "Error: exit code 3"


def test_other_waiting_reasons_keep_the_kubelet_message() -> None:
    waiting = {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "mo:9.9.9"'}}
    assert (
        pods.problem(pod(container(state=waiting))) == 'ImagePullBackOff: Back-off pulling image "mo:9.9.9"'
    )
    creating = {"waiting": {"reason": "ContainerCreating"}}
    assert pods.problem(pod(container(state=creating), phase="Pending")) == "Pending, not ready"


def test_the_main_container_is_explained_first() -> None:
    sidecar = container("logs", state={"waiting": {"reason": "ImagePullBackOff", "message": "no"}})
    last = {"terminated": {"exitCode": 2, "reason": "Error", "message": "InvalidConfig: x"}}
    main = container(state=BACKING_OFF, restartCount=1, lastState=last)
    assert pods.problem(pod(sidecar, main)).startswith("CrashLoopBackOff (1 restarts): InvalidConfig")


def test_scheduling_and_readiness_gates() -> None:
    unscheduled = [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": "0/3 nodes"}
    ]
    assert pods.problem(pod(conditions=unscheduled, phase="Pending")) == "Unschedulable: 0/3 nodes"
    gate = [
        {"type": "Ready", "status": "False"},
        {"type": "matrixorigin.io/cn-store", "status": "False", "reason": "Draining"},
    ]
    running = container(state={"running": {}}, ready=True)
    assert pods.problem(pod(running, conditions=gate)) == "matrixorigin.io/cn-store: Draining"


def test_readiness_and_since_when() -> None:
    ready = pod(conditions=[{"type": "Ready", "status": "True"}])
    assert pods.is_ready(ready) and pods.not_ready_since(ready) is None
    unready = pod(
        conditions=[{"type": "Ready", "status": "False", "lastTransitionTime": "2024-01-01T00:05:00Z"}]
    )
    assert not pods.is_ready(unready)
    assert pods.not_ready_since(unready) == pods.parse_time("2024-01-01T00:05:00Z")
    assert pods.parse_time("yesterday") is None and pods.parse_time(None) is None
    assert pods.format_time(pods.parse_time("2024-01-01T00:05:00Z") or 0) == "2024-01-01T00:05:00Z"


def test_what_the_simulated_kubelet_reports_for_a_crashing_process_reads_as_its_problem() -> None:
    """End to end through the simulated kubelet: a process that prints its
    problem and exits, in a container with FallbackToLogsOnError (as our pod
    template sets), reads as ``CrashLoopBackOff (N restarts): <problem>``."""
    p: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "mo-tp-cn-1",
            "namespace": "ns",
            "uid": "u1",
            "creationTimestamp": "2024-01-01T00:00:00Z",
        },
        "spec": {
            "nodeName": "n",
            "restartPolicy": "Always",
            "containers": [
                {"name": "main", "image": "mo:1", "terminationMessagePolicy": "FallbackToLogsOnError"}
            ],
        },
    }
    verdict = PodVerdict(
        ready=False, crash=ContainerExit(exit_code=2, log="InvalidConfig: fileservice must define LOCAL")
    )
    timing = Timing(start_delay=0.01, ready_delay=0.01, run_duration=0.1, time_scale=0.001)
    now, timeline, seen = 1_700_000_000.0, None, []
    for _ in range(100):
        d = sync_pod(
            p,
            timeline=timeline,
            now=now,
            rules=RuleSet(),
            verdict=verdict,
            timing=timing,
            host_ip="10.0.0.1",
            pod_ip="10.1.0.1",
        )
        if d.status is not None:
            p = dict(p, status=d.status)
            seen.append(pods.problem(p))
        timeline = d.timeline
        if d.wake_after is None:
            break
        now += max(d.wake_after, 0.0005)
    assert "CrashLoopBackOff (3 restarts): InvalidConfig: fileservice must define LOCAL" in seen
    assert not pods.is_ready(p)
