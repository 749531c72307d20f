"""What one CNSet reconcile decides from, read once (``CNSetView``), and the decision
its pure steps build (``Draft``).

A round reads the set's spec, its pods, the HAKeeper's view of their stores, the
loads of the CNs whose decision needs them, what the TN lock service says of the
drained ones, and the clock once (the actor's ``read``), then several pure steps
(serving or pooling, MatrixOne stores, drains, load annotations) decide from that
same view. Passing one view keeps them consistent (no step sees a newer clock or a
different pod list than another) and lets a table test build one by hand.

``CNSetView`` is what is (the cache, MatrixOne, the time); ``Desired`` is what the
spec asks for (the config, the pod template and its hash), which the finalizer,
having no pod to make, goes without. A set with no log service yet reads no more
than ``Unserved`` holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.controller.outcome import Later, sooner
from mo_operator.kube.meta.objects import is_deleting, meta_of
from mo_operator.matrixone.admin import AdminError, CNLoad, HAKeeperState, MOAdmin

from ..framework.decision import Decision, Emit, SetCondition
from ..framework.meta import name_of
from ..framework.references import Ref
from ..framework.writes import Intent
from ..steps.deps import LogService, Waiting
from ..steps.podset_input import Cached
from ..steps.rpchealth import Trouble
from .pods import cn_labels_json

Obj = dict[str, Any]


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
    logset: str | None
    """``namespace/name`` of the LogSet the pods' HAKeeper belongs to (none: an external one)."""

    @property
    def name(self) -> str:
        return name_of(self.obj)


@dataclass(frozen=True)
class Unserved:
    """A set whose log service is not there yet: what its status says while it waits."""

    obj: Mapping[str, Any]
    spec: CNSetSpec
    known: Mapping[str, Any]
    """The status as the reconcile found it."""
    waiting: Waiting


@dataclass(frozen=True)
class LockAnswer:
    """What the TN lock service says of a drained CN: whether it may stop and, if
    not, how many transactions remain; or why it could not be asked."""

    moved: bool
    remain: str = ""
    error: AdminError | None = None


@dataclass(frozen=True)
class CNSetView:
    """The set, its pods and their stores as this round saw them."""

    obj: Mapping[str, Any]
    spec: CNSetSpec
    pods: tuple[Mapping[str, Any], ...]
    state: HAKeeperState | None
    """HAKeeper's answer; None when it did not answer (or the set has no pod to ask about)."""
    admin: MOAdmin
    """Where the decision's MatrixOne calls go; never called while deciding."""
    now: float
    drain_timeout: float
    """``storeDrainTimeout`` when the spec gives none."""
    trouble: Trouble | None = None
    """How asking HAKeeper failed this round (``state`` is then None)."""
    want: Desired | None = None
    """What the spec asks for (None for the finalizer, which makes no pod)."""
    loads: Mapping[str, CNLoad | AdminError] = field(default_factory=dict)
    """Per pod name, what MatrixOne answered about its CN's load: asked only of the
    pods whose load annotations are due, whose drain may be over, or, on scale-in, of
    every CN."""
    sessions_known: frozenset[str] = frozenset()
    """The pods whose sessions scale-in chooses by (those the load refresh read)."""
    refresh: frozenset[str] = frozenset()
    """The pods whose load annotations are due (``stats.py``)."""
    locks: Mapping[str, LockAnswer] = field(default_factory=dict)
    """Per pod name, the TN lock service's answer about a drained CN (MatrixOne 1.2 and later)."""
    cache_claims: frozenset[str] = frozenset()
    """The pods' cache volume claims that exist, by name."""
    registration_look: float | None = None
    """When to look again for CNs that run but have not registered (``registration.py``)."""
    conditions: frozenset[str] = frozenset()
    """The condition types the set's status carries."""
    known: Mapping[str, Any] = field(default_factory=dict)
    """The status as the reconcile found it (what the decision's status draft starts from)."""
    missing: tuple[Ref, ...] | None = None
    """The Secrets and ConfigMaps the pods need that do not exist (None: not looked up)."""
    recheck_refs: float = 0.0
    """When a missing reference is looked up again."""
    cached: Cached = field(default_factory=Cached)
    """The shared objects as cached (the set's ConfigMaps, Services, budget), this process's
    applies of them the cache may not show yet, and the cache volume claims with their
    StorageClasses (when ``cacheVolume`` is set)."""
    configs: tuple[Mapping[str, Any], ...] = ()
    """The set's hashed ConfigMaps as cached."""

    @property
    def namespace(self) -> str:
        return meta_of(self.obj).namespace

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

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

    @cached_property
    def live(self) -> list[Mapping[str, Any]]:
        """The pods not being deleted, by name (what the status lists and counts)."""
        return sorted((p for p in self.pods if not is_deleting(p)), key=name_of)

    def by_name(self) -> dict[str, Mapping[str, Any]]:
        return {name_of(p): p for p in self.pods}


@dataclass
class Draft:
    """A CNSet decision as its pure steps build it, in the order they decide; ``done``
    freezes it."""

    intents: list[Intent] = field(default_factory=list)
    conditions: list[SetCondition] = field(default_factory=list)
    events: list[Emit] = field(default_factory=list)
    log: list[str] = field(default_factory=list)
    later: Later | None = None

    def look(self, later: Later) -> None:
        """Look again then (the soonest asked wins, the first on a tie)."""
        self.later = sooner(self.later, later)

    def done(self, status: Mapping[str, Any] | None = None) -> Decision:
        """The decision, with the status fields ``status`` sets."""
        return Decision(
            tuple(self.intents),
            status or {},
            conditions=tuple(self.conditions),
            events=tuple(self.events),
            later=self.later,
            log=tuple(self.log),
        )
