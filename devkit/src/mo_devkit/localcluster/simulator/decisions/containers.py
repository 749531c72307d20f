"""The simulated container runtime: how one container moves through waiting,
running and terminated, with the kubelet's restart back-off.

The kubelet keeps a :class:`ContainerRun` per container in memory (sub-second
delays cannot be read back from status timestamps, which have one-second
precision); after a restart of the simulator it rebuilds them from status.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from mo_operator.kube.meta.times import format_time, parse_time

from ..behaviour import ContainerExit
from ..core.objects import Obj, name_of, namespace_of, uid_of
from ..rules import Effect, FailureRule, PodKill, RuleSet

#: The kubelet's crash back-off: 10s doubling to 5 minutes, reset after a
#: container ran for 10 minutes (pkg/kubelet/kubelet.go, backOffPeriod).
BACKOFF_INITIAL = 10.0
BACKOFF_MAX = 300.0
BACKOFF_RESET = 600.0
#: How long an image pull fails before the kubelet reports ImagePullBackOff.
PULL_RETRY = 10.0
#: What the kubelet keeps of a termination message: the last 4096 bytes of the
#: file, or the last 80 lines and 2048 bytes of the log
#: (pkg/kubelet/container/runtime.go, MaxContainerTerminationMessage*).
MESSAGE_FILE_BYTES = 4096
MESSAGE_LOG_LINES = 80
MESSAGE_LOG_BYTES = 2048


@dataclass(frozen=True)
class ContainerRun:
    state: str = "waiting"  # waiting | running | terminated
    reason: str = "ContainerCreating"
    message: str = ""
    since: float = 0.0
    started_at: float | None = None
    exit_code: int = 0
    restarts: int = 0
    ready: bool = False
    started: bool = False
    container_id: str = ""
    last: Mapping[str, Any] | None = None
    killed_at: float = 0.0


@dataclass(frozen=True)
class Profile:
    """How the pod spec says this container behaves."""

    name: str
    image: str
    role: str  # init | sidecar | main
    restart_policy: str  # the pod's
    readiness_probe: bool
    startup_probe: bool
    termination_message_policy: str = "File"

    @property
    def completes(self) -> bool:
        return self.role == "init" or (self.role == "main" and self.restart_policy != "Always")

    def restarts_after(self, exit_code: int) -> bool:
        if self.role == "sidecar":
            return True
        if self.role == "init":
            return self.restart_policy != "Never" and exit_code != 0
        if self.restart_policy == "Always":
            return True
        return self.restart_policy == "OnFailure" and exit_code != 0


@dataclass(frozen=True)
class Timing:
    start_delay: float
    ready_delay: float
    run_duration: float
    time_scale: float

    def scaled(self, seconds: float) -> float:
        return seconds * self.time_scale


def profiles(pod: Obj) -> tuple[list[Profile], list[Profile]]:
    """(init containers, main containers) of a pod."""
    spec = pod.get("spec") or {}
    policy = spec.get("restartPolicy") or "Always"

    def mk(c: Mapping[str, Any], role: str) -> Profile:
        return Profile(
            name=str(c.get("name", "")),
            image=str(c.get("image", "")),
            role=role,
            restart_policy=policy,
            readiness_probe=bool(c.get("readinessProbe")),
            startup_probe=bool(c.get("startupProbe")),
            termination_message_policy=str(c.get("terminationMessagePolicy") or "File"),
        )

    inits = [
        mk(c, "sidecar" if c.get("restartPolicy") == "Always" else "init")
        for c in spec.get("initContainers") or []
    ]
    mains = [mk(c, "main") for c in spec.get("containers") or []]
    return inits, mains


def go_duration(seconds: float) -> str:
    """A whole number of seconds as Go's ``time.Duration`` prints it (``1m20s``)."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s}s"
    h, m = divmod(m, 60)
    return f"{h}h{m}m{s}s"


