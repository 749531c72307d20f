"""The skeleton every component set's controller shares: one reconcile of a set
of MatrixOne pods, in steps, each a pure function of what the round read.

1. admit the spec (the webhooks' rules: a bad spec becomes a condition);
2. find the log service, or say in ``Ready`` what the set waits for;
3. compute the desired objects: the one part each kind writes itself, from
   a ``SetInput`` (podset_input.py: its labels, selector and immutable
   ConfigMap, and ``SetInput.pod_template``, which every kind's pods start
   from);
4. write what differs of them (``desired_intents``: the budget, the objects as
   the kind's ``Workload`` writes them, the metric Service; ``shared_intents``
   for a set with no workload) and read the roll (``Workload.rollout``; for a
   StatefulSet its volume growth and the forced rollback of pods stuck on an
   outdated revision, ``rollbacks``);
5. delete the hashed ConfigMaps no pod needs once the roll is complete and
   nothing else is planned (``unused_deletions``);
6. report: the kind's own status fields (``PodSetActor.report``), then
   ``Ready`` and ``UpToDate`` in the kind's words (``Readiness``,
   ``report_rollout``), into a ``StatusDraft``.

As CloudNativePG composes its controllers from reusable sub-reconcilers, each
step is a function a controller can call alone, and ``PodSetActor`` runs them
in order for a set that needs nothing else (TN, proxy): such a kind names its
``component``, ``readiness`` and ``workload`` (``STATEFUL`` or
``STATELESS``), the ``services`` it makes and writes ``desired`` (its objects
besides the config). ``PodSetActor.read`` does every read once (a ``SetView``:
the log service, the references missing, the set's objects as ``Cached``, its
pods and claims), and ``decide`` runs the steps over it.

A set with more to do calls the steps from its own decision:

- the LogSet (logset/decide.py, over what logset/actor.py reads) records its
  HAKeeper bootstrap decision before step 2 (it is the log service, so it waits
  for none) and holds its S3 path (BucketClaim) before step 4; its ``desired``
  builds a ``SetInput`` on ``hashed_config`` (with the log service's own
  renderer), beside its own bootstrap and gossip ConfigMaps; it takes steps 4 and
  5 (``desired_intents``, ``rollbacks``, ``unused_deletions``), reports
  HAKeeper's answer and its roll, then judges failover;
- the CNSet (cnset/decide.py, over what cnset/actor.py reads) makes its pods
  itself (no workload): it takes steps 2, 3 (``served_input``, its pod template
  with its readiness gate), ``shared_intents`` for its ConfigMap and Services,
  and 5 once no pod is left to create; it reads its roll from its pods and
  template hash and reports it with ``report_rollout`` beside its stores (a
  pooling set, which never rolls, words its own conditions).

The WebUI (webui.py) is no set of MatrixOne pods (no log service, its config a
Secret holding a credential, no disruption budget or metric Service): it applies
its own objects, compared as the skeleton compares them (``Cached``), and reports
its ``STATELESS`` roll with ``report_rollout``.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, TypeVar

from mo_operator.api.common import PodSet, SharedStorageProvider
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import meta_of
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.decision import Decision
from ..framework.desired import stamped
from ..framework.draft import Drafting, StatusDraft
from ..framework.env import Env
from ..framework.meta import name_of, namespace_of, uid_of
from ..framework.references import report_missing
from ..framework.writes import Intent, Step, Writes, applies, writes_workload
from ..specs import deployments, statefulsets
from ..specs.configmaps import unused_deletions
from ..specs.disruption import desired_budget, unwanted_budget
from ..specs.prometheus import desired_metric_service, unwanted_metric_service
from ..specs.statefulsets import Rollout
from .deps import Waiting, resolve
from .expansion import replace_step, stateful_intents, storage_classes
from .podset_input import (
    Cached,
    SetInput,
    SetView,
    has_started,
    input_of,
    pod_set_references,
    shared_storage_of,
)
from .status import NOT_STARTED, Readiness, first_status, report_rollout

Obj = dict[str, Any]
S = TypeVar("S", bound=PodSet)
Desired = list[tuple[Resource, Obj]]
"""A set's desired objects, in the order they are written (ConfigMaps before the workload)."""


class RolloutOf(Protocol):
    """Where a workload's roll stands, from the workload as cached and its pods."""

    def __call__(
        self,
        workload: Mapping[str, Any] | None,
        pods: Iterable[Mapping[str, Any]],
        /,
        *,
        now: float,
        stall_seconds: float,
    ) -> Rollout: ...


class SyncOf(Protocol):
    """The writes that make the cluster hold a set's ``desired`` objects."""

    def __call__(
        self,
        draft: Drafting,
        desired: Sequence[tuple[Resource, Obj]],
        cached: Cached,
        replace: Callable[[Obj, str], Step],
        /,
    ) -> list[Intent]: ...


