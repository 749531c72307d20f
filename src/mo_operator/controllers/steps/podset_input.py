"""What a component set's round reads and builds its objects from, read once: the
set's input (``SetInput``: its labels, selector, hashed config, shared storage and the
pod template every kind's pods start from; ``served_input`` for a set that runs
against a log service), the Secrets and ConfigMaps its pods need
(``set_references``), its objects as cached (``Cached``) and the whole view a set
skeleton's decision reads (``SetView``). The skeleton's decisions (``podset.py``)
and the CNSet's read what these hold."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from mo_operator.api.base import dump, parse
from mo_operator.api.common import PodSet, SharedStorageProvider
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import thaw
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from ..framework.draft import Drafting
from ..framework.meta import name_of, namespace_of, set_labels
from ..framework.references import Ref, spec_references
from ..framework.unseen import Applied, Key
from ..framework.writes import Step
from ..specs.configmaps import hashed_config_map, invalid_config_is_terminal
from ..specs.podtemplate import PodTemplateInput, pod_template, restart_stamp
from .deps import LogService, Waiting
from .status import NOT_STARTED, UP_TO_DATE

Obj = dict[str, Any]
S = TypeVar("S", bound=PodSet)


@dataclass(frozen=True)
class Cached:
    """What a set's decision compares its desired objects with: the set's objects as
    cached, by kind and name (its ConfigMaps, workload, Services and budget), this
    process's applies the cache may not show yet, and, for a stateful set (or a CNSet
    with cache volumes), its claims and the StorageClasses by name."""

    objects: Mapping[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    applied: Mapping[Key, Applied] = field(default_factory=dict)
    pvcs: tuple[Mapping[str, Any], ...] = ()
    classes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    def get(self, resource: Resource, name: str) -> Mapping[str, Any] | None:
        return self.objects.get((resource.kind, name))


def has_started(ctx: Drafting) -> bool:
    """The set has left ``NotStarted``: it made its workload once (a set reports
    ``UpToDate`` from its first round, ``NotStarted`` until then)."""
    condition = ctx.condition(UP_TO_DATE)
    return condition is not None and condition.get("reason") != NOT_STARTED[0]


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
