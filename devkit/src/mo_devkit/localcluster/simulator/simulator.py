"""The workload simulator: the simulated components wired to one API client.

``Simulator(client, config)`` with ``await start()`` / ``await stop()``.
Tests steer failures through :attr:`Simulator.rules` (or the
``simulator-rules`` ConfigMap) and plug in pod behaviours with
:meth:`Simulator.add_behaviour`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from .behaviour import PodBehaviour
from .config import SimulatorConfig
from .controllers.base import Component, Context, index_pods
from .controllers.disruption import DisruptionController
from .controllers.kubelet import Kubelet, NodeAgent
from .controllers.nodelifecycle import NodeLifecycleController
from .controllers.scheduler import Scheduler
from .controllers.services import EndpointsController
from .controllers.storage import VolumeController
from .controllers.workloads import (
    DeploymentController,
    JobController,
    ReplicaSetController,
    StatefulSetController,
)
from .core.actions import Delete
from .core.cache import Caches, ObjectCache
from .core.kinds import CONFIGMAP, NAMESPACE, NODE, POD, Kind
from .core.kubeapi import KubeApi, KubeError
from .core.objects import Obj, name_of, namespace_of
from .decisions.nodes import is_ready
from .rules import RuleSet, rules_from_configmap

log = logging.getLogger(__name__)

__all__ = ["Simulator", "SimulatorConfig"]


class Simulator:
    def __init__(
        self,
        client: Any,
        config: SimulatorConfig | None = None,
        *,
        behaviours: Sequence[PodBehaviour] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config or SimulatorConfig()
        #: Failure rules and kills set from Python.
        self.rules = RuleSet()
        self._published = RuleSet()
        self._effective = RuleSet()
        # A KubeApi may be handed in directly (an in-memory one in unit tests).
        self.api = client if isinstance(client, KubeApi) else KubeApi(client, "localcluster-simulator")
        self.caches = Caches(self.api, relist_period=self.config.relist_period)
        self.ctx = Context(
            self.config,
            self.api,
            self.caches,
            rules=lambda: self._effective,
            behaviours=list(behaviours),
            clock=clock,
        )
        self.kubelet = Kubelet(self.ctx)
        self.nodes = NodeAgent(self.ctx)
        cfg = self.config
        self.components: list[Component] = [self.nodes, self.kubelet] if cfg.plays_kubelets else []
        self.components.append(
            VolumeController(self.ctx, binder=cfg.plays_controllers, provisioner=cfg.plays_kubelets)
        )
        if cfg.plays_controllers:
            self.components += [
                Scheduler(self.ctx),
                NodeLifecycleController(self.ctx),
                StatefulSetController(self.ctx),
                ReplicaSetController(self.ctx),
                DeploymentController(self.ctx),
                JobController(self.ctx),
                EndpointsController(self.ctx),
                DisruptionController(self.ctx),
            ]
        self._rules_cache: ObjectCache | None = None
        self._started = False
        self.rules.on_change(self._rules_changed)

    @property
    def mode(self) -> str:
        return self.config.mode

    # ------------------------------------------------------------ lifecycle
    async def start(self, timeout: float = 30.0) -> None:
        """Start watching and acting; returns once the simulated nodes are Ready."""
        if self._started:
            return
        index_pods(self.caches[POD])
        for c in self.components:
            c.setup()
        cfg = self.config
        self._rules_cache = self.caches.scoped(
            CONFIGMAP, cfg.rules_namespace, {"metadata.name": cfg.rules_configmap}
        )
        self._rules_cache.add_handler(self._on_rules_configmap)
        try:
            await self.api.create(NAMESPACE, {"metadata": {"name": cfg.rules_namespace}})
        except KubeError as e:
            if not e.conflict:
                raise
        await self.caches.start()
        for c in self.components:
            await c.start()
        self._started = True
        await self.wait_for_nodes(timeout)

    async def stop(self) -> None:
        for c in reversed(self.components):
            await c.stop()
        await self.caches.stop()
        self._started = False

    async def wait_for_nodes(self, timeout: float = 30.0) -> None:
        if not self.config.plays_kubelets:
            return
        names = set(self.config.node_names()) - self._effective.dead_nodes
        async with asyncio.timeout(timeout):
            while True:
                nodes = {n["metadata"]["name"]: n for n in self.caches[NODE].objects()}
                if all(n in nodes and is_ready(nodes[n]) for n in names):
                    return
                await asyncio.sleep(0.02)

    # ---------------------------------------------------------------- hooks
    def add_behaviour(self, behaviour: PodBehaviour) -> None:
        """Consult ``behaviour`` for every pod the kubelet runs (before earlier ones)."""
        self.ctx.behaviours.insert(0, behaviour)
        self.resync_pods()

    def resync_pods(self) -> None:
        """Have the kubelet look at every pod again (a behaviour changed its mind)."""
        if self.config.plays_kubelets:
            self.kubelet.resync()

    # ---------------------------------------------------------------- kills
    def kill_pod(
        self, name: str, namespace: str | None = None, *, container: str | None = None, exit_code: int = 137
    ) -> None:
        """The pod's containers (or one) exit once; they restart per restartPolicy."""
        self.rules.kill_pod(name, namespace, container=container, exit_code=exit_code)

    def kill_node(self, name: str) -> None:
        """The node's kubelet goes silent: node lifecycle marks it unreachable,
        its pods not ready, and evicts them."""
        self.rules.kill_node(name)

    def revive_node(self, name: str) -> None:
        self.rules.revive_node(name)

    async def remove_node(self, name: str) -> None:
        """The machine is gone: its kubelet stops and its Node object is
        deleted, so the pod garbage collector removes its pods."""
        self.rules.kill_node(name)
        await self.ctx.executor("localcluster-simulator").perform(Delete(NODE, "", name))

    # ------------------------------------------------------------- internal
    def _on_rules_configmap(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        """The rules ConfigMap changed. The cache may hold every ConfigMap (the kubelets
        read them all), so the others are told apart here."""
        obj = new or old or {}
        cfg = self.config
        if namespace_of(obj) != cfg.rules_namespace or name_of(obj) != cfg.rules_configmap:
            return
        self._published = rules_from_configmap(new)
        self._rules_changed()

    def _rules_changed(self) -> None:
        self._effective = RuleSet.union([self.rules, self._published])
        if self._started:
            for c in self.components:
                c.resync()

    def cache(self, kind: Kind) -> ObjectCache:
        """The simulator's watched copy of a kind (read-only use)."""
        return self.caches[kind]