def image_ref(image: str) -> str:
    """The fully qualified reference containerd reports (``docker.io/library/nginx:1.25``)."""
    first, _, rest = image.partition("/")
    if not rest:
        ref = f"docker.io/library/{image}"
    elif "." in first or ":" in first or first == "localhost":
        ref = image
    else:
        ref = f"docker.io/{image}"
    last = ref.rsplit("/", 1)[-1]
    if "@" not in last and ":" not in last:
        ref += ":latest"
    return ref


def image_id(image: str) -> str:
    ref = image_ref(image)
    repo = ref.split("@", 1)[0]
    if ":" in repo.rsplit("/", 1)[-1]:
        repo = repo.rsplit(":", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(ref.encode()).hexdigest()}"


def _container_id(pod: Obj, name: str, restarts: int) -> str:
    return "containerd://" + hashlib.sha256(f"{uid_of(pod)}/{name}/{restarts}".encode()).hexdigest()


def _backoff(run: ContainerRun, timing: Timing) -> float:
    """Seconds before restart number ``run.restarts + 1``: the first restart is
    immediate, then 10s, 20s, ... up to 5 minutes (unscaled)."""
    ran_for = run.since - (run.started_at if run.started_at is not None else run.since)
    if run.restarts == 0 or ran_for >= timing.scaled(BACKOFF_RESET):
        return 0.0
    return float(min(BACKOFF_MAX, BACKOFF_INITIAL * 2 ** (run.restarts - 1)))


def _terminated_record(run: ContainerRun) -> dict[str, Any]:
    record: dict[str, Any] = {
        "exitCode": run.exit_code,
        "reason": run.reason,
        "startedAt": format_time(run.started_at) if run.started_at is not None else None,
        "finishedAt": format_time(run.since),
        "containerID": run.container_id,
    }
    if run.message:
        record["message"] = run.message
    return record


def _tail_bytes(text: str, limit: int) -> str:
    data = text.encode()
    return data[-limit:].decode(errors="ignore") if len(data) > limit else text


def termination_message(crash: ContainerExit, prof: Profile) -> str:
    """The message the kubelet records for a run that ended with ``crash``:
    the termination-message file, else the log tail if the policy allows."""
    if crash.message:
        return _tail_bytes(crash.message, MESSAGE_FILE_BYTES)
    if prof.termination_message_policy == "FallbackToLogsOnError" and crash.exit_code != 0 and crash.log:
        lines = crash.log.splitlines(keepends=True)[-MESSAGE_LOG_LINES:]
        return _tail_bytes("".join(lines), MESSAGE_LOG_BYTES)
    return ""


def _start(run: ContainerRun, pod: Obj, prof: Profile, at: float, restarted: bool) -> ContainerRun:
    restarts = run.restarts + (1 if restarted else 0)
    return replace(
        run,
        state="running",
        reason="",
        message="",
        since=at,
        started_at=at,
        exit_code=0,
        restarts=restarts,
        ready=False,
        started=not prof.startup_probe,
        container_id=_container_id(pod, prof.name, restarts),
    )


def _terminate(run: ContainerRun, at: float, exit_code: int, message: str = "") -> ContainerRun:
    return replace(
        run,
        state="terminated",
        reason="Completed" if exit_code == 0 else "Error",
        message=message,
        since=at,
        exit_code=exit_code,
        ready=False,
        started=False,
    )


@dataclass(frozen=True)
class Step:
    run: ContainerRun
    wake_after: float | None


@dataclass(frozen=True)
class _Env:
    """What a container's transitions depend on besides its own state."""

    prof: Profile
    pod: Obj
    rules: RuleSet
    now: float
    timing: Timing
    allow_ready: bool
    crash: ContainerExit | None
    completion: ContainerExit | None
    #: The failure rule aimed at this container, if any.
    rule: FailureRule | None

    @property
    def effect(self) -> Effect | None:
        return self.rule.effect if self.rule is not None else None


