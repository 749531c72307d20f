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

A round reads the pod, the clock, its LogSet and (only for a pod past its grace
period still reported running) its Node (``read``); ``decide`` says, purely,
whether to wait or to delete the store and let the pod go; ``act`` makes the
call, and how a failed call ends (wait, or let go with a Warning) is decided
purely too (``judge``), from the pod's deletion time and the failure's class.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.kube.controller.controller import Request, Result
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.objects import annotations_of, mapping_at, meta_of, spec_of, status_of
from mo_operator.kube.recorder.events import EventRecorder
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.admin import AdminError, Failure, StoreNotFound, failure_of

from ..framework import resources as r
from ..framework.decision import Emit
from ..framework.env import Env
from ..framework.meta import is_deleting
from ..framework.writes import Patch
from ..specs import pods as podutil
from . import pods as cnpods

log = logging.getLogger(__name__)

GIVE_UP_SECONDS = 120.0
UPSTREAM_STORE_FINALIZER = "matrixorigin.io/cnstore"
"""The Go operator's cnstore controller's own finalizer on the CN pods it ran (its
controller-runtime adds ``matrixorigin.io/<controller>``); once that operator is gone
nothing else removes it, so it goes with ours."""
_FINALIZERS = (labels.CN_DRAINING_FINALIZER, UPSTREAM_STORE_FINALIZER)


@dataclass(frozen=True)
class StoreView:
    """A CN pod being deleted, as the finalizer decides from it."""

    pod: Mapping[str, Any]
    now: float
    stopped: bool
    """Its CN process no longer runs (or cannot be heard of any more)."""
    logset_alive: bool
    """The LogSet behind its HAKeeper still runs (or it uses an external one)."""
    patience: float
    """How long HAKeeper may go unanswered before the pod goes without it."""


@dataclass(frozen=True)
class StoreDecision:
    """Wait (no release), or release the pod, first deleting its store when ``store`` names it."""

    release: Patch | None = None
    store: tuple[str, str] | None = None
    """HAKeeper's address and the store's uuid."""


def decide(view: StoreView) -> StoreDecision:
    """Wait while the CN runs; then delete its store (when there is a HAKeeper to ask)
    and let the pod go. Pure."""
    if not view.stopped:
        return StoreDecision()
    pod = view.pod
    meta = meta_of(pod)
    finalizers = [f for f in pod["metadata"].get("finalizers") or () if f not in _FINALIZERS]
    release = Patch(
        r.PODS,
        meta.namespace,
        meta.name,
        {"metadata": {"finalizers": finalizers, "resourceVersion": meta.resource_version}},
        what=f"let CN pod {meta.name} go",
    )
    address = annotations_of(pod).get(cnpods.HAKEEPER_ANNOTATION)
    uuid = cnpods.store_uuid(pod)
    if not address or not uuid or not view.logset_alive:
        return StoreDecision(release)
    return StoreDecision(release, (str(address), uuid))


def judge(view: StoreView, error: AdminError) -> Emit | None:
    """After the store's deletion failed (for another reason than the store being
    gone already): None to wait and ask again, or the Warning with which the pod goes
    anyway. Pure."""
    address = annotations_of(view.pod).get(cnpods.HAKEEPER_ANNOTATION)
    uuid = cnpods.store_uuid(view.pod)
    if failure_of(error) is Failure.CLIENT_FAULT:  # waiting would not help: never hold the pod
        return Emit(
            "Warning",
            "StoreNotDeleted",
            f"the operator cannot use HAKeeper's answer at {address} ({error}); "
            f"letting the pod go with its store {uuid} still registered",
        )
    since = podutil.parse_time(view.pod["metadata"].get("deletionTimestamp")) or view.now
    if view.now - since < view.patience:
        return None
    return Emit(
        "Warning",
        "StoreNotDeleted",
        f"HAKeeper at {address} did not answer for {int(view.patience)}s ({error}); "
        f"letting the pod go with its store {uuid} still registered",
    )


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
        if not any(f in _FINALIZERS for f in pod["metadata"].get("finalizers") or ()):
            return None
        view = await self.read(pod)
        return await self.act(view, decide(view))

    async def read(self, pod: Mapping[str, Any]) -> StoreView:
        """The pod, the clock, whether its CN stopped and whether its LogSet still runs."""
        now = self.env.clock()
        logset = annotations_of(pod).get(cnpods.LOGSET_ANNOTATION)
        patience = self.env.settings.rpc_patience_seconds
        return StoreView(pod, now, await self._stopped(pod, now), self._logset_alive(logset), patience)

    async def act(self, view: StoreView, decision: StoreDecision) -> Result | None:
        wait = Result(requeue_after=self.env.settings.busy_poll_seconds)
        if decision.release is None:
            return wait
        if decision.store is not None:
            address, uuid = decision.store
            try:
                await self.env.admin.admin(address).delete_cn_store(uuid)
            except StoreNotFound:
                pass
            except AdminError as e:
                warning = judge(view, e)
                if warning is None:
                    log.info("cannot delete the store of CN pod %s yet: %s", meta_of(view.pod).name, e)
                    return wait
                self.recorder.event(view.pod, warning.type, warning.reason, warning.message)
        release = decision.release
        await self.env.client.patch(release.resource, release.name, release.body, release.namespace)
        return None

    async def _stopped(self, pod: Mapping[str, Any], now: float) -> bool:
        """The CN process no longer runs (or cannot be heard of any more)."""
        status = status_of(pod)
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
        deadline = podutil.parse_time(pod["metadata"].get("deletionTimestamp")) or now
        overdue = now - deadline
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

    def _logset_alive(self, ref: str | None) -> bool:
        if not ref:
            return True  # an external log service: ask it
        namespace, _, name = ref.partition("/")
        logset = self.env.caches.get(r.LOGSETS, namespace, name)
        return logset is not None and not is_deleting(logset)
