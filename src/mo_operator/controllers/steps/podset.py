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
``STATELESS``) and writes ``desired`` (its objects besides the config).

A set with more to do calls the steps from its own ``observe``:

- the LogSet (logset/actor.py) records its HAKeeper bootstrap decision before
  step 2 (it is the log service, so it waits for none) and holds its S3 path
  (BucketClaim) before step 4; its ``desired`` builds a ``SetInput`` on
  ``hashed_config`` (with the log service's own renderer), beside its own
  bootstrap and gossip ConfigMaps; it runs steps 4 and 5 as they are, and
  reports with ``waiting`` until HAKeeper bootstraps and ``unavailable`` while
  it does not answer, then judges failover;
- the CNSet (cnset/actor.py) makes its pods itself (no workload): it uses
  steps 2, 3 (``served_input``, its pod template with its readiness gate),
  ``sync_desired`` for its ConfigMap and Services, and 5 with
  ``rolled`` meaning "no pod left to create"; it reads its roll from its
  pods and template hash and reports it with ``report_rollout`` beside its
  stores (a pooling set, which never rolls, words its own conditions).

The WebUI (webui.py) is no set of MatrixOne pods (no log service, its config a
Secret holding a credential, no disruption budget or metric Service): it applies
its own objects and uses the skeleton's ``read_roll`` with ``STATELESS`` and
``report_rollout``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import ValidationError

from mo_operator.api.base import dump, parse
from mo_operator.api.common import PodSet, SharedStorageProvider
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import thaw
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.desired import stamped
from ..framework.env import Env
from ..framework.meta import name_of, namespace_of, set_labels
from ..framework.references import Ref, report_references, spec_references
from ..framework.writes import Writes
from ..specs import deployments, statefulsets
from ..specs.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal
from ..specs.disruption import sync_disruption_budget
from ..specs.podtemplate import PodTemplateInput, pod_template, restart_stamp
from ..specs.prometheus import sync_metric_service
from ..specs.statefulsets import Rollout
from .deps import LogService, Waiting, resolve
from .expansion import sync_stateful
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
class Workload:
    """How a set's pods are run: which workload kind, how it is synced, how its roll is read."""

    resource: Resource
    sync: Callable[[Context, Env, Sequence[tuple[Resource, Obj]], Writes], None]
    rollout: RolloutOf
    forces_rollback: bool
    """Whether pods stuck on an outdated revision are deleted (a StatefulSet may wait on them forever)."""


STATEFUL = Workload(r.STATEFULSETS, sync_stateful, statefulsets.rollout, forces_rollback=True)
"""A StatefulSet (log service, TN): volumes grow, stuck pods are replaced."""
STATELESS = Workload(r.DEPLOYMENTS, _sync_plain, deployments.rollout, forces_rollback=False)
"""A Deployment (proxy): applied as it is; the Deployment controller replaces pods itself."""


def has_started(ctx: Context) -> bool:
    """The set has left ``NotStarted``: it made its workload once (a set reports
    ``UpToDate`` from its first round, ``NotStarted`` until then)."""
    condition = next((c for c in ctx.status.get("conditions") or () if c.get("type") == UP_TO_DATE), None)
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
    obj_labels = set_labels(component, obj)
    selector = labels.sub_resource_labels(component, name_of(obj), namespace_of(obj))
    rendered = dump(spec) if config_spec is None else config_spec
    config = service_config(obj, component, rendered, service, obj_labels)
    return SetInput(obj, component, spec, obj_labels, selector, config, shared_storage_of(service))


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


class PodSetActor(ABC):
    """The Actor of a set that needs only the skeleton's steps (see the module doc)."""

    model: ClassVar[type[Any]]
    """The kind admitted (its model, and its webhook rules)."""
    component: ClassVar[Component]
    readiness: ClassVar[Readiness]
    workload: ClassVar[Workload]

    def __init__(self, env: Env) -> None:
        self.env = env

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec: PodSet = admit(self.model, obj).spec
        service = wait_for_log_service(ctx, self.env, obj, spec)
        if service is None:
            self._first_status(ctx, spec.replicas)
            return None
        given = served_input(obj, self.component, spec, service)
        await report_references(ctx, self.env.references, set_references(given))
        desired = [(r.CONFIGMAPS, stamped(given.config)), *self.desired(given)]
        plan = Writes(self.env.client)
        pods, roll = sync_workload(ctx, self.env, self.workload, self.component, spec, desired, plan)
        keep = [name_of(d) for _, d in desired]
        collect_configs(self.env, obj, self.component, pods, keep, plan, rolled=roll.complete)
        self.report(ctx, pods, roll, given.selector)
        report_rollout(ctx, roll, spec.replicas, self.readiness, pending=plan.writes_workload, pods=pods)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True

    def _first_status(self, ctx: Context, replicas: int) -> None:
        """Waiting for its log service, the set still reports every field it will."""
        selector = labels.sub_resource_labels(self.component, ctx.name, ctx.namespace)
        first_status(ctx, self.first_fields(ctx, selector), *NOT_STARTED, replicas=replicas)

    @abstractmethod
    def desired(self, given: SetInput[Any]) -> Desired:
        """The set's objects besides its config (written first, since its pods mount
        it), stamped, in the order they are written."""

    @abstractmethod
    def first_fields(self, ctx: Context, selector: Mapping[str, str]) -> Mapping[str, Any]:
        """The kind's own status fields with no pod yet."""

    @abstractmethod
    def report(
        self,
        ctx: Context,
        pods: Sequence[Mapping[str, Any]],
        roll: Rollout,
        selector: Mapping[str, str],
    ) -> None:
        """The kind's own status fields, set before ``Ready`` and ``UpToDate``."""
