"""``PodVerdict.completion``: a behaviour tells how a run-to-completion container ends
(exit code and termination message), as a job's tool reports its result through
``state.terminated.message`` (pkg/kubelet/kuberuntime: the terminationMessagePath file,
else the log tail under FallbackToLogsOnError when the exit code is not 0)."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.behaviour import ContainerExit, PodVerdict
from mo_devkit.localcluster.simulator.decisions.containers import MESSAGE_FILE_BYTES, Timing
from mo_devkit.localcluster.simulator.decisions.pod_status import PodTimeline, sync_pod
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule, RuleSet

from .factories import pod

T0 = 1_700_000_000.0
TIMING = Timing(start_delay=0.2, ready_delay=0.2, run_duration=0.5, time_scale=0.01)


def settle(p: dict, verdict: PodVerdict | None, rules: RuleSet | None = None, until: float = 5.0) -> dict:
    now = T0
    timeline: PodTimeline | None = None
    for _ in range(200):
        d = sync_pod(
            p,
            timeline=timeline,
            now=now,
            rules=rules or RuleSet(),
            verdict=verdict,
            timing=TIMING,
            host_ip="172.18.0.2",
            pod_ip="10.244.0.7",
        )
        if d.status is not None:
            p = dict(p, status=d.status)
        timeline = d.timeline
        if d.wake_after is None or now + d.wake_after > T0 + until:
            break
        now += max(d.wake_after, 0.001)
    return p


def tool(**kw: object) -> dict:
    containers = [{"name": "br", "image": "matrixorigin/mobr:1.0.0-rc1", **kw}]
    return pod("backup-x", restart_policy="Never", containers=containers)


def terminated(p: dict, i: int = 0) -> dict:
    return p["status"]["containerStatuses"][i]["state"]["terminated"]


def test_a_completing_container_exits_with_the_verdicts_code_and_file_message() -> None:
    p = settle(tool(), PodVerdict(completion=ContainerExit(exit_code=0, message="id-1,1024,b/p\n")))
    assert p["status"]["phase"] == "Succeeded"
    term = terminated(p)
    assert term["exitCode"] == 0 and term["reason"] == "Completed" and term["message"] == "id-1,1024,b/p\n"
    started, finished = term["startedAt"], term["finishedAt"]
    assert started <= finished


def test_a_failing_run_reports_its_log_only_under_fallback_to_logs_on_error() -> None:
    failure = PodVerdict(completion=ContainerExit(exit_code=1, log="line 1\nmo_br: cannot connect\n"))
    p = settle(tool(terminationMessagePolicy="FallbackToLogsOnError"), failure)
    assert p["status"]["phase"] == "Failed"
    term = terminated(p)
    assert term["exitCode"] == 1 and term["reason"] == "Error"
    assert term["message"] == "line 1\nmo_br: cannot connect\n"
    quiet = settle(tool(), failure)  # policy File and no file written: no message
    assert "message" not in terminated(quiet) and terminated(quiet)["exitCode"] == 1


def test_a_long_message_keeps_its_last_4096_bytes() -> None:
    text = "x" * 5000 + "END"
    term = terminated(settle(tool(), PodVerdict(completion=ContainerExit(exit_code=0, message=text))))
    assert len(term["message"].encode()) == MESSAGE_FILE_BYTES and term["message"].endswith("END")


def test_a_fail_rule_wins_over_the_verdict_and_other_containers_are_untouched() -> None:
    rules = RuleSet()
    rules.add(FailureRule(Effect.FAIL, name="backup-*", exit_code=7))
    verdict = PodVerdict(completion=ContainerExit(exit_code=0, message="ok", container="br"))
    p = settle(tool(), verdict, rules)
    assert terminated(p)["exitCode"] == 7 and "message" not in terminated(p)

    two = pod(
        "backup-y",
        restart_policy="Never",
        containers=[{"name": "br", "image": "mobr"}, {"name": "side", "image": "busybox"}],
    )
    p = settle(two, verdict)
    assert terminated(p, 0)["message"] == "ok"
    assert terminated(p, 1)["exitCode"] == 0 and "message" not in terminated(p, 1)


def test_a_container_that_keeps_running_ignores_a_completion() -> None:
    always = pod("server-0", restart_policy="Always")
    p = settle(always, PodVerdict(completion=ContainerExit(exit_code=3, message="never")))
    assert p["status"]["phase"] == "Running"
    assert "running" in p["status"]["containerStatuses"][0]["state"]
