"""The operator: every MatrixOne controller wired onto the runtime.

``Operator`` builds the shared informers and caches, one controller per
kind (each an Actor behind the runtime's ``ActorReconciler``), the event
recorder, optional leader election, and the manager that runs them. It
takes its API client and its MatrixOne admin interface from the caller:
``mo-operator run`` passes a real client, the demo and the tests pass a
client to the embedded control plane and the simulated MatrixOne.

Each controller declares the caches its reconciles read besides those it
watches (``reads``): it starts once all of them have synced, and a reconcile
reading any other cache is refused in strict mode (``kube.cache.reads``).

Writes go through a fenced client when leader election is on, so a replica
that stopped leading cannot write even from a reconcile already running.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mo_operator.api.kinds import kind_info
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.actor import Actor, ActorReconciler
from mo_operator.kube.controller.controller import Controller, Request, deletion_started
from mo_operator.kube.healthz.probes import ProbeServer
from mo_operator.kube.leaderelection.leader import LeaderElector
from mo_operator.kube.manager.adapters import Client, ClientEventSink, ClientLeaseStore, ClientWriter, fenced
from mo_operator.kube.manager.manager import Manager
from mo_operator.kube.meta.objects import key_of, mapping_at, meta_of, name_of, namespace_of, spec_of
from mo_operator.kube.recorder.events import EventRecorder
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import MOAdminProvider
from mo_operator.matrixone.component import Component
from mo_operator.settings import OperatorConfig

from .adoption import KruiseGuard
from .adoption.guard import REFUSED as TAKEOVER_REFUSED
from .backup import (
    BackupJobActor,
    BackupScheduleActor,
    RestoreJobActor,
    schedules_of_backup,
    schedules_of_restore,
)
from .bucketclaim import BucketClaimActor
from .build_info import BUILD_INFO  # noqa: F401  (registered on import)
from .cluster import MatrixOneClusterActor
from .cnset import CNSetActor, CNStoreFinalizer
from .common import resources as r
from .common.bucketclaims import claims_of_logset, logsets_of_claim
from .common.cache_transforms import CACHE_TRANSFORMS
from .common.env import LOGSET_REF_INDEX, Caches, Env
from .common.references import CONFIGMAP_NOT_FOUND, SECRET_NOT_FOUND, ReferenceLookup
from .common.rpchealth import WARNING_REASONS as RPC_WARNING_REASONS
from .common.volumes import BLOCKED as STORAGE_CLASS_CANNOT_EXPAND
from .condition_metrics import CONDITIONS
from .dnset import DNSetActor
from .logset import LogSetActor
from .pool import (
    CNClaimActor,
    CNClaimSetActor,
    CNPoolActor,
    claims_of_pod,
    claims_waiting_in_namespace,
    pool_of_claim,
    pool_of_pod,
)
from .proxyset import ProxySetActor
from .state_metrics import STATE
from .webui import WebUIActor

log = logging.getLogger(__name__)

FIELD_MANAGER = "mo-operator"
EVENT_FLUSH_SECONDS = 5.0
"""How long a stopping operator keeps writing the Events it still holds (the drain of
in-flight reconciles has its own timeout): a server that refuses them must not hold
up the exit."""
WARNING_REASONS = frozenset(
    {
        *RPC_WARNING_REASONS,
        "InvalidSpec",
        "InvalidConfig",
        "NoLogService",
        "RolloutStalled",
        "RolloutHalted",
        "StoresDown",
        "RepairingStores",
        "WaitingForHAKeeper",
        "MajorityLost",
        "BucketInUse",
        "BucketDeleting",
        "CleanupBlocked",
        "CleanupFailed",
        "RestoreBlocked",
        "RestoreFailed",
        "BackupFailed",
        "DeletionFailed",
        "RunSkipped",
        "Failed",
        "JobConflict",
        "JobMissing",
        "PodLost",
        "MaxPodsReached",
        STORAGE_CLASS_CANNOT_EXPAND,
        TAKEOVER_REFUSED,
        SECRET_NOT_FOUND,
        CONFIGMAP_NOT_FOUND,
    }
)
"""Condition reasons announced as Warning Events (trouble, not progress)."""
TAKEOVER_READS: tuple[Resource, ...] = (
    r.MATRIXONE_CLUSTERS,
    r.CNPOOLS,
    r.LOGSETS,
    r.DNSETS,
    r.TNSETS,
    r.CNSETS,
    r.PROXYSETS,
    r.PODS,
    r.CONFIGMAPS,
    r.STATEFULSETS,
    r.DEPLOYMENTS,
)
"""What the Kruise takeover guard of every set reads: whether the set's cluster (or, for
a pool's set, its CNPool) opted in, and the sets of the namespace with their pods, ConfigMaps and our workloads."""
PAUSE_ANNOTATION = labels.SKIP_SYNC
"""``matrixorigin.io/skip-sync: "true"`` pauses reconciliation of an object (upstream's name)."""


