"""The disruption controller: each PodDisruptionBudget's status, from its pods and
their controllers (the decision is ``decisions/disruption.py``).

A pod's controller is found as kube-controller-manager finds it: a StatefulSet, a
ReplicaSet (or the Deployment that owns it) from the caches, anything else through
its scale subresource, located by discovery (a custom resource such as a set an
operator manages its pods for). The status is written with the budget's
resourceVersion, so an eviction the API server recorded meanwhile is never
overwritten (the write conflicts and the budget is looked at again).
"""

from __future__ import annotations

from typing import Any

from ..core.actions import Patch
from ..core.kinds import DEPLOYMENT, PDB, POD, REPLICASET, STATEFULSET
from ..core.kubeapi import KubeError
from ..core.objects import (
    Obj,
    controller_ref,
    key_of,
    labels_of,
    merge_diff,
    namespace_of,
    resource_version_of,
    spec_of,
    status_of,
)
from ..core.selectors import selector_matches
from ..decisions.disruption import Expected, counts_controllers, plan_budget
from .base import CONTROLLER_MANAGER, Component, Context, index_by_namespace


class DisruptionController(Component):
    name = "disruption-controller"
    manager = CONTROLLER_MANAGER

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._plurals: dict[tuple[str, str], str] = {}
        """(apiVersion, kind) → its plural that has a scale subresource, from discovery."""

    def setup(self) -> None:
        index_by_namespace(self.caches[PDB])
        self.caches[PDB].add_handler(lambda _t, old, new: self.enqueue(key_of(new or old or {})))
        self.caches[POD].add_handler(self._on_pod)
        for kind in (STATEFULSET, REPLICASET, DEPLOYMENT):
            self.caches.need(kind)

    def _on_pod(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            if pod is None:
                continue
            for pdb in self.caches[PDB].by_index("namespace", namespace_of(pod)):
                if selector_matches(spec_of(pdb).get("selector"), labels_of(pod)):
                    self.enqueue(key_of(pdb))

    def resync(self) -> None:
        for pdb in self.caches[PDB].objects():
            self.enqueue(key_of(pdb))

    async def sync(self, key: tuple[str, str]) -> float | None:
        pdb = self.caches[PDB].get(*key)
        if pdb is None:
            return None
        selector = spec_of(pdb).get("selector")
        pods = [p for p in self.pods_in(key[0]) if selector_matches(selector, labels_of(p))]
        expected = await self._expected(pdb, pods) if counts_controllers(pdb) else Expected(None)
        plan = plan_budget(pdb, pods, expected, self.ctx.clock())
        if plan.status is not None:
            patch = {
                "metadata": {"resourceVersion": resource_version_of(pdb)},
                "status": merge_diff(status_of(pdb), plan.status),
            }
            ok = await self.write([Patch(PDB, key[0], key[1], patch, subresource="status")])
            if not ok:
                return 0.05
        return plan.recheck_after

    async def _expected(self, pdb: Obj, pods: list[Obj]) -> Expected:
        """The sum of the desired replicas of the pods' controllers (``getExpectedScale``)."""
        scales: dict[str, int] = {}
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None or ref.get("uid") in scales:
                continue  # an unmanaged pod counts for nothing
            found = await self._scale(ref, namespace_of(pod))
            if found is None:
                return Expected(None, f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[str(ref.get("uid"))] = found
        return Expected(sum(scales.values()))

    async def _scale(self, ref: dict[str, Any], namespace: str) -> int | None:
        api_version, kind, name = (
            str(ref.get("apiVersion", "")),
            str(ref.get("kind", "")),
            str(ref.get("name")),
        )
        group = api_version.split("/")[0] if "/" in api_version else ""
        if kind == "StatefulSet" and group == "apps":
            return self._cached_replicas(STATEFULSET, namespace, name, ref)
        if kind == "ReplicaSet" and group in ("apps", "extensions"):
            rs = self.caches[REPLICASET].get(namespace, name)
            if rs is None or rs["metadata"].get("uid") != ref.get("uid"):
                return None
            owner = controller_ref(rs)
            if owner is not None and owner.get("kind") == "Deployment":
                return self._cached_replicas(DEPLOYMENT, namespace, str(owner.get("name")), owner)
            return int(spec_of(rs).get("replicas") or 0)
        return await self._scale_subresource(api_version, kind, namespace, name, str(ref.get("uid")))

    def _cached_replicas(self, kind: Any, namespace: str, name: str, ref: dict[str, Any]) -> int | None:
        found = self.caches[kind].get(namespace, name)
        if found is None or found["metadata"].get("uid") != ref.get("uid"):
            return None
        return int(spec_of(found).get("replicas") or 0)

    async def _scale_subresource(
        self, api_version: str, kind: str, namespace: str, name: str, uid: str
    ) -> int | None:
        """``getScaleController``: the owner's ``/scale``, its plural found by discovery."""
        plural = await self._plural(api_version, kind)
        if plural is None:
            return None
        prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            scale = await self.ctx.api.get_raw(f"{prefix}/namespaces/{namespace}/{plural}/{name}/scale")
        except KubeError:
            return None
        if scale is None or (scale.get("metadata") or {}).get("uid") != uid:
            return None
        return int((scale.get("spec") or {}).get("replicas") or 0)

    async def _plural(self, api_version: str, kind: str) -> str | None:
        """Remembered once found; a kind not served (yet) is asked again next time."""
        key = (api_version, kind)
        if key not in self._plurals:
            prefix = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            found = await self.ctx.api.get_raw(prefix)
            resources = (found or {}).get("resources") or []
            plurals = [r["name"] for r in resources if r.get("kind") == kind and "/" not in r.get("name", "")]
            scalable = {r["name"].split("/")[0] for r in resources if r.get("name", "").endswith("/scale")}
            plural = next((p for p in plurals if p in scalable), None)
            if plural is None:
                return None
            self._plurals[key] = plural
        return self._plurals[key]
