"""The kubelet's pod status decisions (pkg/kubelet/kubelet_pods.go getPhase,
pkg/kubelet/status/generate.go, pkg/kubelet/kuberuntime back-off)."""

from __future__ import annotations

from dataclasses import replace

from mo_devkit.localcluster.simulator.behaviour import PodVerdict
from mo_devkit.localcluster.simulator.core.objects import find_condition
from mo_devkit.localcluster.simulator.decisions.containers import Timing, go_duration, image_id, image_ref
from mo_devkit.localcluster.simulator.decisions.pod_status import KubeletDecision, PodTimeline, sync_pod
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule, RuleSet

from .factories import pod

T0 = 1_700_000_000.0
TIMING = Timing(start_delay=0.2, ready_delay=0.2, run_duration=0.5, time_scale=0.01)


def run(
    p: dict,
    now: float,
    tl: PodTimeline | None = None,
    rules: RuleSet | None = None,
    verdict: PodVerdict | None = None,
) -> KubeletDecision:
    return sync_pod(
        p,
        timeline=tl,
        now=now,
        rules=rules or RuleSet(),
        verdict=verdict,
        timing=TIMING,
        host_ip="172.18.0.2",
        pod_ip="10.244.0.7",
    )


def settle(
    p: dict, start: float, until: float, rules: RuleSet | None = None, verdict: PodVerdict | None = None
) -> tuple[dict, PodTimeline, KubeletDecision]:
    """Drive the kubelet as its loop would: apply each status, wake when asked."""
    now, tl = start, None
    d = run(p, now, tl, rules, verdict)
    for _ in range(200):
        if d.status is not None:
            p = dict(p, status=d.status)
        tl = d.timeline
        if d.wake_after is None or now + d.wake_after > until:
            break
        now += max(d.wake_after, 0.001)
        d = run(p, now, tl, rules, verdict)
    return p, tl, d


def cond(p: dict, ctype: str) -> dict:
    c = find_condition(p["status"]["conditions"], ctype)
    assert c is not None, ctype
    return c


def test_new_pod_is_pending_with_container_creating_then_running_and_ready() -> None:
    """A bound pod is Pending (ContainerCreating) until its containers start,
    then Running; a container without a readiness probe is ready when it runs
    (generate.go: Ready mirrors ContainersReady)."""
    p = pod()
    d = run(p, T0)
    assert d.status is not None and d.status["phase"] == "Pending"
    cs = d.status["containerStatuses"][0]
    assert cs["state"] == {"waiting": {"reason": "ContainerCreating"}}
    assert cs["ready"] is False and cs["restartCount"] == 0 and cs["imageID"] == ""
    ready = find_condition(d.status["conditions"], "Ready")
    assert ready is not None and ready["status"] == "False" and ready["reason"] == "ContainersNotReady"
    assert ready["message"] == "containers with unready status: [app]"
    assert d.status["hostIP"] == "172.18.0.2" and d.status["podIP"] == "10.244.0.7"
    assert d.wake_after is not None and abs(d.wake_after - 0.2) < 1e-3

    p2, _, d2 = settle(p, T0, T0 + 5)
    assert p2["status"]["phase"] == "Running"
    cs = p2["status"]["containerStatuses"][0]
    assert "running" in cs["state"] and cs["started"] is True and cs["ready"] is True
    assert cs["containerID"].startswith("containerd://")
    assert cs["imageID"].startswith("docker.io/library/nginx@sha256:")
    assert [c["type"] for c in p2["status"]["conditions"]] == [
        "Initialized",
        "Ready",
        "ContainersReady",
        "PodScheduled",
    ]
    assert cond(p2, "Ready")["status"] == "True"
    assert d2.wake_after is None, "a settled pod needs no timer"


def test_readiness_probe_delays_ready() -> None:
    """A container with a readinessProbe runs first and is ready later."""
    p = pod(containers=[{"name": "app", "image": "nginx", "readinessProbe": {"tcpSocket": {"port": 80}}}])
    p1, tl, _ = settle(p, T0, T0 + 0.25)
    assert p1["status"]["phase"] == "Running"
    assert p1["status"]["containerStatuses"][0]["ready"] is False
    d = run(p1, T0 + 0.45, tl)
    assert d.status is not None and d.status["containerStatuses"][0]["ready"] is True


def test_readiness_gates_hold_ready_until_condition_true() -> None:
    """Ready is True only when ContainersReady and every readiness gate's
    condition is True (GeneratePodReadyCondition)."""
    p = pod(readinessGates=[{"conditionType": "example.com/ok"}])
    p1, _, _ = settle(p, T0, T0 + 5)
    ready = cond(p1, "Ready")
    assert cond(p1, "ContainersReady")["status"] == "True"
    assert ready["status"] == "False" and ready["reason"] == "ReadinessGatesNotReady"
    assert (
        ready["message"] == 'corresponding condition of pod readiness gate "example.com/ok" does not exist.'
    )

    p1["status"]["conditions"].append({"type": "example.com/ok", "status": "False"})
    d = run(p1, T0 + 6)
    assert d.status is not None
    r = find_condition(d.status["conditions"], "Ready")
    assert (
        r is not None
        and r["message"] == 'the status of pod readiness gate "example.com/ok" is not "True", but False'
    )

    verdict = PodVerdict(conditions=({"type": "example.com/ok", "status": "True"},))
    d = run(p1, T0 + 7, verdict=verdict)
    assert d.status is not None
    r = find_condition(d.status["conditions"], "Ready")
    assert r is not None and r["status"] == "True"