def _waiting(env: _Env, run: ContainerRun) -> ContainerRun | Step:
    """Creating, pulling or backing off: start once the wait is over (or
    move through the image pull failure a rule asks for)."""
    timing = env.timing
    if run.reason in ("ContainerCreating", "PodInitializing"):
        due = run.since + timing.start_delay
    elif run.reason == "CrashLoopBackOff":
        due = run.since + timing.scaled(_backoff(run, timing))
    elif run.reason == "ErrImagePull":
        due = run.since + timing.scaled(PULL_RETRY)
    else:  # ImagePullBackOff: retried when the rules change
        due = run.since
    if env.now < due:
        return Step(run, due - env.now)
    if env.effect is not Effect.IMAGE_PULL_ERROR:
        return _start(run, env.pod, env.prof, due, restarted=run.reason == "CrashLoopBackOff")
    if run.reason == "ImagePullBackOff":
        return Step(run, None)
    if run.reason == "ErrImagePull":
        return replace(
            run, reason="ImagePullBackOff", message=f'Back-off pulling image "{env.prof.image}"', since=due
        )
    ref = image_ref(env.prof.image)
    msg = (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
        f'failed to resolve reference "{ref}": {ref}: not found'
    )
    return replace(run, reason="ErrImagePull", message=msg, since=due)


def _ends(env: _Env, run: ContainerRun, began: float, kill: PodKill | None) -> list[tuple[float, int, str]]:
    """Every way the running process will exit (a kill, a crash rule or
    verdict, its own completion): (when, exit code, termination message)."""
    prof, timing, rule, effect = env.prof, env.timing, env.rule, env.effect
    ends: list[tuple[float, int, str]] = []
    if kill is not None and began < kill.at <= env.now and kill.at > run.killed_at:
        ends.append((kill.at, kill.exit_code, ""))
    if effect is Effect.CRASH_LOOP and rule is not None:
        ends.append((began + max(timing.ready_delay, 0.01), rule.exit_code, ""))
    if env.crash is not None:
        message = termination_message(env.crash, prof)
        ends.append((began + max(timing.ready_delay, 0.01), env.crash.exit_code, message))
    if prof.completes:
        code = rule.exit_code if effect is Effect.FAIL and rule is not None else 0
        message = ""
        if env.completion is not None and prof.role == "main" and effect is not Effect.FAIL:
            code, message = env.completion.exit_code, termination_message(env.completion, prof)
        run_for = 0.0 if prof.role == "init" else timing.run_duration
        ends.append((began + run_for, code, message))
    return ends


def _running(env: _Env, run: ContainerRun) -> ContainerRun | Step:
    """Exits when its first end comes; until then started and ready as its
    probes' delays pass."""
    now, prof, timing = env.now, env.prof, env.timing
    began = run.since if run.started_at is None else run.started_at
    kill = env.rules.last_kill(env.pod, prof.name)
    end = min(_ends(env, run, began, kill), default=None)
    if end is not None and end[0] <= now:
        at, code, message = end
        run = _terminate(run, at, code, message)
        if kill is not None and at == kill.at:
            run = replace(run, killed_at=kill.at)
        return run
    wake = [end[0] - now] if end is not None else []
    startup_at = began + timing.ready_delay
    ready_at = began + (timing.ready_delay if prof.readiness_probe else 0.0)
    # A process that exits at once is never seen ready: a real kubelet's
    # status shows the exit, not the moments it ran. Ready for those
    # moments, a crash-looping pod let a StatefulSet or Deployment roll on.
    crashing = env.effect is Effect.CRASH_LOOP or env.crash is not None
    readyable = (
        env.allow_ready and env.effect is not Effect.NEVER_READY and prof.role != "init" and not crashing
    )
    started = run.started or now >= startup_at
    ready = readyable and started and now >= ready_at
    if not started:
        wake.append(startup_at - now)
    if readyable and not ready:
        wake.append(max(ready_at, startup_at) - now)
    return Step(replace(run, ready=ready, started=started), min(wake) if wake else None)


def _terminated(env: _Env, run: ContainerRun) -> ContainerRun | Step:
    """Stays terminated unless the restart policy restarts it, at once or
    after the crash back-off."""
    prof = env.prof
    if not prof.restarts_after(run.exit_code):
        return Step(replace(run, ready=prof.role == "init" and run.exit_code == 0), None)
    last = _terminated_record(run)
    delay = _backoff(run, env.timing)
    if delay <= 0:
        return _start(replace(run, last=last), env.pod, prof, run.since, restarted=True)
    pod = env.pod
    msg = (
        f"back-off {go_duration(delay)} restarting failed container={prof.name} "
        f"pod={name_of(pod)}_{namespace_of(pod)}({uid_of(pod)})"
    )
    return replace(run, state="waiting", reason="CrashLoopBackOff", message=msg, last=last)


