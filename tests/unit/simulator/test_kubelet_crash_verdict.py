"""A behaviour's verdict can make a main container's process exit after each
start; the kubelet plays it as a crash loop, with the termination message a
real kubelet would record.

Kubernetes: a container that exits is restarted per restartPolicy with an
exponential back-off (10s doubling to 5 minutes) shown as CrashLoopBackOff
(https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-restarts);
the message of ``terminated`` is the termination-message file, or with
``terminationMessagePolicy: FallbackToLogsOnError`` the tail of the log when
the file is empty and the exit code is not 0, at most 80 lines and 2048 bytes
(https://kubernetes.io/docs/tasks/debug/debug-application/determine-reason-pod-failure/#customizing-the-termination-message;
pkg/kubelet/kuberuntime/kuberuntime_container.go).
"""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.behaviour import ContainerExit, PodVerdict
from mo_devkit.localcluster.simulator.decisions.pod_status import PodTimeline
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule, RuleSet

from .factories import pod
from .test_kubelet_status import T0, cond, run, settle


def status_of_app(p: dict[str, Any]) -> dict[str, Any]:
    (cs,) = p["status"]["containerStatuses"]
    return dict(cs)


def without_message(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != "message"}


def test_a_crash_verdict_is_played_exactly_as_the_crash_loop_rule() -> None:
    """Same restarts, back-off, states and phase as the CrashLoop rule with the
    same exit code; only the message differs."""
    rules = RuleSet()
    rules.add(FailureRule(Effect.CRASH_LOOP, name="web-*", exit_code=2))
    by_rule, _, rule_decision = settle(pod(), T0, T0 + 2.0, rules)
    verdict = PodVerdict(crash=ContainerExit(exit_code=2, message="InvalidConfig: no [fileservice]"))
    by_verdict, _, verdict_decision = settle(pod(), T0, T0 + 2.0, verdict=verdict)
    a, b = status_of_app(by_rule), status_of_app(by_verdict)
    assert b["restartCount"] == a["restartCount"] >= 3
    assert b["state"] == a["state"]
    assert without_message(b["lastState"]["terminated"]) == a["lastState"]["terminated"]
    assert "message" not in a["lastState"]["terminated"]
    assert b["lastState"]["terminated"]["message"] == "InvalidConfig: no [fileservice]"
    assert b["lastState"]["terminated"]["reason"] == "Error"
    assert b["lastState"]["terminated"]["exitCode"] == 2
    assert by_verdict["status"]["phase"] == by_rule["status"]["phase"] == "Running"
    assert cond(by_verdict, "Ready")["status"] == "False"
    assert verdict_decision.wake_after == rule_decision.wake_after


def backing_off(verdict: PodVerdict) -> tuple[dict[str, Any], PodTimeline, float]:
    """The pod the first time the kubelet leaves its container waiting in
    CrashLoopBackOff, the timeline and the time."""
    p, now, tl = pod(), T0, None
    for _ in range(200):
        d = run(p, now, tl, verdict=verdict)
        if d.status is not None:
            p = dict(p, status=d.status)
        tl = d.timeline
        if "waiting" in status_of_app(p)["state"] and status_of_app(p)["restartCount"] > 0:
            return p, tl, now
        assert d.wake_after is not None
        now += max(d.wake_after, 0.001)
    raise AssertionError("never backed off")


def test_the_back_off_shows_in_the_waiting_state() -> None:
    p, _, _ = backing_off(PodVerdict(crash=ContainerExit(exit_code=1, message="bad image")))
    cs = status_of_app(p)
    waiting = cs["state"]["waiting"]
    assert waiting["reason"] == "CrashLoopBackOff"
    assert waiting["message"].startswith("back-off 10s restarting failed container=app")
    assert cs["lastState"]["terminated"]["message"] == "bad image"
    assert cs["ready"] is False and cond(p, "Ready")["status"] == "False"