def default_identity() -> str:
    """A leader election identity unique to this process (pod name when in a pod)."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


def set_of_pod(component_kind: str) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a pod (or a volume claim) to the set it belongs to, by its labels (pods
    and claims are owned by the set's workload, not by the set itself)."""

    def mapper(pod: Mapping[str, Any]) -> Iterable[Request]:
        meta = meta_of(pod)
        if meta.labels.get(labels.COMPONENT) != component_kind or not meta.labels.get(labels.INSTANCE):
            return []
        return [Request(meta.namespace, meta.labels[labels.INSTANCE])]

    return mapper


def existing_only(
    caches: Caches, res: Resource, mapper: Callable[[Mapping[str, Any]], Iterable[Request]]
) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """``mapper``'s requests for the objects of ``res`` in the cache: the pods of a DNSet
    and of a TNSet carry the same labels, and each kind's controller would otherwise
    reconcile, for nothing, the sets of the other kind."""

    def only(obj: Mapping[str, Any]) -> Iterable[Request]:
        return [req for req in mapper(obj) if caches.get(res, req.namespace, req.name) is not None]

    return only


def sets_of_storage_class(
    caches: Caches, component_kind: str
) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a StorageClass to the sets of ``component_kind`` with claims of that class
    (one that starts allowing expansion lets their volumes grow)."""
    of_claim = set_of_pod(component_kind)

    def mapper(storage_class: Mapping[str, Any]) -> Iterable[Request]:
        name = name_of(storage_class)
        return {
            req
            for claim in caches.list(r.PVCS)
            if spec_of(claim).get("storageClassName") == name
            for req in of_claim(claim)
        }

    return mapper


def consoles_of_credential(secret: Mapping[str, Any]) -> Iterable[Request]:
    """A cluster's credential Secret to the WebUI of that cluster (named like it)."""
    meta = meta_of(secret)
    if meta.labels.get(labels.COMPONENT) != "MatrixOneCluster":
        return []
    return [Request(meta.namespace, meta.labels.get(labels.INSTANCE, ""))]