_TRANSITIONS = {"waiting": _waiting, "running": _running, "terminated": _terminated}


def advance(
    run: ContainerRun,
    prof: Profile,
    pod: Obj,
    rules: RuleSet,
    now: float,
    timing: Timing,
    allow_ready: bool,
    crash: ContainerExit | None = None,
    completion: ContainerExit | None = None,
) -> Step:
    """Move one container forward to ``now``; when to look again. ``crash``:
    the process exits shortly after each start (a behaviour's verdict)."""
    rule = rules.rule_for(pod, {"name": prof.name, "image": prof.image})
    env = _Env(prof, pod, rules, now, timing, allow_ready, crash, completion, rule)
    for _ in range(64):  # each pass makes one transition; time may have jumped
        outcome = _TRANSITIONS.get(run.state, _terminated)(env, run)
        if isinstance(outcome, Step):
            return outcome
        run = outcome
    return Step(run, 0.0)


def stop(run: ContainerRun, at: float) -> ContainerRun:
    """The container as the kubelet leaves it when the pod is torn down."""
    if run.state == "running":
        return _terminate(run, at, 0)
    if run.state == "waiting":
        return replace(
            run,
            state="terminated",
            reason="ContainerStatusUnknown",
            message="The container could not be located when the pod was terminated",
            exit_code=137,
            since=at,
            ready=False,
            started=False,
        )
    return run


def container_status(run: ContainerRun, prof: Profile) -> dict[str, Any]:
    """``v1.ContainerStatus`` as the kubelet reports it."""
    if run.state == "running":
        assert run.started_at is not None
        state: dict[str, Any] = {"running": {"startedAt": format_time(run.started_at)}}
    elif run.state == "terminated":
        term = _terminated_record(run)
        state = {"terminated": {k: v for k, v in term.items() if v is not None and v != ""}}
    else:
        waiting: dict[str, Any] = {"reason": run.reason}
        if run.message:
            waiting["message"] = run.message
        state = {"waiting": waiting}
    ran = run.container_id != ""
    out: dict[str, Any] = {
        "name": prof.name,
        "image": prof.image,
        "imageID": image_id(prof.image) if ran else "",
        "ready": run.ready,
        "restartCount": run.restarts,
        "started": run.started,
        "state": state,
        "lastState": {"terminated": dict(run.last)} if run.last else {},
    }
    if ran:
        out["containerID"] = run.container_id
    return out


def run_from_status(status: Mapping[str, Any] | None, now: float) -> ContainerRun:
    """Rebuild a container's run from what the status says (after a restart)."""
    if not status:
        return ContainerRun(since=now)
    state = status.get("state") or {}
    common: dict[str, Any] = {
        "restarts": int(status.get("restartCount") or 0),
        "container_id": str(status.get("containerID") or ""),
        "last": (status.get("lastState") or {}).get("terminated"),
        "ready": bool(status.get("ready")),
        "started": bool(status.get("started")),
    }
    if "running" in state:
        at = parse_time(state["running"].get("startedAt")) or now
        return ContainerRun(state="running", reason="", since=at, started_at=at, **common)
    if "terminated" in state:
        t = state["terminated"]
        return ContainerRun(
            state="terminated",
            reason=str(t.get("reason") or ""),
            message=str(t.get("message") or ""),
            since=parse_time(t.get("finishedAt")) or now,
            started_at=parse_time(t.get("startedAt")),
            exit_code=int(t.get("exitCode") or 0),
            **common,
        )
    w = state.get("waiting") or {}
    return ContainerRun(
        state="waiting",
        reason=str(w.get("reason") or "ContainerCreating"),
        message=str(w.get("message") or ""),
        since=now,
        **common,
    )
