"""What every simulated component shares: the configuration, the caches, an
API identity per component, the failure rules and the pod behaviours."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..behaviour import PodBehaviour
from ..config import SimulatorConfig
from ..core.actions import Action, Executor
from ..core.cache import Caches, ObjectCache
from ..core.kinds import POD, Kind
from ..core.kubeapi import KubeApi, KubeError
from ..core.loop import KeyedLoop
from ..core.objects import Obj, controller_ref, namespace_of
from ..core.pods import node_name_of
from ..rules import RuleSet

log = logging.getLogger(__name__)

#: Field managers of the components the simulator stands for.
KUBELET = "kubelet"
SCHEDULER = "kube-scheduler"
CONTROLLER_MANAGER = "kube-controller-manager"
PROVISIONER = "localcluster-provisioner"


@dataclass
class Context:
    config: SimulatorConfig
    api: KubeApi
    caches: Caches
    #: The failure rules in force (Python-held and ConfigMap-held together).
    rules: Callable[[], RuleSet]
    behaviours: list[PodBehaviour] = field(default_factory=list)
    clock: Callable[[], float] = time.time

    def executor(self, manager: str) -> Executor:
        return Executor(self.api.with_manager(manager), self.caches)

    @property
    def node_names(self) -> list[str]:
        return self.config.node_names()

    def node_index(self, name: str) -> int | None:
        names = self.node_names
        return names.index(name) if name in names else None


def index_pods(pods: ObjectCache) -> None:
    """The pod indexes several components read: by namespace, node and controller."""
    pods.add_index("namespace", lambda p: [namespace_of(p)])
    pods.add_index("node", lambda p: [node_name_of(p)] if node_name_of(p) else [])
    pods.add_index("owner", lambda p: [ref["uid"]] if (ref := controller_ref(p)) else [])


def index_by_namespace(cache: ObjectCache) -> None:
    cache.add_index("namespace", lambda o: [namespace_of(o)])


class Component:
    """A level-based loop: events enqueue keys, ``sync`` decides and writes."""

    name = "component"
    manager = CONTROLLER_MANAGER
    #: Kinds whose shared caches this component needs.
    kinds: tuple[Kind, ...] = ()

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.caches = ctx.caches
        self.exec = ctx.executor(self.manager)
        self.loop: KeyedLoop[Any] = KeyedLoop(self.name, self._sync_key)

    def setup(self) -> None:
        """Register event handlers (before the caches start)."""

    async def start(self) -> None:
        await self.loop.start()
        self.resync()

    async def stop(self) -> None:
        await self.loop.stop()

    def resync(self) -> None:
        """Enqueue every key (after start, and when rules change)."""

    def enqueue(self, key: Hashable, after: float = 0.0) -> None:
        self.loop.enqueue(key, after)

    async def _sync_key(self, key: Any) -> float | None:
        try:
            return await self.sync(key)
        except KubeError as e:
            if e.conflict or e.not_found:
                return 0.05  # the cache is behind; look again shortly
            raise

    async def sync(self, key: Any) -> float | None:
        raise NotImplementedError

    async def write(self, actions: list[Action], *, owner_alive: Callable[[], bool] | None = None) -> bool:
        """Perform actions in order; True if all succeeded (or stopped because the
        owner they are for went: see ``Executor.run``)."""
        errors = await self.exec.run(actions, owner_alive=owner_alive)
        if errors:
            log.debug("%s: %s", self.name, errors[0])
        return not errors

    def pods_in(self, namespace: str) -> list[Obj]:
        return self.caches[POD].by_index("namespace", namespace)
