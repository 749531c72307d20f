"""The workload controllers of kube-controller-manager: StatefulSet,
ReplicaSet, Deployment and Job, each a keyed loop over its own kind that
reads the shared caches and performs what its decision function returns."""

from __future__ import annotations

from collections.abc import Callable

from ..core.actions import Action, Patch
from ..core.kinds import CONTROLLER_REVISION, DEPLOYMENT, JOB, POD, PVC, REPLICASET, STATEFULSET, Kind
from ..core.objects import (
    Obj,
    controller_ref,
    is_deleting,
    key_of,
    labels_of,
    merge_diff,
    name_of,
    namespace_of,
    spec_of,
    status_of,
    uid_of,
)
from ..core.selectors import selector_matches
from ..decisions.deployment import plan_deployment
from ..decisions.job import TRACKING_FINALIZER, plan_job, release_tracking_finalizer
from ..decisions.replicaset import plan_replicaset
from ..decisions.statefulset import plan_statefulset
from .base import CONTROLLER_MANAGER, Component, index_by_namespace


class _OwnerLoop(Component):
    """Keys are objects of ``kind``; changes to their children (by controller
    reference, or for orphans by selector) enqueue the owner."""

    kind: Kind
    child_kinds: tuple[Kind, ...] = (POD,)
    manager = CONTROLLER_MANAGER

    def setup(self) -> None:
        own = self.caches[self.kind]
        index_by_namespace(own)
        own.add_handler(lambda _t, old, new: self.enqueue(key_of(new or old or {})))
        for kind in self.child_kinds:
            self.caches[kind].add_handler(self._on_child)

    def _on_child(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        for obj in (old, new):
            if obj is None:
                continue
            ref = controller_ref(obj)
            if ref is not None:
                if ref.get("kind") == self.kind.kind:
                    self.enqueue((namespace_of(obj), ref.get("name", "")))
                continue
            for owner in self.caches[self.kind].by_index("namespace", namespace_of(obj)):
                if selector_matches(spec_of(owner).get("selector"), labels_of(obj)):
                    self.enqueue(key_of(owner))

    def resync(self) -> None:
        for o in self.caches[self.kind].objects():
            self.enqueue(key_of(o))

    def alive(self, owner: Obj) -> Callable[[], bool]:
        """Whether ``owner`` is still there, and not being deleted, as the cache shows
        it now: asked before each creation for it (``Executor.run``)."""
        key, uid = key_of(owner), uid_of(owner)

        def check() -> bool:
            now = self.caches[self.kind].get(*key)
            return now is not None and uid_of(now) == uid and not is_deleting(now)

        return check

    async def write_status(self, obj: Obj, status: Obj | None) -> bool:
        """Patch ``obj``'s status to ``status`` (nothing to do when None); False if it failed.

        A failed status write must bring the key back, as kube-controller-manager
        requeues on an error: otherwise a status lost to a 429 or a restarting API
        server stays stale until something else about the object changes.
        """
        if status is None:
            return True
        ns, name = key_of(obj)
        patch = {"status": merge_diff(status_of(obj), status)}
        return await self.write([Patch(self.kind, ns, name, patch, subresource="status")])


class StatefulSetController(_OwnerLoop):
    name = "statefulset-controller"
    kind = STATEFULSET
    child_kinds = (POD, CONTROLLER_REVISION)

    def setup(self) -> None:
        super().setup()
        self.caches[PVC].add_handler(self._on_claim)

    def _on_claim(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        obj = new or old or {}
        for sts in self.caches[STATEFULSET].by_index("namespace", namespace_of(obj)):
            if f"-{name_of(sts)}-" in name_of(obj):
                self.enqueue(key_of(sts))

    async def sync(self, key: tuple[str, str]) -> float | None:
        sts = self.caches[STATEFULSET].get(*key)
        if sts is None:
            return None
        ns = key[0]
        plan = plan_statefulset(
            sts,
            self.pods_in(ns),
            {name_of(c): c for c in self.caches[PVC].objects(ns)},
            self.caches[CONTROLLER_REVISION].objects(ns),
            self.ctx.clock(),
        )
        ok = await self.write(plan.actions, owner_alive=self.alive(sts))
        ok = await self.write_status(sts, plan.status) and ok
        await self.exec.run(plan.cleanup, stop_on_error=False)
        return 0.05 if not ok else plan.requeue_after


class ReplicaSetController(_OwnerLoop):
    name = "replicaset-controller"
    kind = REPLICASET

    async def sync(self, key: tuple[str, str]) -> float | None:
        rs = self.caches[REPLICASET].get(*key)
        if rs is None:
            return None
        plan = plan_replicaset(rs, self.pods_in(key[0]), self.ctx.clock())
        ok = await self._run(rs, plan.actions)
        ok = await self.write_status(rs, plan.status) and ok
        return 0.05 if not ok else plan.requeue_after

    async def _run(self, owner: Obj, actions: list[Action]) -> bool:
        """Creations and deletions are independent: one failure does not stop the rest."""
        return not await self.exec.run(actions, stop_on_error=False, owner_alive=self.alive(owner))


class DeploymentController(_OwnerLoop):
    name = "deployment-controller"
    kind = DEPLOYMENT
    child_kinds = (REPLICASET,)

    def setup(self) -> None:
        super().setup()
        index_by_namespace(self.caches[REPLICASET])
        self.caches[POD].add_handler(self._on_pod)

    def _on_pod(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        """Recreate waits for old pods to go: their changes wake the Deployment."""
        obj = new or old or {}
        ref = controller_ref(obj)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.caches[REPLICASET].get(namespace_of(obj), ref.get("name", ""))
        owner = controller_ref(rs) if rs is not None else None
        if owner is not None and owner.get("kind") == "Deployment":
            self.enqueue((namespace_of(obj), owner.get("name", "")))

    async def sync(self, key: tuple[str, str]) -> float | None:
        d = self.caches[DEPLOYMENT].get(*key)
        if d is None:
            return None
        plan = plan_deployment(
            d, self.caches[REPLICASET].by_index("namespace", key[0]), self.pods_in(key[0]), self.ctx.clock()
        )
        ok = await self.write(plan.actions, owner_alive=self.alive(d))
        ok = await self.write_status(d, plan.status) and ok
        return 0.05 if not ok else plan.requeue_after


class JobController(_OwnerLoop):
    name = "job-controller"
    kind = JOB

    def setup(self) -> None:
        super().setup()
        self.caches[POD].add_handler(self._on_tracked_pod)

    def _on_tracked_pod(self, _etype: str, _old: Obj | None, new: Obj | None) -> None:
        if new is not None and TRACKING_FINALIZER in (new.get("metadata") or {}).get("finalizers", []):
            self.enqueue(("pod", *key_of(new)))

    async def _release_orphan(self, namespace: str, name: str) -> float | None:
        """A finished or deleted pod whose Job is gone keeps no tracking
        finalizer (the controller's orphan pod handling)."""
        pod = self.caches[POD].get(namespace, name)
        if pod is None:
            return None
        ref = controller_ref(pod)
        job = self.caches[JOB].get(namespace, ref.get("name", "")) if ref is not None else None
        if job is not None and uid_of(job) == (ref or {}).get("uid"):
            return None  # its Job is alive and does the accounting
        return None if await self.write([release_tracking_finalizer(pod)]) else 0.05

    async def sync(self, key: tuple[str, ...]) -> float | None:
        if len(key) == 3:  # ("pod", namespace, name): a tracked pod to check
            return await self._release_orphan(key[1], key[2])
        job = self.caches[JOB].get(key[0], key[1])
        if job is None:
            return None
        plan = plan_job(job, self.pods_in(key[0]), self.ctx.clock(), self.config.time_scale)
        # Pods first, as manageJob runs before the status update; then the status,
        # which records finished pods before their finalizers go.
        errors = await self.exec.run(plan.manage, stop_on_error=False, owner_alive=self.alive(job))
        if not await self.write_status(job, plan.status):
            return 0.05
        errors += await self.exec.run(plan.actions, stop_on_error=False)
        return 0.05 if errors else plan.requeue_after
