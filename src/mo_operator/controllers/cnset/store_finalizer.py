"""Removing a CN's store from HAKeeper when its pod goes, whoever deletes it.

Every CN pod carries the ``matrixorigin.io/cn-draining`` finalizer (upstream's
name; pods the Go operator ran also its ``matrixorigin.io/cnstore``): HAKeeper
keeps a store record (with its work state) until told to delete it, and the next pod of the same name would inherit it. This
controller watches CN pods being deleted, deletes their store through the
HAKeeper address recorded on the pod, then lets the pod go. It works on
pods, not CNSets, because pods outlive their set when the set is deleted.

The store is deleted only once the CN's container has stopped (the kubelet
stops it while the finalizer holds the pod): a CN still running heartbeats
and would register its store again right after it was deleted.

It never holds a pod forever: a container whose Node no longer exists has
stopped with it (no kubelet is left to say so; the Node is read by name, and
only for a pod past its grace period still reported running); one that does
not report stopped within its grace period plus ``give_up_seconds`` (its node
is unreachable) counts as stopped; when the LogSet behind the HAKeeper is gone or going (the whole
cluster is being deleted) there is no store to delete; and when HAKeeper
does not answer for ``Settings.rpc_patience_seconds``, or the operator's own
client cannot use its answer, the pod goes anyway, with a Warning Event.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.controller.controller import Request, Result
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.objects import mapping_at, spec_of
from mo_operator.kube.recorder.events import EventRecorder
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import AdminError, Failure, StoreNotFound, failure_of

from ..framework import resources as r
from ..framework.env import Env
from ..framework.meta import is_deleting
from ..specs import pods as podutil
from . import pods as cnpods

log = logging.getLogger(__name__)

GIVE_UP_SECONDS = 120.0
UPSTREAM_STORE_FINALIZER = "matrixorigin.io/cnstore"
"""The Go operator's cnstore controller's own finalizer on the CN pods it ran (its
controller-runtime adds ``matrixorigin.io/<controller>``); once that operator is gone
nothing else removes it, so it goes with ours."""
_FINALIZERS = (labels.CN_DRAINING_FINALIZER, UPSTREAM_STORE_FINALIZER)


class CNStoreFinalizer:
    def __init__(
        self, env: Env, recorder: EventRecorder, *, give_up_seconds: float = GIVE_UP_SECONDS
    ) -> None:
        self.env = env
        self.recorder = recorder
        self.give_up_seconds = give_up_seconds

    async def __call__(self, req: Request) -> Result | None:
        pod = self.env.caches.get(r.PODS, req.namespace, req.name)
        if pod is None or not is_deleting(pod):
            return None
        finalizers = list(pod["metadata"].get("finalizers") or ())
        if not any(f in finalizers for f in _FINALIZERS):
            return None
        if not await self._stopped(pod):
            return Result(requeue_after=self.env.settings.busy_poll_seconds)
        if not await self._delete_store(pod):
            return Result(requeue_after=self.env.settings.busy_poll_seconds)
        await self.env.client.patch(
            r.PODS,
            req.name,
            {
                "metadata": {
                    "finalizers": [f for f in finalizers if f not in _FINALIZERS],
                    "resourceVersion": pod["metadata"]["resourceVersion"],
                }
            },
            req.namespace,
        )
        return None

    async def _stopped(self, pod: Mapping[str, Any]) -> bool:
        """The CN process no longer runs (or cannot be heard of any more)."""
        status = pod.get("status") or {}
        main = next(
            (c for c in status.get("containerStatuses") or () if c.get("name") == layout.MAIN_CONTAINER), None
        )
        if (
            status.get("phase") in ("Succeeded", "Failed")
            or main is None
            or "running" not in mapping_at(main, "state")
        ):
            return True
        # deletionTimestamp is when the grace period ends (the kubelet's deadline to stop it)
        deadline = podutil.parse_time(pod["metadata"].get("deletionTimestamp")) or self.env.clock()
        overdue = self.env.clock() - deadline
        return overdue > self.give_up_seconds or (overdue >= 0 and await self._node_gone(pod))

    async def _node_gone(self, pod: Mapping[str, Any]) -> bool:
        node = spec_of(pod).get("nodeName")
        if not node:
            return False
        try:
            return await self.env.client.get_or_none(r.NODES, str(node)) is None
        except ApiError as e:
            log.info("cannot tell whether node %s of CN pod %s exists: %s", node, pod["metadata"]["name"], e)
            return False

    async def _delete_store(self, pod: Mapping[str, Any]) -> bool:
        """True once the store is gone from HAKeeper (or there is nothing to ask)."""
        annotations = pod["metadata"].get("annotations") or {}
        address = annotations.get(cnpods.HAKEEPER_ANNOTATION)
        uuid = cnpods.store_uuid(pod)
        if not address or not uuid or not self._logset_alive(annotations.get(cnpods.LOGSET_ANNOTATION)):
            return True
        try:
            await self.env.admin.admin(address).delete_cn_store(uuid)
            return True
        except StoreNotFound:
            return True
        except AdminError as e:
            since = podutil.parse_time(pod["metadata"].get("deletionTimestamp")) or self.env.clock()
            if failure_of(e) is Failure.CLIENT_FAULT:  # waiting would not help: never hold the pod
                self.recorder.event(
                    pod,
                    "Warning",
                    "StoreNotDeleted",
                    f"the operator cannot use HAKeeper's answer at {address} ({e}); "
                    f"letting the pod go with its store {uuid} still registered",
                )
                return True
            patience = self.env.settings.rpc_patience_seconds
            if self.env.clock() - since < patience:
                log.info("cannot delete the store of CN pod %s yet: %s", pod["metadata"]["name"], e)
                return False
            self.recorder.event(
                pod,
                "Warning",
                "StoreNotDeleted",
                f"HAKeeper at {address} did not answer for {int(patience)}s ({e}); "
                f"letting the pod go with its store {uuid} still registered",
            )
            return True

    def _logset_alive(self, ref: str | None) -> bool:
        if not ref:
            return True  # an external log service: ask it
        namespace, _, name = ref.partition("/")
        logset = self.env.caches.get(r.LOGSETS, namespace, name)
        return logset is not None and not is_deleting(logset)
