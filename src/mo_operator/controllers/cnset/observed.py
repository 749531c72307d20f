"""What one CNSet reconcile round works from, read once and handed to every step.

A round reads the set's spec, its pods, the HAKeeper's view of their stores and
the clock once, then several steps (services, serving or pooling, MatrixOne
stores, drains, status) decide from that same reading. Passing one object
keeps them consistent (no step sees a newer clock or a different pod list than
another) and keeps their signatures short.

``Observed`` is what is (the cache, MatrixOne, the time), shared with the
finalizer, which has no template to build; ``Desired`` is what the spec asks
for (the config, the pod template and its hash).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.matrixone.admin import HAKeeperState, MOAdmin

from ..framework.meta import name_of
from ..framework.writes import Writes
from ..steps.deps import LogService
from ..steps.rpchealth import Trouble
from .pods import cn_labels_json

Obj = dict[str, Any]


@dataclass(frozen=True)
class Observed:
    """The set, its pods and their stores as this round saw them, and where its writes go."""

    ctx: Context
    spec: CNSetSpec
    pods: Sequence[Mapping[str, Any]]
    state: HAKeeperState | None
    """HAKeeper's answer; None when it did not answer (or the set has no pod to ask about)."""
    admin: MOAdmin
    now: float
    plan: Writes
    drain_timeout: float
    """``storeDrainTimeout`` when the spec gives none."""
    trouble: Trouble | None = None
    """How asking HAKeeper failed this round (``state`` is then None)."""

    @property
    def client_fault(self) -> bool:
        """The operator's own client cannot use HAKeeper's answers: fall back on the pods."""
        return self.trouble is not None and self.trouble.client_fault

    @property
    def replicas(self) -> int:
        return self.spec.replicas

    @cached_property
    def store_labels(self) -> dict[str, tuple[str, ...]]:
        """The set's ``cnLabels`` as HAKeeper store labels (each CN's store carries them)."""
        return {
            item.key: tuple(item.values or ()) for item in self.spec.cn_labels or () if item.key is not None
        }

    @cached_property
    def cn_labels_annotation(self) -> str:
        """The ``matrixone.cloud/cn-label`` annotation of the set's pods."""
        return cn_labels_json(self.spec)

    def by_name(self) -> dict[str, Mapping[str, Any]]:
        return {name_of(p): p for p in self.pods}


@dataclass(frozen=True)
class Desired:
    """What the spec asks for this round: the objects every pod shares."""

    obj: Mapping[str, Any]
    spec: CNSetSpec
    service: LogService
    selector: Mapping[str, str]
    obj_labels: Mapping[str, str]
    config: Obj
    template: Obj
    digest: str
    """The template's hash: a pod labelled with another one is outdated."""
