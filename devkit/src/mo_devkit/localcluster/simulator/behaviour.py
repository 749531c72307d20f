"""The plug-in point for what runs inside pods.

The simulator knows nothing of the software in a container; a package that
does (the simulated MatrixOne, later) implements :class:`PodBehaviour` and
the kubelet consults it on every status it computes: whether a started pod
may become ready, whether its process exits (and so crash-loops), which extra
conditions it reports (e.g. the condition a readiness gate waits for) and
which annotations it carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .core.objects import Obj


@dataclass(frozen=True)
class ContainerExit:
    """The process of a main container exits shortly after every start, as a
    program does that refuses its configuration. The kubelet plays it as it
    plays the ``CrashLoop`` rule: ``terminated`` with reason ``Error`` (or
    ``Completed`` for code 0), restarts per ``restartPolicy`` with the crash
    back-off (``CrashLoopBackOff``, ``restartCount``), the previous run in
    ``lastState.terminated``.

    The ``message`` of that record is what a real kubelet would read
    (pkg/kubelet/kuberuntime/kuberuntime_container.go): the termination-message
    file if the process wrote one (its last 4096 bytes), else, when the
    container's ``terminationMessagePolicy`` is ``FallbackToLogsOnError`` and
    the exit code is not 0, the tail of its log (80 lines, 2048 bytes).
    """

    exit_code: int = 1
    #: What the process writes to ``terminationMessagePath`` before it exits.
    message: str = ""
    #: What it prints last (its log), e.g. a panic.
    log: str = ""
    #: The main container it applies to (by name); None: every main container.
    container: str | None = None


@dataclass(frozen=True)
class PodVerdict:
    #: None leaves readiness to the simulator's rules; False holds the
    #: containers not ready (as a failing readiness probe would); True lets
    #: them be ready once the readiness delay has passed.
    ready: bool | None = None
    #: Extra pod conditions (``type``, ``status``, optional ``reason`` and
    #: ``message``) written with the kubelet's status, e.g. a readiness gate.
    conditions: tuple[Mapping[str, Any], ...] = ()
    #: Annotations to set on the pod (None as a value removes one).
    annotations: Mapping[str, str | None] = field(default_factory=dict)
    #: The main container's process exits after each start (None: it keeps running).
    crash: ContainerExit | None = None
    #: How a main container that runs to completion (restartPolicy Never or
    #: OnFailure) ends once its run is over: exit code and termination message
    #: (None: exit 0 without a message). A job's tool reporting its result.
    completion: ContainerExit | None = None


@runtime_checkable
class PodBehaviour(Protocol):
    def judge(self, pod: Obj, node: Obj | None) -> PodVerdict | None:
        """The verdict for a pod the kubelet has started; None for no opinion.

        Called often (on every status computation), so it must be cheap and
        must not block; a behaviour whose answer changes on its own should
        call :meth:`Simulator.resync_pods` so the kubelet asks again.
        """
        ...
