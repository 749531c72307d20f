"""The skeleton every component set's controller shares: one reconcile of a set
of MatrixOne pods, in steps.

1. admit the spec (the webhooks' rules: a bad spec becomes a condition);
2. find the log service, or say in ``Ready`` what the set waits for
   (``wait_for_log_service``);
3. compute the desired objects: the one part each kind writes itself, from
   a ``SetInput`` (its labels, selector and immutable ConfigMap, and
   ``SetInput.pod_template``, which every kind's pods start from), which
   ``served_input`` makes for a set that runs against the log service
   (``service_config`` renders its config; ``hashed_config`` takes another
   renderer);
4. sync them (``sync_desired``: server-side apply of what differs and the
   metric Service) and read the roll (``sync_workload``: the workload's roll
   from it and its pods, ``read_roll``, and for a StatefulSet its volume growth
   and the forced rollback of pods stuck on an outdated revision);
5. delete the hashed ConfigMaps no pod needs once the roll is complete and
   nothing else is planned (``collect_configs``);
6. report: the kind's own status fields (``PodSetActor.report``), then
   ``Ready`` and ``UpToDate`` in the kind's words (``Readiness``,
   ``report_rollout``).

As CloudNativePG composes its controllers from reusable sub-reconcilers, each
step is a function a controller can call alone, and ``PodSetActor`` runs them
in order for a set that needs nothing else (TN, proxy): such a kind names its
``component``, ``readiness`` and ``workload`` (``STATEFUL`` or
``STATELESS``), the ``services`` it makes and writes ``desired`` (its objects
besides the config). ``PodSetActor.read`` does every read once (a ``SetView``:
the log service, the references missing, the set's objects as ``Cached``, its
pods and claims), and ``decide`` runs the steps' pure variants over it
(``desired_intents``, ``Workload.intents``, ``rollbacks``, ``unused_deletions``,
the reports into a ``StatusDraft``); the steps' plan-taking entry points, which
the LogSet and the CNSet call, wrap those variants.

A set with more to do calls the steps from its own ``observe``:

- the LogSet (logset/decide.py, over what logset/actor.py reads) records its
  HAKeeper bootstrap decision before step 2 (it is the log service, so it waits
  for none) and holds its S3 path (BucketClaim) before step 4; its ``desired``
  builds a ``SetInput`` on ``hashed_config`` (with the log service's own
  renderer), beside its own bootstrap and gossip ConfigMaps; it takes steps 4 and
  5 as their pure variants (``desired_intents``, ``rollbacks``,
  ``unused_deletions``), reports HAKeeper's answer and its roll, then judges
  failover;
- the CNSet (cnset/actor.py) makes its pods itself (no workload): it uses
  steps 2, 3 (``served_input``, its pod template with its readiness gate),
  ``sync_desired`` for its ConfigMap and Services, and 5 with
  ``rolled`` meaning "no pod left to create"; it reads its roll from its
  pods and template hash and reports it with ``report_rollout`` beside its
  stores (a pooling set, which never rolls, words its own conditions).

The WebUI (webui.py) is no set of MatrixOne pods (no log service, its config a
Secret holding a credential, no disruption budget or metric Service): it applies
its own objects, compared as the skeleton compares them (``Cached``), and reports
its ``STATELESS`` roll with ``report_rollout``.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import ValidationError

from mo_operator.api.base import dump, parse
from mo_operator.api.common import PodSet, SharedStorageProvider
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import thaw
from mo_operator.kube.meta.objects import meta_of
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.decision import Decision
from ..framework.desired import stamped
from ..framework.draft import Drafting, StatusDraft
from ..framework.env import Env
from ..framework.meta import name_of, namespace_of, set_labels, uid_of
from ..framework.references import Ref, report_missing, spec_references
from ..framework.unseen import Applied, Key
from ..framework.writes import Intent, Step, Writes, applies, writes_workload
from ..specs import deployments, statefulsets
from ..specs.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal, unused_deletions
from ..specs.disruption import desired_budget, sync_disruption_budget, unwanted_budget
from ..specs.podtemplate import PodTemplateInput, pod_template, restart_stamp
from ..specs.prometheus import desired_metric_service, sync_metric_service, unwanted_metric_service
from ..specs.statefulsets import Rollout
from .deps import LogService, Waiting, resolve
from .expansion import replace_step, stateful_intents, storage_classes, sync_stateful
from .status import NOT_STARTED, UP_TO_DATE, Readiness, first_status, report_rollout

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


def _sync_plain(ctx: Context, env: Env, desired: Sequence[tuple[Resource, Obj]], plan: Writes) -> None:
    plan.sync(env, desired)


@dataclass(frozen=True)
class Cached:
    """What a set's decision compares its desired objects with: the set's objects as
    cached, by kind and name (its ConfigMaps, workload, Services and budget), this
    process's applies the cache may not show yet, and, for a stateful set, its claims
    and the StorageClasses by name."""

    objects: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    applied: Mapping[Key, Applied] = field(default_factory=dict)
    pvcs: tuple[Mapping[str, Any], ...] = ()
    classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def get(self, resource: Resource, name: str) -> Mapping[str, Any] | None:
        return self.objects.get((resource.kind, name))


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
    sync: Callable[[Context, Env, Sequence[tuple[Resource, Obj]], Writes], None]
    intents: SyncOf
    rollout: RolloutOf
    forces_rollback: bool
    """Whether pods stuck on an outdated revision are deleted (a StatefulSet may wait on them forever)."""


STATEFUL = Workload(
    r.STATEFULSETS, sync_stateful, _stateful_intents, statefulsets.rollout, forces_rollback=True
)
"""A StatefulSet (log service, TN): volumes grow, stuck pods are replaced."""
STATELESS = Workload(r.DEPLOYMENTS, _sync_plain, _plain_intents, deployments.rollout, forces_rollback=False)
"""A Deployment (proxy): applied as it is; the Deployment controller replaces pods itself."""


def has_started(ctx: Drafting) -> bool:
    """The set has left ``NotStarted``: it made its workload once (a set reports
    ``UpToDate`` from its first round, ``NotStarted`` until then)."""
    condition = ctx.condition(UP_TO_DATE)
    return condition is not None and condition.get("reason") != NOT_STARTED[0]


def wait_for_log_service(ctx: Context, env: Env, obj: Mapping[str, Any], spec: PodSet) -> LogService | None:
    """The set's log service; None, with ``Ready`` saying what it waits for, until it has one.
    Waiting is no error: the LogSet's own progress wakes the set. A set that has not
    started waits for its dependencies as upstream's does (``deps.py``)."""
    service = resolve(env.caches, obj, spec, started=has_started(ctx))
    if isinstance(service, Waiting):
        ctx.set_condition("Ready", False, service.reason, service.message)
        return None
    return service


