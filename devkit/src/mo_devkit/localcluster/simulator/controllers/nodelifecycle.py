"""The node lifecycle controller, the taint eviction controller and the pod
garbage collector of kube-controller-manager, for nodes whose kubelet went
silent (its Lease expired, or a test killed the node) or that were removed."""

from __future__ import annotations

from ..core.kinds import LEASE, NODE, POD
from ..core.objects import Obj, name_of
from ..core.pods import node_name_of
from ..decisions.nodes import (
    LEASE_NAMESPACE,
    clear_unreachable,
    collect_orphans,
    evict_from_unreachable,
    is_ready,
    lease_expired,
    mark_unreachable,
)
from .base import CONTROLLER_MANAGER, Component

_GC = ("pod-gc",)


class NodeLifecycleController(Component):
    name = "node-lifecycle-controller"
    manager = CONTROLLER_MANAGER

    def setup(self) -> None:
        self.caches[NODE].add_handler(self._on_node)
        self.caches.scoped(LEASE, LEASE_NAMESPACE).add_handler(
            lambda _t, old, new: self.enqueue(name_of(new or old or {}))
        )
        self.caches[POD].add_handler(self._on_pod)

    def _on_node(self, etype: str, old: Obj | None, new: Obj | None) -> None:
        self.enqueue(name_of(new or old or {}))
        if etype == "DELETED":
            self.enqueue(_GC)

    def _on_pod(self, _etype: str, _old: Obj | None, new: Obj | None) -> None:
        if new is None:
            return
        node = node_name_of(new)
        if node and self.caches[NODE].get("", node) is None:
            self.enqueue(_GC)

    def resync(self) -> None:
        for n in self.caches[NODE].objects():
            self.enqueue(name_of(n))
        self.enqueue(_GC)

    def _silent(self, node: Obj, now: float) -> bool:
        if name_of(node) in self.ctx.rules().dead_nodes:
            return True
        lease = self.caches[LEASE].get(LEASE_NAMESPACE, name_of(node))
        return lease_expired(lease, now, self.config.node_monitor_grace_period)

    async def sync(self, key: str | tuple[str]) -> float | None:
        now = self.ctx.clock()
        if key == _GC:
            names = {name_of(n) for n in self.caches[NODE].objects()}
            actions = collect_orphans(self.caches[POD].objects(), names, now)
            return None if await self.exec.run(actions, stop_on_error=False) == [] else 0.1
        assert isinstance(key, str)
        node = self.caches[NODE].get("", key)
        if node is None:
            return None
        if not self._silent(node, now):
            if is_ready(node):
                await self.write(clear_unreachable(node))
            return self.config.node_monitor_grace_period
        if not await self.write(mark_unreachable(node, now)):
            return 0.1
        pods = self.caches[POD].by_index("node", key)
        actions, wake = evict_from_unreachable(node, pods, now, self.config.time_scale)
        await self.exec.run(actions, stop_on_error=False)
        return wake if wake is not None else self.config.node_monitor_grace_period