def dependents_of_logset(caches: Caches, res: Resource) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a LogSet to the sets of kind ``res`` that depend on it."""

    def mapper(logset: Mapping[str, Any]) -> Iterable[Request]:
        key = key_of(logset)
        return [Request(namespace_of(d), name_of(d)) for d in caches.by_index(res, LOGSET_REF_INDEX, key)]

    return mapper


def dependents_of_dnset(caches: Caches) -> Callable[[Mapping[str, Any]], Iterable[Request]]:
    """Map a DNSet (or TNSet) to the CNSets of its namespace whose ``deps.dnSet`` names it:
    a CNSet that has not started waits for it (``common/deps.py``)."""

    def mapper(dnset: Mapping[str, Any]) -> Iterable[Request]:
        namespace, name = namespace_of(dnset), name_of(dnset)
        return [
            Request(namespace, name_of(cn))
            for cn in caches.list(r.CNSETS, namespace)
            if mapping_at(cn, "deps", "dnSet", "metadata").get("name") == name
        ]

    return mapper


class Operator:
    def __init__(
        self,
        client: ApiClient,
        admin: MOAdminProvider,
        config: OperatorConfig | None = None,
        *,
        lease_client: ApiClient | None = None,
    ) -> None:
        """``lease_client``: a separate client for the lease (so a busy
        controller's rate limit never starves renewals); defaults to ``client``."""
        self.config = config or OperatorConfig()
        self.client = client
        self.informers = InformerFactory(
            client, transforms=CACHE_TRANSFORMS, stall_timeout=self.config.watch_stall_seconds
        )
        self.elector: LeaderElector | None = None
        writer: Client = client
        leader = self.config.leader
        if leader.enabled:
            lease = leader.config(leader.identity or default_identity())
            self.elector = LeaderElector(ClientLeaseStore(lease_client or client), lease)
            writer = fenced(client, self.elector.may_write)
        self.writer = writer
        self.caches = Caches(self.informers, self.config.settings.namespaces)
        self.recorder = EventRecorder(ClientEventSink(writer), component="mo-operator", host=leader.identity)
        self.env = Env(writer, self.caches, admin, self.config.settings, references=ReferenceLookup(writer))
        self.controllers: list[Controller] = []
        self._primary: list[tuple[Controller, Resource]] = []
        self._build()
        probes = None
        if self.config.probes.port is not None:
            probes = ProbeServer(host=self.config.probes.host, port=self.config.probes.port)
        self.probes = probes
        self.manager = Manager(self.informers, self.controllers, elector=self.elector, probes=probes)

    # ----------------------------------------------------------------- wiring
    def _actor_controller(
        self,
        name: str,
        res: Resource,
        actor: Actor,
        owns: Iterable[Resource],
        *,
        reads: Iterable[Resource] = (),
        adds_finalizer: bool = True,
        quiet_fields: frozenset[str] = frozenset(),
    ) -> Controller:
        """The controller of ``res``, watching it and ``owns``, reading ``reads`` besides."""
        caches = self.caches
        reconciler = ActorReconciler(
            kind=res.kind,
            actor=actor,
            get=lambda req: caches.get(res, req.namespace, req.name),
            writer=ClientWriter(self.writer, res),
            recorder=self.recorder,
            finalizer=labels.finalizer(name),
            pause_annotation=PAUSE_ANNOTATION,
            warning_reasons=WARNING_REASONS,
            adds_finalizer=adds_finalizer,
            quiet_fields=quiet_fields,
            leading_conditions=_upstream_conditions(res.kind),
        )
        controller = Controller(name, reconciler, max_concurrent=self.config.workers)
        for informer in caches.informers(res):
            controller.for_(informer)
        for owned in owns:
            for informer in caches.informers(owned):
                controller.owns(informer, res.api_version, res.kind)
        self._reads(controller, *reads)
        self.controllers.append(controller)
        self._primary.append((controller, res))
        return controller

    def _watch(
        self, controller: Controller, res: Resource, mapper: Callable[[Mapping[str, Any]], Iterable[Request]]
    ) -> None:
        for informer in self.caches.informers(res):
            controller.watches(informer, mapper)

    def _reads(self, controller: Controller, *resources: Resource) -> None:
        for res in resources:
            controller.reads(*self.caches.informers(res))

    def _build(self) -> None:
        env = self.env
        stateful = (r.STATEFULSETS, r.SERVICES, r.CONFIGMAPS, r.PDBS)
        logsets = self._actor_controller(
            "logset",
            r.LOGSETS,
            KruiseGuard(LogSetActor(env), env, Component.LOG),
            stateful,
            reads=TAKEOVER_READS,
            # dependents wait for Ready, not for the address; HAKeeper's state only reports
            quiet_fields=frozenset({"discovery", "hakeeperState"}),
        )
        self._watch(logsets, r.PODS, set_of_pod("LogSet"))
        self._watch(logsets, r.PVCS, set_of_pod("LogSet"))
        self._watch(logsets, r.STORAGECLASSES, sets_of_storage_class(self.caches, "LogSet"))
        self._watch(logsets, r.BUCKETCLAIMS, logsets_of_claim(self.caches))
        # upstream's controller name, so its finalizer is upstream's matrixorigin.io/BucketClaim
        claims = self._actor_controller(
            "BucketClaim", r.BUCKETCLAIMS, BucketClaimActor(env), (r.JOBS,), reads=(r.PODS,)
        )
        self._watch(claims, r.LOGSETS, claims_of_logset(self.caches))
        for name, res in (("dnset", r.DNSETS), ("tnset", r.TNSETS)):
            tn = self._actor_controller(
                name,
                res,
                KruiseGuard(DNSetActor(env, res.kind), env, Component.TN),
                stateful,
                reads=TAKEOVER_READS,
            )
            self._watch(tn, r.PODS, existing_only(self.caches, res, set_of_pod("DNSet")))
            self._watch(tn, r.PVCS, existing_only(self.caches, res, set_of_pod("DNSet")))
            of_class = sets_of_storage_class(self.caches, "DNSet")
            self._watch(tn, r.STORAGECLASSES, existing_only(self.caches, res, of_class))
            self._watch(tn, r.LOGSETS, dependents_of_logset(self.caches, res))
        cn_owns = (r.PODS, r.SERVICES, r.CONFIGMAPS, r.PVCS, r.PDBS)
        cn = self._actor_controller(
            "cnset", r.CNSETS, KruiseGuard(CNSetActor(env), env, Component.CN), cn_owns, reads=TAKEOVER_READS
        )
        self._watch(cn, r.LOGSETS, dependents_of_logset(self.caches, r.CNSETS))
        for tn_res in (r.DNSETS, r.TNSETS):
            self._watch(cn, tn_res, dependents_of_dnset(self.caches))
        self._watch(cn, r.PVCS, set_of_pod("CNSet"))
        self._watch(cn, r.STORAGECLASSES, sets_of_storage_class(self.caches, "CNSet"))
        proxy_owns = (r.DEPLOYMENTS, r.SERVICES, r.CONFIGMAPS, r.PDBS)
        proxy = self._actor_controller(
            "proxyset",
            r.PROXYSETS,
            KruiseGuard(ProxySetActor(env), env, Component.PROXY),
            proxy_owns,
            reads=TAKEOVER_READS,
        )
        self._watch(proxy, r.PODS, set_of_pod("ProxySet"))
        self._watch(proxy, r.LOGSETS, dependents_of_logset(self.caches, r.PROXYSETS))
        # No finalizer: the cluster's children go by owner references, each by its own
        # controller's finalizer, so the cluster's deletion waits for nothing of ours.
        self._actor_controller(
            "matrixonecluster",
            r.MATRIXONE_CLUSTERS,
            MatrixOneClusterActor(env),
            (r.LOGSETS, r.DNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS, r.SECRETS, r.RESTOREJOBS),
            reads=(r.BACKUPS,),
            adds_finalizer=False,
        )
        webui = self._actor_controller(
            "webui", r.WEBUIS, WebUIActor(env), (r.DEPLOYMENTS, r.SERVICES, r.SECRETS)
        )
        self._watch(webui, r.PODS, set_of_pod("WebUI"))
        self._watch(webui, r.SECRETS, consoles_of_credential)
        for name, res, job_actor, job_reads in (
            ("backupjob", r.BACKUPJOBS, BackupJobActor(env), (r.BACKUPS, r.CNSETS, r.MATRIXONE_CLUSTERS)),
            ("restorejob", r.RESTOREJOBS, RestoreJobActor(env), (r.BACKUPS,)),
        ):
            job_controller = self._actor_controller(name, res, job_actor, (r.JOBS,), reads=job_reads)
            self._watch(job_controller, r.PODS, set_of_pod(res.kind))
        # no finalizer: what a schedule makes is owned by it, and its Backups outlive it
        schedules = self._actor_controller(
            "backupschedule",
            r.BACKUPSCHEDULES,
            BackupScheduleActor(env),
            (r.BACKUPJOBS, r.JOBS),
            reads=(r.BACKUPS, r.RESTOREJOBS, r.MATRIXONE_CLUSTERS),
            adds_finalizer=False,
        )
        self._watch(schedules, r.PODS, set_of_pod(r.BACKUPSCHEDULES.kind))
        self._watch(schedules, r.BACKUPS, schedules_of_backup)
        self._watch(schedules, r.RESTOREJOBS, schedules_of_restore(self.caches))
        self._watch(schedules, r.MATRIXONE_CLUSTERS, schedules_of_restore(self.caches))
        # CN pools, with upstream's controller (and so finalizer) names
        pools = self._actor_controller("cn-pool-manager", r.CNPOOLS, CNPoolActor(env), (r.CNSETS,))
        self._watch(pools, r.PODS, pool_of_pod)
        self._watch(pools, r.CNCLAIMS, pool_of_claim)
        cn_claims = self._actor_controller(
            "cn-claim-manager", r.CNCLAIMS, CNClaimActor(env), (), reads=(r.CNSETS,)
        )
        self._watch(cn_claims, r.PODS, claims_of_pod(self.caches))
        self._watch(cn_claims, r.CNPOOLS, claims_waiting_in_namespace(self.caches))
        self._actor_controller(
            "cn-claimset-manager", r.CNCLAIMSETS, CNClaimSetActor(env), (r.CNCLAIMS,), reads=(r.PODS,)
        )
        store_finalizer = Controller(
            "cnstore", CNStoreFinalizer(env, self.recorder), max_concurrent=self.config.workers
        )
        for informer in self.caches.informers(r.PODS):
            store_finalizer.for_(informer, predicate=deletion_started)
        self._reads(store_finalizer, r.LOGSETS)
        self.controllers.append(store_finalizer)

    # ---------------------------------------------------------------- running
    def resync(self) -> int:
        """Enqueue every object each controller reconciles, as a periodic resync
        would; return how many. A resync of objects in their desired state must
        write nothing."""
        count = 0
        for controller, res in self._primary:
            for obj in self.caches.list(res):
                controller.queue.add(Request(namespace_of(obj), name_of(obj)))
                count += 1
        return count

    async def wait_idle(self, timeout: float = 30.0, settle: float = 0.2) -> None:
        """Until every controller has been idle for ``settle`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                while not all(c.idle for c in self.controllers):
                    await asyncio.sleep(0.02)
                await asyncio.sleep(settle)
                if all(c.idle for c in self.controllers):
                    return

    async def run(self) -> None:
        """Run until ``stop()`` (or, with leader election, until leadership is lost);
        the condition and state gauges report this operator's caches meanwhile."""
        CONDITIONS.add(self.caches)
        STATE.add(self.caches)
        try:
            await self.manager.run()
        finally:
            CONDITIONS.discard(self.caches)
            STATE.discard(self.caches)
            await self.recorder.close(timeout=EVENT_FLUSH_SECONDS)

    def stop(self) -> None:
        self.manager.request_stop()


def _upstream_conditions(kind: str) -> tuple[str, ...]:
    """The condition types the Go operator gives ``kind``, which its status lists first."""
    info = kind_info(kind)
    return info.upstream_conditions if info is not None else ()