def hashed_config(
    obj: Mapping[str, Any],
    component: Component,
    obj_labels: Mapping[str, str],
    data: Callable[[], Mapping[str, str]],
) -> Obj:
    """The set's immutable ConfigMap of what ``data`` renders; a config that cannot
    render is the user's to fix (a terminal condition, not a retry)."""
    with invalid_config_is_terminal():
        rendered = data()
    return hashed_config_map(obj, names.config_map_base_name(component, name_of(obj)), obj_labels, rendered)


def service_config(
    obj: Mapping[str, Any],
    component: Component,
    spec: Mapping[str, Any],
    service: LogService,
    obj_labels: Mapping[str, str],
) -> Obj:
    """``hashed_config`` of a set that runs against a log service (TN, CN, proxy)."""
    return hashed_config(
        obj,
        component,
        obj_labels,
        lambda: config_map_data(
            component,
            name=name_of(obj),
            namespace=namespace_of(obj),
            spec=spec,
            shared_storage=service.shared_storage,
            hakeeper=service.endpoint,
        ),
    )


@dataclass(frozen=True)
class SetInput(Generic[S]):
    """What a set's desired objects are built from, once per round: the set and its
    admitted spec (the kind's typed spec), its labels, the selector of its pods, its
    hashed config and the shared storage its pods reach."""

    obj: Mapping[str, Any]
    component: Component
    spec: S
    labels: Mapping[str, str]
    selector: Mapping[str, str]
    config: Obj
    shared_storage: SharedStorageProvider | None

    @property
    def name(self) -> str:
        return name_of(self.obj)

    def pod_template(self, **extras: Any) -> Obj:
        """The set's pod template, running its config (image, selector, pull policy,
        restart stamp); ``extras`` are the kind's own (volumes, mounts, gates)."""
        spec = self.spec
        return pod_template(
            PodTemplateInput(
                component=self.component,
                set_name=self.name,
                namespace=namespace_of(self.obj),
                spec=spec,
                image=spec.image or "",
                config_map=name_of(self.config),
                selector_labels=self.selector,
                shared_storage=self.shared_storage,
                extra_labels=self.labels,
                image_pull_policy=spec.overlay.image_pull_policy if spec.overlay is not None else None,
                restart_at=restart_stamp(self.obj),
                **extras,
            )
        )