def _plain_intents(
    draft: Drafting,
    desired: Sequence[tuple[Resource, Obj]],
    cached: Cached,
    replace: Callable[[Obj, str], Step],
) -> list[Intent]:
    return list(applies(desired, cached.get, cached.applied))


def _stateful_intents(
    draft: Drafting,
    desired: Sequence[tuple[Resource, Obj]],
    cached: Cached,
    replace: Callable[[Obj, str], Step],
) -> list[Intent]:
    return stateful_intents(draft, desired, cached.get, cached.pvcs, cached.classes, cached.applied, replace)


@dataclass(frozen=True)
class Workload:
    """How a set's pods are run: which workload kind, how it is synced (on a plan, or
    as intents), how its roll is read."""

    resource: Resource
    intents: SyncOf
    rollout: RolloutOf
    forces_rollback: bool
    """Whether pods stuck on an outdated revision are deleted (a StatefulSet may wait on them forever)."""


STATEFUL = Workload(r.STATEFULSETS, _stateful_intents, statefulsets.rollout, forces_rollback=True)
"""A StatefulSet (log service, TN): volumes grow, stuck pods are replaced."""
STATELESS = Workload(r.DEPLOYMENTS, _plain_intents, deployments.rollout, forces_rollback=False)
"""A Deployment (proxy): applied as it is; the Deployment controller replaces pods itself."""


def desired_intents(
    draft: Drafting,
    obj: Mapping[str, Any],
    workload: Workload,
    component: Component,
    spec: PodSet,
    desired: Sequence[tuple[Resource, Obj]],
    cached: Cached,
    replace: Callable[[Obj, str], Step],
) -> list[Intent]:
    """The writes that make the cluster hold the set's PodDisruptionBudget (before its
    pods, so none is ever unguarded), ``desired`` (as its ``workload`` writes them) and
    its metric Service, each only where the cache does not hold it as desired."""
    return _guarded(obj, component, spec, cached, workload.intents(draft, desired, cached, replace))


def shared_intents(
    obj: Mapping[str, Any],
    component: Component,
    spec: PodSet,
    desired: Sequence[tuple[Resource, Obj]],
    cached: Cached,
) -> list[Intent]:
    """``desired_intents`` of a set with no workload (its pods are its own): the applies
    of ``desired`` the cache does not hold, between the budget and the metric Service."""
    return _guarded(obj, component, spec, cached, applies(desired, cached.get, cached.applied))


def _guarded(
    obj: Mapping[str, Any], component: Component, spec: PodSet, cached: Cached, writes: Sequence[Intent]
) -> list[Intent]:
    """``writes`` after the budget's and before the metric Service's."""
    intents: list[Intent] = []
    set_name = name_of(obj)
    budget = desired_budget(obj, component, spec)
    if budget is not None:
        intents += applies([(r.PDBS, budget)], cached.get, cached.applied)
    elif gone := unwanted_budget(
        obj, component, cached.get(r.PDBS, names.workload_name(component, set_name))
    ):
        intents.append(gone)
    intents += writes
    metric = desired_metric_service(obj, component, spec)
    if metric is not None:
        intents += applies([(r.SERVICES, metric)], cached.get, cached.applied)
    elif gone := unwanted_metric_service(
        obj, cached.get(r.SERVICES, names.metric_service_name(component, set_name))
    ):
        intents.append(gone)
    return intents