def test_behaviour_verdict_can_hold_readiness_and_set_annotations() -> None:
    p, _, d = settle(pod(), T0, T0 + 5, verdict=PodVerdict(ready=False, annotations={"sim/role": "leader"}))
    assert p["status"]["phase"] == "Running"
    assert cond(p, "Ready")["status"] == "False"
    assert d.annotations == {"sim/role": "leader"}


def test_image_pull_error_rule() -> None:
    """ErrImagePull, then ImagePullBackOff with the kubelet's message; the pod
    stays Pending and the container never gets an ID."""
    rules = RuleSet()
    rules.add(FailureRule(Effect.IMAGE_PULL_ERROR, image="nginx:*"))
    p = pod()
    p1, _, _ = settle(p, T0, T0 + 0.21, rules)
    w = p1["status"]["containerStatuses"][0]["state"]["waiting"]
    assert w["reason"] == "ErrImagePull"
    assert 'failed to pull and unpack image "docker.io/library/nginx:1.25"' in w["message"]
    p2, _tl, d = settle(p, T0, T0 + 10, rules)
    cs = p2["status"]["containerStatuses"][0]
    assert cs["state"]["waiting"] == {
        "reason": "ImagePullBackOff",
        "message": 'Back-off pulling image "nginx:1.25"',
    }
    assert p2["status"]["phase"] == "Pending" and "containerID" not in cs
    assert d.wake_after is None
    # Lifting the rule lets the next pull succeed.
    rules.clear()
    p3, _, _ = settle(p2, T0 + 11, T0 + 20, rules)
    assert p3["status"]["phase"] == "Running"


def test_crash_loop_grows_restart_count_with_backoff() -> None:
    """A crashing container restarts at once the first time, then waits in
    CrashLoopBackOff 10s, 20s, ... (scaled); restartCount grows and
    lastState records the exit; phase stays Running under restartPolicy Always."""
    rules = RuleSet()
    rules.add(FailureRule(Effect.CRASH_LOOP, name="web-*", exit_code=2))
    p, _, _ = settle(pod(), T0, T0 + 2.0, rules)
    cs = p["status"]["containerStatuses"][0]
    assert cs["restartCount"] >= 3
    assert cs["lastState"]["terminated"]["exitCode"] == 2
    assert cs["lastState"]["terminated"]["reason"] == "Error"
    assert p["status"]["phase"] == "Running"
    assert cond(p, "Ready")["status"] == "False"
    states = cs["state"]
    if "waiting" in states:
        assert states["waiting"]["reason"] == "CrashLoopBackOff"
        assert states["waiting"]["message"].startswith("back-off ")
        assert "restarting failed container=app pod=web-0_default(uid-web-0)" in states["waiting"]["message"]


def test_a_crash_looping_container_is_never_reported_ready() -> None:
    """Not even between a start and its crash, with no readiness probe: a real
    kubelet reports the exit of a process that dies at once, never the moment
    it ran. A ready moment let a StatefulSet (OrderedReady) roll on past a
    crash-looping pod, and a reverted one replace it, which the real
    controller never does (the "forced rollback" of the StatefulSet docs)."""
    rules = RuleSet()
    rules.add(FailureRule(Effect.CRASH_LOOP, name="web-*"))
    now, tl, p = T0, None, pod()
    seen = []
    for _ in range(200):
        d = run(p, now, tl, rules)
        if d.status is not None:
            p = dict(p, status=d.status)
            seen.append((d.status["containerStatuses"][0]["ready"], cond(p, "Ready")["status"]))
        tl = d.timeline
        if d.wake_after is None or now > T0 + 2.0:
            break
        now += max(d.wake_after / 2, 0.001)  # look inside every window, not only at its ends
    assert p["status"]["containerStatuses"][0]["restartCount"] >= 3
    assert seen and all(s == (False, "False") for s in seen), seen


def test_crash_with_restart_policy_never_fails_pod() -> None:
    rules = RuleSet()
    rules.add(FailureRule(Effect.CRASH_LOOP, labels={"app": "db*"}))
    p, _, d = settle(pod(labels={"app": "db1"}, restart_policy="Never"), T0, T0 + 5, rules)
    assert p["status"]["phase"] == "Failed"
    assert cond(p, "Ready")["reason"] == "PodFailed"
    assert d.wake_after is None


def test_never_ready_rule() -> None:
    rules = RuleSet()
    rules.add(effect=Effect.NEVER_READY, name="web-0")
    p, _, _ = settle(pod(), T0, T0 + 5, rules)
    assert p["status"]["phase"] == "Running"
    assert p["status"]["containerStatuses"][0]["ready"] is False
    assert cond(p, "ContainersReady")["status"] == "False"