def served_input(
    obj: Mapping[str, Any],
    component: Component,
    spec: S,
    service: LogService,
    *,
    config_spec: Mapping[str, Any] | None = None,
) -> SetInput[S]:
    """The input of a set that runs against a log service (TN, CN, proxy), its config
    rendered from ``config_spec`` (the spec's JSON unless the kind defaults more)."""
    return input_of(
        obj, component, spec, service, lambda: shared_storage_of(service), config_spec=config_spec
    )


def input_of(
    obj: Mapping[str, Any],
    component: Component,
    spec: S,
    service: LogService,
    storage: Callable[[], SharedStorageProvider | None],
    *,
    config_spec: Mapping[str, Any] | None = None,
) -> SetInput[S]:
    """``served_input`` with the log service's shared storage read already (``storage``
    gives it, or raises what is wrong with it, once the config rendered)."""
    obj_labels = set_labels(component, obj)
    selector = labels.sub_resource_labels(component, name_of(obj), namespace_of(obj))
    rendered = dump(spec) if config_spec is None else config_spec
    config = service_config(obj, component, rendered, service, obj_labels)
    return SetInput(obj, component, spec, obj_labels, selector, config, storage())


def shared_storage_of(service: LogService) -> SharedStorageProvider | None:
    """The shared storage a log service's pods reach, typed (None for an external log
    service, whose sets' own config says where the data lives)."""
    if not service.shared_storage:
        return None
    try:
        return parse(SharedStorageProvider, thaw(service.shared_storage))
    except ValidationError as e:  # the LogSet's own admission refuses it too
        raise TerminalError(
            "InvalidConfig", f"the log service's sharedStorage: {e.errors()[0]['msg']}"
        ) from e


def sync_desired(
    ctx: Context,
    env: Env,
    component: Component,
    spec: PodSet,
    desired: Sequence[tuple[Resource, Obj]],
    plan: Writes,
    sync: Callable[[Context, Env, Sequence[tuple[Resource, Obj]], Writes], None] = _sync_plain,
) -> None:
    """Plan the writes that make the cluster hold the set's PodDisruptionBudget (before
    its pods, so none is ever unguarded), ``desired`` (through ``sync``, a workload's own
    when it has one) and the metric Service the spec asks for."""
    sync_disruption_budget(env, ctx.obj, component, spec, plan)
    sync(ctx, env, desired, plan)
    sync_metric_service(env, ctx.obj, component, spec, plan)


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
    """``sync_desired`` as intents, decided from what is ``cached``: the set's
    PodDisruptionBudget, ``desired`` (as its ``workload`` writes them) and its metric
    Service, each written only where the cache does not hold it as desired."""
    intents: list[Intent] = []
    set_name = name_of(obj)
    budget = desired_budget(obj, component, spec)
    if budget is not None:
        intents += applies([(r.PDBS, budget)], cached.get, cached.applied)
    elif gone := unwanted_budget(
        obj, component, cached.get(r.PDBS, names.workload_name(component, set_name))
    ):
        intents.append(gone)
    intents += workload.intents(draft, desired, cached, replace)
    metric = desired_metric_service(obj, component, spec)
    if metric is not None:
        intents += applies([(r.SERVICES, metric)], cached.get, cached.applied)
    elif gone := unwanted_metric_service(
        obj, cached.get(r.SERVICES, names.metric_service_name(component, set_name))
    ):
        intents.append(gone)
    return intents


def set_references(given: SetInput[Any]) -> list[Ref]:
    """The Secrets and ConfigMaps a set's pods need: its own overlay's, and its log
    service's S3 credentials and certificates (its pods reach the shared storage too)."""
    return pod_set_references(given.spec, given.shared_storage, "the log service's sharedStorage")