class PodSetActor(ABC):
    """The Actor of a set that needs only the skeleton's steps (see the module doc):
    ``read`` gathers a ``SetView``, ``decide`` turns it into a ``Decision``, pure."""

    model: ClassVar[type[Any]]
    """The kind admitted (its model, and its webhook rules)."""
    component: ClassVar[Component]
    readiness: ClassVar[Readiness]
    workload: ClassVar[Workload]

    def __init__(self, env: Env) -> None:
        self.env = env

    async def observe(self, ctx: Context) -> Writes | None:
        return self.decide(await self.read(ctx)).act(ctx, self.env.client, self.env.unseen)

    async def read(self, ctx: Context) -> SetView:
        """The set as admitted and its log service; once it has one, the references
        its pods miss (asked of the API server), and its objects, pods and claims (and
        the StorageClasses, for a stateful set) from the cache."""
        env, obj = self.env, ctx.obj
        spec: PodSet = admit(self.model, obj).spec
        known = dict(ctx.status)
        service = resolve(env.caches, obj, spec, started=has_started(ctx))
        now = env.clock()
        if isinstance(service, Waiting):
            return SetView(obj, spec, known, service, now)
        storage: SharedStorageProvider | TerminalError | None
        try:
            storage = shared_storage_of(service)
        except TerminalError as e:
            storage = e
        missing, lookup = None, env.references
        if lookup is not None and not isinstance(storage, TerminalError):
            refs = pod_set_references(spec, storage, "the log service's sharedStorage")
            missing = tuple(await lookup.missing(ctx.namespace, refs))
        caches, namespace, name = env.caches, ctx.namespace, ctx.name
        selector = labels.sub_resource_labels(self.component, name, namespace)
        objects: dict[tuple[str, str], Mapping[str, Any]] = {}
        for res, owned in self.owned(name):
            found = caches.get(res, namespace, owned)
            if found is not None:
                objects[(res.kind, owned)] = found
        configs = tuple(caches.list(r.CONFIGMAPS, namespace, selector))
        objects.update((("ConfigMap", name_of(c)), c) for c in configs)
        stateful = self.workload.resource is r.STATEFULSETS
        cached = Cached(
            objects,
            env.unseen.of_owner(uid_of(obj)),
            tuple(caches.list(r.PVCS, namespace, selector)) if stateful else (),
            storage_classes(env) if stateful else {},
        )
        return SetView(
            obj,
            spec,
            known,
            service,
            now,
            env.settings.rollout_stall_seconds,
            storage,
            missing,
            lookup.ttl if lookup is not None else 0.0,
            cached,
            configs,
            tuple(caches.list(r.PODS, namespace, selector)),
            functools.partial(statefulsets.rollback_step, ctx, env.client),
            functools.partial(replace_step, ctx, env.client),
        )

    def owned(self, name: str) -> list[tuple[Resource, str]]:
        """The set's objects by deterministic name (its hashed ConfigMaps are found by
        label): the workload, its budget and metric Service, and the kind's Services."""
        workload = names.workload_name(self.component, name)
        return [
            (self.workload.resource, workload),
            (r.PDBS, workload),
            (r.SERVICES, names.metric_service_name(self.component, name)),
            *((r.SERVICES, service) for service in self.services(name)),
        ]

    @classmethod
    def decide(cls, view: SetView) -> Decision:
        """The set's writes and status from ``view``: pure. A set waiting for its log
        service reports every field it will and writes nothing; a set that has one
        writes what differs of its budget, config, objects and metric Service, replaces
        pods stuck on an outdated revision, collects configs no pod needs once rolled
        with nothing else to do, and reports its roll."""
        obj, spec, component = view.obj, view.spec, cls.component
        draft = StatusDraft(
            view.known,
            generation=meta_of(obj).generation,
            namespace=namespace_of(obj),
        )
        service = view.service
        if isinstance(service, Waiting):
            draft.set_condition("Ready", False, service.reason, service.message)
            cls._first_status(draft, obj, spec.replicas)
            return draft.decision()
        storage = view.storage
        given = input_of(obj, component, spec, service, lambda: _storage(storage))
        if view.missing is not None:
            report_missing(draft, view.missing, view.recheck_refs)
        desired = [(r.CONFIGMAPS, stamped(given.config)), *cls.desired(given)]
        workload = cls.workload
        intents = desired_intents(
            draft, obj, workload, component, spec, desired, view.cached, view.replace_statefulset
        )
        cached_workload = view.cached.get(workload.resource, names.workload_name(component, name_of(obj)))
        roll = workload.rollout(cached_workload, view.pods, now=view.now, stall_seconds=view.stall_seconds)
        if workload.forces_rollback:
            intents += statefulsets.rollbacks(roll, view.replace_pod)
        if roll.complete and not intents:
            base = names.config_map_base_name(component, name_of(obj))
            intents += unused_deletions(obj, base, view.configs, view.pods, [name_of(d) for _, d in desired])
        cls.report(draft, view, roll, given.selector)
        report_rollout(
            draft, roll, spec.replicas, cls.readiness, pending=writes_workload(intents), pods=view.pods
        )
        return draft.decision(intents)

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True

    @classmethod
    def _first_status(cls, draft: Drafting, obj: Mapping[str, Any], replicas: int) -> None:
        """Waiting for its log service, the set still reports every field it will."""
        selector = labels.sub_resource_labels(cls.component, name_of(obj), namespace_of(obj))
        first_status(draft, cls.first_fields(obj, selector), *NOT_STARTED, replicas=replicas)

    @classmethod
    @abstractmethod
    def services(cls, name: str) -> list[str]:
        """The names of the Services ``desired`` makes."""

    @classmethod
    @abstractmethod
    def desired(cls, given: SetInput[Any]) -> Desired:
        """The set's objects besides its config (written first, since its pods mount
        it), stamped, in the order they are written."""

    @classmethod
    @abstractmethod
    def first_fields(cls, obj: Mapping[str, Any], selector: Mapping[str, str]) -> Mapping[str, Any]:
        """The kind's own status fields with no pod yet."""

    @classmethod
    @abstractmethod
    def report(cls, draft: Drafting, view: SetView, roll: Rollout, selector: Mapping[str, str]) -> None:
        """The kind's own status fields, set before ``Ready`` and ``UpToDate``."""


def _storage(storage: SharedStorageProvider | TerminalError | None) -> SharedStorageProvider | None:
    if isinstance(storage, TerminalError):
        raise storage
    return storage
