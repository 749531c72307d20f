"""What the kubelet reports for a MatrixOne pod: readiness, the CN store condition, a state note.

Readiness follows what a kubelet would report, since upstream sets no probes and relies
on readiness gates instead: a log store and a TN are ready once they run with a valid
config (a TN still waiting for its HAKeeper is ready, as a container without a probe
is; ``kubectl describe`` shows what it waits for); a CN's container once its store
registered, and its ``matrixorigin.io/cn-store`` condition (the readiness gate of CN
pods, as upstream) only while HAKeeper holds it Working, so a Draining CN leaves its
Services; a proxy once it reaches a HAKeeper. A pod that cannot run never becomes ready.

A TN or CN waits for its HAKeeper (and a CN for a TN) as ``mo-service`` does, not ready,
and exits with a panic once it waited ``Settings.hakeeper_wait_seconds`` (state.py); the
kubelet restarts it and it waits again.

A process that cannot run exits, as MatrixOne does: ``mo-service`` panics on a config it
cannot parse or use (cmd/mo-service/main.go: ``panic("failed to parse config ...")``, exit
code 2), and an image that is not MatrixOne, or a pod it cannot take an identity from,
fails its start (exit code 1). The kubelet then crash-loops the main container. MatrixOne
writes no termination-message file: the problem is what it prints last, which the kubelet
reports as the termination message under ``terminationMessagePolicy:
FallbackToLogsOnError`` (the policy our pod template sets). A missing ConfigMap is not a
crash: a real kubelet never starts the container (its volume cannot be mounted).
"""

from __future__ import annotations

from typing import Final

from mo_devkit.localcluster.simulator.behaviour import ContainerExit, PodVerdict
from mo_devkit.simulated.configfiles import Problem
from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.resolve import Unresolved
from mo_devkit.simulated.state import MOModel
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

STATE_ANNOTATION: Final = "simulated.matrixorigin.io/state"
"""A short note of what the simulated process is doing, for humans (``kubectl describe``)."""


#: Problems that make the process exit, and its exit code (a Go panic exits with 2).
EXIT_CODES: Final[dict[str, int]] = {"InvalidConfig": 2, "BadImage": 1, "NoIdentity": 1}


def crash(problem: Problem) -> ContainerExit | None:
    """How the main container ends for ``problem``; None if it never gets to run."""
    code = EXIT_CODES.get(problem.reason)
    if code is None:
        return None
    return ContainerExit(
        exit_code=code, log=f"{problem.reason}: {problem.message}", container=layout.MAIN_CONTAINER
    )


def _cn_store(status: bool, reason: str, message: str = "") -> dict[str, str]:
    condition = {"type": labels.CN_STORE_READINESS, "status": str(status), "reason": reason}
    if message:
        condition["message"] = message
    return condition


def _waiting_for_hakeeper(instance: Instance, model: MOModel) -> str:
    if isinstance(instance.hakeeper, Unresolved):
        return instance.hakeeper.reason
    logsets = ", ".join(f"{ns}/{name}" for ns, name in instance.hakeeper)
    if instance.component is Component.CN and model.reachable(instance) is not None:
        return f"no TN store has registered in the HAKeeper of LogSet {logsets} yet"
    return f"the HAKeeper of LogSet {logsets} is not up"


def verdict(instance: Instance, model: MOModel, *, cn_store_condition: bool = True) -> PodVerdict:
    """The verdict for ``instance``'s pod given the model's current state.

    Upstream's operator, not MatrixOne, writes ``matrixorigin.io/cn-store``; with
    ``cn_store_condition=False`` the simulation leaves it to our operator likewise.
    """
    cn = instance.component is Component.CN and cn_store_condition
    if instance.problem is not None:
        note = f"{instance.problem.reason}: {instance.problem.message}"
        conditions = (_cn_store(False, instance.problem.reason, instance.problem.message),) if cn else ()
        return PodVerdict(
            ready=False,
            conditions=conditions,
            annotations={STATE_ANNOTATION: note},
            crash=crash(instance.problem),
        )
    if not instance.running:
        conditions = (_cn_store(False, "NotRunning"),) if cn else ()
        return PodVerdict(ready=False, conditions=conditions, annotations={STATE_ANNOTATION: "NotRunning"})
    if instance.component in (Component.LOG, Component.WEBUI):
        return PodVerdict(ready=True, annotations={STATE_ANNOTATION: "Serving"})
    if instance.component is Component.PROXY:
        if model.reachable(instance) is None:
            note = f"WaitingForHAKeeper: {_waiting_for_hakeeper(instance, model)}"
            return PodVerdict(ready=False, annotations={STATE_ANNOTATION: note})
        return PodVerdict(ready=True, annotations={STATE_ANNOTATION: "Serving"})
    record = model.registration(instance)
    if record is None:
        message = _waiting_for_hakeeper(instance, model)
        conditions = (_cn_store(False, "NotRegistered", message),) if cn else ()
        gave_up = model.gave_up(instance)
        return PodVerdict(
            # no readiness probe: a TN's container is ready once it runs, waiting or not
            ready=instance.component is Component.TN and not gave_up,
            conditions=conditions,
            annotations={STATE_ANNOTATION: f"{'GaveUp' if gave_up else 'WaitingForHAKeeper'}: {message}"},
            crash=ContainerExit(
                exit_code=2,
                log=f"panic: wait hakeeper ready timeout: {message}",
                container=layout.MAIN_CONTAINER,
            )
            if gave_up
            else None,
        )
    if not cn:
        return PodVerdict(ready=True, annotations={STATE_ANNOTATION: "Registered"})
    working = record.work_state is WorkState.WORKING
    state = record.work_state.mo_name
    return PodVerdict(
        ready=True,
        conditions=(_cn_store(working, state),),
        annotations={STATE_ANNOTATION: f"Registered: {state}"},
    )
