"""The plug-in point for what runs inside pods.

The simulator knows nothing of the software in a container; a package that
does (the simulated MatrixOne, later) implements :class:`PodBehaviour` and
the kubelet consults it on every status it computes: whether a started pod
may become ready, which extra conditions it reports (e.g. the condition a
readiness gate waits for) and which annotations it carries.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from .core.objects import Obj


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


@runtime_checkable
class PodBehaviour(Protocol):
    def judge(self, pod: Obj, node: Obj | None) -> PodVerdict | None:
        """The verdict for a pod the kubelet has started; None for no opinion.

        Called often (on every status computation), so it must be cheap and
        must not block; a behaviour whose answer changes on its own should
        call :meth:`Simulator.resync_pods` so the kubelet asks again.
        """
        ...