def test_run_to_completion_succeeds_or_fails_by_rule() -> None:
    """restartPolicy Never containers exit 0 after their run: Succeeded with
    Ready False reason PodCompleted; a Fail rule gives Failed with the code."""
    p, _, _ = settle(pod("job-a", restart_policy="Never"), T0, T0 + 5)
    assert p["status"]["phase"] == "Succeeded"
    term = p["status"]["containerStatuses"][0]["state"]["terminated"]
    assert term["exitCode"] == 0 and term["reason"] == "Completed"
    assert cond(p, "Ready")["reason"] == "PodCompleted"
    assert cond(p, "Initialized")["reason"] == "PodCompleted"

    rules = RuleSet()
    rules.add(FailureRule(Effect.FAIL, name="job-*", exit_code=3))
    p, _, _ = settle(pod("job-b", restart_policy="Never"), T0, T0 + 5, rules)
    assert p["status"]["phase"] == "Failed"
    assert p["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 3


def test_on_failure_restarts_failed_container() -> None:
    rules = RuleSet()
    rules.add(FailureRule(Effect.FAIL, name="job-*"))
    p, _, _ = settle(pod("job-c", restart_policy="OnFailure"), T0, T0 + 1.5, rules)
    assert p["status"]["phase"] == "Running"
    assert p["status"]["containerStatuses"][0]["restartCount"] >= 1


def test_kill_pod_restarts_container_once() -> None:
    """A killed container exits (137) and restarts under restartPolicy Always;
    the same kill does not strike the restarted container again."""
    rules = RuleSet()
    p, tl, _ = settle(pod(), T0, T0 + 1)
    kill = rules.kill_pod("web-0", "default")
    rules.pod_kills[-1] = replace(kill, at=T0 + 2)
    d = run(p, T0 + 2.5, tl, rules)
    assert d.status is not None
    cs = d.status["containerStatuses"][0]
    assert cs["restartCount"] == 1
    assert cs["lastState"]["terminated"]["exitCode"] == 137
    assert "running" in cs["state"]
    p = dict(p, status=d.status)
    d2 = run(p, T0 + 3, d.timeline, rules)
    assert (d2.status or p["status"])["containerStatuses"][0]["restartCount"] == 1


def test_init_containers_run_before_app() -> None:
    p = pod(init_containers=[{"name": "init", "image": "busybox"}])
    d = run(p, T0)
    assert d.status is not None
    assert d.status["containerStatuses"][0]["state"]["waiting"]["reason"] == "PodInitializing"
    init = find_condition(d.status["conditions"], "Initialized")
    assert (
        init is not None
        and init["status"] == "False"
        and init["message"] == "containers with incomplete status: [init]"
    )
    p2, _, _ = settle(p, T0, T0 + 5)
    assert p2["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    assert p2["status"]["phase"] == "Running"
    assert cond(p2, "Initialized")["status"] == "True"


def test_deleted_pod_is_stopped_after_scaled_grace_then_finalised() -> None:
    """The kubelet kills containers when the grace period (scaled) ends, writes
    the terminal status and deletes the pod with grace 0."""
    p, tl, _ = settle(pod(), T0, T0 + 1)
    p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:30Z"
    p["metadata"]["deletionGracePeriodSeconds"] = 30
    d = run(p, T0 + 2, tl)
    assert d.delete is False and d.wake_after is not None and abs(d.wake_after - 0.3) < 1e-6
    d2 = run(p, T0 + 2.3, d.timeline)
    assert d2.delete is True and d2.status is not None
    assert d2.status["phase"] == "Succeeded"
    assert "terminated" in d2.status["containerStatuses"][0]["state"]


def test_deleted_pod_that_never_started_is_finalised_at_once() -> None:
    p = pod()
    p["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:30Z"
    d = run(p, T0)
    assert d.delete is True
    assert d.status is not None and d.status["phase"] == "Failed"
    assert d.status["containerStatuses"][0]["state"]["terminated"]["reason"] == "ContainerStatusUnknown"


def test_unchanged_status_is_not_rewritten() -> None:
    p, tl, _ = settle(pod(), T0, T0 + 5)
    assert run(p, T0 + 6, tl).status is None


def test_simulator_restart_rebuilds_from_status() -> None:
    """Without its in-memory timeline (a restarted simulator) the kubelet reads
    container state back from the status and writes nothing new."""
    p, _, _ = settle(pod(), T0, T0 + 5)
    assert run(p, T0 + 10, None).status is None


def test_image_names_and_durations() -> None:
    assert image_ref("nginx") == "docker.io/library/nginx:latest"
    assert image_ref("matrixorigin/matrixone:1.2") == "docker.io/matrixorigin/matrixone:1.2"
    assert image_ref("ghcr.io/x/y:2") == "ghcr.io/x/y:2"
    assert image_id("ghcr.io/x/y:2").startswith("ghcr.io/x/y@sha256:")
    assert [go_duration(s) for s in (10, 80, 300)] == ["10s", "1m20s", "5m0s"]