def test_restart_policy_never_fails_the_pod_with_the_message_in_state() -> None:
    verdict = PodVerdict(crash=ContainerExit(exit_code=3, message="refused"))
    p, _, d = settle(pod(restart_policy="Never"), T0, T0 + 5, verdict=verdict)
    assert p["status"]["phase"] == "Failed"
    terminated = status_of_app(p)["state"]["terminated"]
    assert (terminated["exitCode"], terminated["reason"], terminated["message"]) == (3, "Error", "refused")
    assert d.wake_after is None


def test_the_log_is_the_message_only_with_fallback_to_logs_on_error() -> None:
    log = "".join(f"line {i}\n" for i in range(100))
    verdict = PodVerdict(crash=ContainerExit(exit_code=2, log=log))
    plain, _, _ = settle(pod(), T0, T0 + 1, verdict=verdict)
    assert "message" not in status_of_app(plain)["lastState"]["terminated"]
    fallback = pod(
        containers=[
            {"name": "app", "image": "nginx:1.25", "terminationMessagePolicy": "FallbackToLogsOnError"}
        ]
    )
    p, _, _ = settle(fallback, T0, T0 + 1, verdict=verdict)
    message = status_of_app(p)["lastState"]["terminated"]["message"]
    assert message == "".join(f"line {i}\n" for i in range(20, 100))  # the last 80 lines
    clean_exit = PodVerdict(crash=ContainerExit(exit_code=0, log=log))
    p, _, _ = settle(fallback, T0, T0 + 1, verdict=clean_exit)
    terminated = status_of_app(p)["lastState"]["terminated"]
    assert terminated["reason"] == "Completed" and "message" not in terminated


def test_messages_are_cut_to_what_the_kubelet_keeps() -> None:
    long_file = "x" * 5000 + "END"
    p, _, _ = settle(pod(), T0, T0 + 1, verdict=PodVerdict(crash=ContainerExit(message=long_file)))
    message = status_of_app(p)["lastState"]["terminated"]["message"]
    assert len(message.encode()) == 4096 and message.endswith("END")
    fallback = pod(
        containers=[
            {"name": "app", "image": "nginx:1.25", "terminationMessagePolicy": "FallbackToLogsOnError"}
        ]
    )
    long_log = "y" * 3000 + "\npanic: END"
    p, _, _ = settle(fallback, T0, T0 + 1, verdict=PodVerdict(crash=ContainerExit(log=long_log)))
    message = status_of_app(p)["lastState"]["terminated"]["message"]
    assert len(message.encode()) == 2048 and message.endswith("panic: END")


def test_a_crash_aimed_at_another_container_leaves_this_one_running() -> None:
    verdict = PodVerdict(crash=ContainerExit(message="no", container="sidecar"))
    p, _, _ = settle(pod(), T0, T0 + 2, verdict=verdict)
    cs = status_of_app(p)
    assert cs["restartCount"] == 0 and "running" in cs["state"] and cs["ready"] is True
    aimed = PodVerdict(crash=ContainerExit(message="yes", container="app"))
    p, _, _ = settle(pod(), T0, T0 + 2, verdict=aimed)
    assert status_of_app(p)["lastState"]["terminated"]["message"] == "yes"


def test_a_restarted_simulator_rebuilds_the_crash_loop_from_status() -> None:
    """Without its in-memory timeline the kubelet reads the back-off and the
    last termination (message included) back from the status: nothing to rewrite."""
    verdict = PodVerdict(crash=ContainerExit(exit_code=2, message="boom"))
    p, _, now = backing_off(verdict)
    assert run(p, now, None, verdict=verdict).status is None


def test_lifting_the_crash_lets_the_container_run() -> None:
    verdict = PodVerdict(crash=ContainerExit(exit_code=2, message="boom"))
    p, _, _ = settle(pod(), T0, T0 + 0.5, verdict=verdict)
    p, _, _ = settle(p, T0 + 0.5, T0 + 10, verdict=None)
    cs = status_of_app(p)
    assert "running" in cs["state"] and cs["ready"] is True
    assert cs["lastState"]["terminated"]["message"] == "boom"