def pod_set_references(
    spec: PodSet, storage: SharedStorageProvider | None, storage_field: str = "spec.sharedStorage"
) -> list[Ref]:
    """The Secrets and ConfigMaps the pods of a set with ``spec`` need: its overlay's, and
    the S3 credentials and certificates of the shared ``storage`` (named at ``storage_field``)."""
    overlay = spec.overlay
    return spec_references(
        {"overlay": dump(overlay)} if overlay is not None else {},
        "spec",
        dump(storage) if storage is not None else None,
        storage_field,
    )


def sync_workload(
    ctx: Context,
    env: Env,
    workload: Workload,
    component: Component,
    spec: PodSet,
    desired: Sequence[tuple[Resource, Obj]],
    plan: Writes,
    runs: Callable[[Mapping[str, Any]], bool] | None = None,
) -> tuple[list[Mapping[str, Any]], Rollout]:
    """``sync_desired`` for a set run by a workload; the set's pods and how far its
    roll got, from the cache (over the pods ``runs`` says the workload runs, when the
    set keeps others itself)."""
    sync_desired(ctx, env, component, spec, desired, plan, workload.sync)
    pods, roll = read_roll(ctx, env, workload, component, runs)
    if workload.forces_rollback:
        statefulsets.force_rollback(ctx, roll, plan)
    return pods, roll


def read_roll(
    ctx: Context,
    env: Env,
    workload: Workload,
    component: Component,
    runs: Callable[[Mapping[str, Any]], bool] | None = None,
) -> tuple[list[Mapping[str, Any]], Rollout]:
    """The set's pods and how far its workload's roll got (over the pods ``runs``
    says it runs), from the cache."""
    namespace, name = ctx.namespace, ctx.name
    pods = env.caches.list(r.PODS, namespace, labels.sub_resource_labels(component, name, namespace))
    cached = env.caches.get(workload.resource, namespace, names.workload_name(component, name))
    members = pods if runs is None else [p for p in pods if runs(p)]
    roll = workload.rollout(
        cached, members, now=env.clock(), stall_seconds=env.settings.rollout_stall_seconds
    )
    return list(pods), roll


def collect_configs(
    env: Env,
    obj: Mapping[str, Any],
    component: Component,
    pods: Iterable[Mapping[str, Any]],
    keep: Iterable[str],
    plan: Writes,
    *,
    rolled: bool,
) -> None:
    """Plan the deletion of the set's hashed ConfigMaps that no pod mounts and ``keep``
    does not name, only once ``rolled`` and nothing else is planned: a pod restarting
    mid-roll must still find its config."""
    if rolled and not plan:
        base = names.config_map_base_name(component, name_of(obj))
        collect_unused(env.caches, obj, component, base, pods, keep, plan)


def _unbound(*args: Any) -> Step:
    """A step of a view built without one (a table test's): it fails if ever run."""

    async def step() -> None:
        raise RuntimeError(f"no step bound for {args!r}: the view was not read by an actor")

    return step


@dataclass(frozen=True)
class SetView:
    """What a set's decision reads, once: the set and its admitted spec, its status as
    known, its log service (or why it waits), and, once it has one, the references its
    pods miss, its objects, pods and claims as cached, and the clock."""

    obj: Mapping[str, Any]
    spec: PodSet
    known: Mapping[str, Any]
    """The status as last written (or as the reconcile found it)."""
    service: LogService | Waiting
    now: float
    stall_seconds: float = 0.0
    storage: SharedStorageProvider | TerminalError | None = None
    """The log service's shared storage, typed; the error its shape is, when it is refused."""
    missing: tuple[Ref, ...] | None = None
    """The Secrets and ConfigMaps the pods need that do not exist (None: not looked up)."""
    recheck_refs: float = 0.0
    """When a missing reference is looked up again."""
    cached: Cached = field(default_factory=Cached)
    configs: tuple[Mapping[str, Any], ...] = ()
    """The set's hashed ConfigMaps as cached."""
    pods: tuple[Mapping[str, Any], ...] = ()
    replace_pod: Callable[[str, str], Step] = field(default=_unbound, compare=False)
    """The step replacing a pod stuck on an outdated revision (name, uid)."""
    replace_statefulset: Callable[[Obj, str], Step] = field(default=_unbound, compare=False)
    """The step replacing the StatefulSet (the desired one, the uid of the cached one)."""


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
