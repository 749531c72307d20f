"""kube-scheduler: binds each pending pod through ``pods/binding`` (as the
default binder does) or reports it unschedulable in its PodScheduled
condition, and keeps retrying as the cluster changes."""

from __future__ import annotations

from typing import Any

from mo_operator.kube.meta.times import format_time

from ..core.actions import Bind, Patch
from ..core.kinds import NODE, POD, PV, PVC, STORAGE_CLASS
from ..core.objects import Obj, find_condition, key_of, name_of, namespace_of, status_of, uid_of
from ..core.pods import is_terminal, node_name_of
from ..decisions.scheduling import ClusterState, schedule, unscheduled
from ..decisions.volumes import SELECTED_NODE
from .base import SCHEDULER, Component

#: How often unschedulable pods are retried even without a cluster event
#: (the scheduler flushes its unschedulable queue after 5 minutes; sooner here).
RETRY = 5.0


class Scheduler(Component):
    name = "scheduler"
    manager = SCHEDULER

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        #: Pods bound but not yet seen bound in the cache (the "assumed" pods): their
        #: UID and node. A pod of the same name with another UID (a StatefulSet's
        #: replacement, seen through a relist that never showed the first one bound or
        #: deleted) is a new pod to schedule.
        self.assumed: dict[tuple[str, str], tuple[str, str]] = {}
        #: Pods given a node whose claims are still being provisioned there (PreBind):
        #: they count on that node, so pods scheduled meanwhile spread around them.
        self.reserved: dict[tuple[str, str], str] = {}

    def setup(self) -> None:
        self.caches[POD].add_handler(self._on_pod)
        self.caches[NODE].add_handler(lambda *_: self.resync())
        self.caches[PVC].add_handler(
            lambda _t, old, new: self._requeue_namespace(namespace_of(new or old or {}))
        )
        self.caches.need(PV, STORAGE_CLASS)

    def _on_pod(self, etype: str, old: Obj | None, new: Obj | None) -> None:
        if new is not None and unscheduled(new):
            self.enqueue(key_of(new))
            return
        # Bound (the cache caught up with our binding) or gone: no longer assumed.
        self.assumed.pop(key_of(new or old or {}), None)
        self.reserved.pop(key_of(new or old or {}), None)
        # A pod leaving a node frees room: others may fit now.
        if etype == "DELETED" or (new is not None and is_terminal(new)):
            self.resync()

    def _forget_replaced(self, pod: Obj) -> None:
        key = key_of(pod)
        assumed = self.assumed.get(key)
        if assumed is not None and assumed[0] != uid_of(pod):
            del self.assumed[key]

    def _requeue_namespace(self, namespace: str) -> None:
        for p in self.pods_in(namespace):
            if unscheduled(p):
                self.enqueue(key_of(p))

    def resync(self) -> None:
        for p in self.caches[POD].objects():
            if unscheduled(p):
                self.enqueue(key_of(p))

    def _state(self, pod: Obj) -> ClusterState:
        by_node: dict[str, list[Obj]] = {}
        for node in self.caches[NODE].objects():
            by_node[name_of(node)] = list(self.caches[POD].by_index("node", name_of(node)))
        placed = {**self.reserved, **{key: node for key, (_uid, node) in self.assumed.items()}}
        for (ns, name), node_name in placed.items():
            if (ns, name) == key_of(pod):
                continue
            p = self.caches[POD].get(ns, name)
            if p is not None and not node_name_of(p):
                by_node.setdefault(node_name, []).append(p)
        ns = namespace_of(pod)
        return ClusterState(
            nodes=self.caches[NODE].objects(),
            pods_by_node=by_node,
            claims={name_of(c): c for c in self.caches[PVC].objects(ns)},
            volumes={name_of(v): v for v in self.caches[PV].objects()},
            storage_classes={name_of(c): c for c in self.caches[STORAGE_CLASS].objects()},
        )

    async def sync(self, key: tuple[str, str]) -> float | None:
        pod = self.caches[POD].get(*key)
        if pod is not None:
            self._forget_replaced(pod)
        if pod is None or not unscheduled(pod) or key in self.assumed:
            return None
        placement = schedule(pod, self._state(pod))
        if placement.node is None:
            self.reserved.pop(key, None)
            return await self._unschedulable(pod, placement.message)
        if placement.select_claims:
            ok = await self.write(
                [
                    Patch(PVC, key[0], c, {"metadata": {"annotations": {SELECTED_NODE: placement.node}}})
                    for c in placement.select_claims
                ]
            )
            if not ok:
                return 0.1
        if placement.wait:
            self.reserved[key] = placement.node
            return 0.2  # PreBind: wait for the claims to be bound
        self.reserved.pop(key, None)
        uid = uid_of(pod)
        self.assumed[key] = (uid, placement.node)
        if not await self.write([Bind(key[0], key[1], uid, placement.node)]):
            self.assumed.pop(key, None)
            return 0.1
        return None

    async def _unschedulable(self, pod: Obj, message: str) -> float:
        cond = find_condition(status_of(pod).get("conditions"), "PodScheduled")
        if not (cond and cond.get("status") == "False" and cond.get("message") == message):
            new = {
                "type": "PodScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": message,
                "lastProbeTime": None,
                "lastTransitionTime": format_time(self.ctx.clock()),
            }
            conds = [c for c in status_of(pod).get("conditions") or [] if c.get("type") != "PodScheduled"] + [
                new
            ]
            ns, name = key_of(pod)
            await self.write([Patch(POD, ns, name, {"status": {"conditions": conds}}, subresource="status")])
        return RETRY
