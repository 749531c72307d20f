"""The kubelets of the simulated nodes: node registration, status and Lease
heartbeats, and the pod lifecycle of every pod bound to one of them."""

from __future__ import annotations

import logging
from typing import Any

from mo_operator.kube.meta.times import parse_time

from ..behaviour import PodVerdict
from ..core.actions import Action, Create, Delete, Patch
from ..core.kinds import CONFIGMAP, LEASE, NAMESPACE, NODE, POD, SECRET
from ..core.kubeapi import KubeError
from ..core.objects import (
    Obj,
    find_condition,
    is_deleting,
    merge_diff,
    name_of,
    namespace_of,
    spec_of,
    status_of,
    uid_of,
)
from ..core.pods import node_name_of
from ..decisions.containers import Timing
from ..decisions.nodes import LEASE_NAMESPACE, allocate_pod_ip, host_ip, node_lease, node_object, node_status
from ..decisions.pod_status import PodTimeline, sync_pod
from ..decisions.references import unmet_references
from .base import KUBELET, Component

log = logging.getLogger(__name__)


class NodeAgent(Component):
    """Registers each simulated node and keeps it alive (status and Lease),
    unless a test killed it: a dead node's kubelet writes nothing."""

    name = "kubelet-node"
    manager = KUBELET

    def setup(self) -> None:
        self.caches[NODE].add_handler(self._on_node)
        self.caches.scoped(LEASE, LEASE_NAMESPACE).add_handler(
            lambda _t, old, new: self._on_node(_t, old, new)
        )

    def _on_node(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        name = name_of(new or old or {})
        if name in self.ctx.node_names:
            self.enqueue(name)

    def resync(self) -> None:
        for name in self.ctx.node_names:
            self.enqueue(name)

    async def start(self) -> None:
        try:
            await self.exec.perform(
                Create(NAMESPACE, {"metadata": {"name": LEASE_NAMESPACE}}, exists_ok=True)
            )
        except KubeError as e:
            if not e.conflict:
                raise
        await super().start()

    async def sync(self, name: str) -> float | None:
        if name in self.ctx.rules().dead_nodes:
            return None
        index = self.ctx.node_index(name)
        assert index is not None
        cfg = self.config
        now = self.ctx.clock()
        node = self.caches[NODE].get("", name)
        if node is None:
            node = await self.exec.perform(
                Create(NODE, node_object(name, index, cfg.node_labels, cfg.node_taints or []))
            )
            assert node is not None
        ready = find_condition(status_of(node).get("conditions"), "Ready") or {}
        beat = parse_time(ready.get("lastHeartbeatTime"))
        wake = [cfg.node_status_interval]
        if ready.get("status") != "True" or beat is None or now - beat >= cfg.node_status_interval:
            st = node_status(name, index, cfg.node_cpu, cfg.node_memory, cfg.node_pods, now, status_of(node))
            await self.exec.perform(Patch(NODE, "", name, {"status": st}, subresource="status"))
        elif beat is not None:
            wake = [beat + cfg.node_status_interval - now]
        lease = self.caches[LEASE].get(LEASE_NAMESPACE, name)
        renewed = parse_time(spec_of(lease).get("renewTime")) if lease is not None else None
        if lease is None:
            await self.exec.perform(Create(LEASE, node_lease(node, now), exists_ok=True))
            wake.append(cfg.node_lease_interval)
        elif renewed is None or now - renewed >= cfg.node_lease_interval:
            fresh = node_lease(node, now)
            await self.exec.perform(Patch(LEASE, LEASE_NAMESPACE, name, {"spec": fresh["spec"]}))
            wake.append(cfg.node_lease_interval)
        else:
            wake.append(renewed + cfg.node_lease_interval - now)
        return max(0.05, min(wake))


class Kubelet(Component):
    """Plays the kubelet for pods bound to simulated nodes."""

    name = "kubelet"
    manager = KUBELET

    def __init__(self, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.timelines: dict[str, PodTimeline] = {}
        self.ips: dict[str, str] = {}
        cfg = self.config
        self.timing = Timing(cfg.start_delay, cfg.ready_delay, cfg.run_duration, cfg.time_scale)

    def setup(self) -> None:
        self.caches[POD].add_handler(self._on_pod)
        self.caches[NODE].add_handler(self._on_node)
        for kind in (SECRET, CONFIGMAP):
            self.caches[kind].add_handler(self._on_source)

    def _on_source(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        """A Secret or ConfigMap came, changed or went: the pods of our nodes in its
        namespace look again (one waiting for it starts)."""
        ns = namespace_of(new or old or {})
        for name in self.ctx.node_names:
            for pod in self.caches[POD].by_index("node", name):
                if namespace_of(pod) == ns:
                    self._on_pod("MODIFIED", None, pod)

    def _lookup(self, kind: str, namespace: str, name: str) -> Obj | None:
        return self.caches[SECRET if kind == "Secret" else CONFIGMAP].get(namespace, name)

    def _ours(self, pod: Obj | None) -> bool:
        return pod is not None and node_name_of(pod) in self.ctx.node_names

    def _on_pod(self, etype: str, old: Obj | None, new: Obj | None) -> None:
        if etype == "DELETED" and old is not None:
            self.timelines.pop(uid_of(old), None)
            self.ips.pop(uid_of(old), None)
            return
        if self._ours(new):
            assert new is not None
            m = new.get("metadata") or {}
            self.enqueue((m.get("namespace", ""), m.get("name", "")))

    def _on_node(self, _etype: str, _old: Obj | None, new: Obj | None) -> None:
        if new is not None and name_of(new) in self.ctx.node_names:
            for pod in self.caches[POD].by_index("node", name_of(new)):
                self._on_pod("MODIFIED", None, pod)

    def resync(self) -> None:
        for name in self.ctx.node_names:
            for pod in self.caches[POD].by_index("node", name):
                self._on_pod("MODIFIED", None, pod)

    def _pod_ip(self, pod: Obj, index: int) -> str:
        if spec_of(pod).get("hostNetwork"):
            return host_ip(index)
        have = status_of(pod).get("podIP") or self.ips.get(uid_of(pod))
        if have:
            return str(have)
        used = {
            str(status_of(p).get("podIP") or "") for p in self.caches[POD].by_index("node", node_name_of(pod))
        }
        used |= set(self.ips.values())
        ip = allocate_pod_ip(index, used)
        self.ips[uid_of(pod)] = ip
        return ip

    def _verdict(self, pod: Obj, node: Obj) -> PodVerdict | None:
        for b in self.ctx.behaviours:
            v = b.judge(pod, node)
            if v is not None:
                return v
        return None

    async def sync(self, key: tuple[str, str]) -> float | None:
        pod = self.caches[POD].get(*key)
        if pod is None or not self._ours(pod):
            return None
        node_name = node_name_of(pod)
        rules = self.ctx.rules()
        if node_name in rules.dead_nodes:
            return None
        node = self.caches[NODE].get("", node_name)
        index = self.ctx.node_index(node_name)
        if node is None or index is None:
            return None
        uid = uid_of(pod)
        decision = sync_pod(
            pod,
            timeline=self.timelines.get(uid),
            now=self.ctx.clock(),
            rules=rules,
            verdict=None if is_deleting(pod) else self._verdict(pod, node),
            timing=self.timing,
            host_ip=host_ip(index),
            pod_ip=self._pod_ip(pod, index),
            unmet=None if is_deleting(pod) else unmet_references(pod, self._lookup),
        )
        self.timelines[uid] = decision.timeline
        actions: list[Action] = []
        rv = (pod.get("metadata") or {}).get("resourceVersion")
        if decision.status is not None:
            actions.append(
                Patch(
                    POD,
                    key[0],
                    key[1],
                    {
                        "metadata": {"resourceVersion": rv},
                        "status": merge_diff(status_of(pod), decision.status),
                    },
                    subresource="status",
                )
            )
        if decision.annotations:
            actions.append(Patch(POD, key[0], key[1], {"metadata": {"annotations": decision.annotations}}))
        if decision.delete:
            actions.append(Delete(POD, key[0], key[1], uid=uid, grace_period=0))
        if actions and not await self.write(actions):
            return 0.05
        return decision.wake_after
