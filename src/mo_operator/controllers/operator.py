"""The operator: every MatrixOne controller wired onto the runtime.

``Operator`` builds the shared informers and caches, the event recorder,
optional leader election and the manager, and hands them (``wiring.Wiring``)
to every controller's ``setup()`` in ``SETUPS``: each wires its own controller
(an Actor behind the runtime's ``ActorReconciler``) with what it owns, watches
and reads and the reasons it warns with. It
takes its API client and its MatrixOne admin interface from the caller:
``mo-operator run`` passes a real client, the demo and the tests pass a
client to the embedded control plane and the simulated MatrixOne.

Each setup declares the caches its reconciles read besides those it
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

from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.controller.controller import Controller, Request
from mo_operator.kube.healthz.probes import ProbeServer
from mo_operator.kube.leaderelection.leader import LeaderElector
from mo_operator.kube.manager.adapters import Client, ClientEventSink, ClientLeaseStore, fenced
from mo_operator.kube.manager.manager import Manager
from mo_operator.kube.meta.objects import name_of, namespace_of
from mo_operator.kube.recorder.events import EventRecorder
from mo_operator.matrixone.admin import MOAdminProvider
from mo_operator.settings import OperatorConfig

from . import bucketclaim, dnset, proxyset, tnset, webui
from .backup import setup as backup
from .build_info import BUILD_INFO  # noqa: F401  (registered on import)
from .cluster import setup as cluster
from .cnset import setup as cnset
from .condition_metrics import CONDITIONS
from .framework.cache_transforms import CACHE_TRANSFORMS
from .framework.env import Caches, Env
from .framework.references import ReferenceLookup
from .logset import setup as logset
from .pool import setup as pool
from .state_metrics import STATE
from .wiring import Setup, Wiring

log = logging.getLogger(__name__)

FIELD_MANAGER = "mo-operator"
EVENT_FLUSH_SECONDS = 5.0
"""How long a stopping operator keeps writing the Events it still holds (the drain of
in-flight reconciles has its own timeout): a server that refuses them must not hold
up the exit."""
SETUPS: tuple[Setup, ...] = (
    logset.setup,
    bucketclaim.setup,
    dnset.setup,
    tnset.setup,
    cnset.setup,
    proxyset.setup,
    cluster.setup,
    webui.setup,
    backup.setup,
    pool.setup,
)
"""Every controller's ``setup()``, in the order the operator wires them."""


def default_identity() -> str:
    """A leader election identity unique to this process (pod name when in a pod)."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{uuid.uuid4().hex[:6]}"


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
        wiring = Wiring(self.env, self.caches, writer, self.recorder, self.config.workers)
        for setup in SETUPS:
            setup(wiring)
        self.controllers: list[Controller] = wiring.controllers
        self._primary: list[tuple[Controller, Resource]] = wiring.primary
        probes = None
        if self.config.probes.port is not None:
            probes = ProbeServer(host=self.config.probes.host, port=self.config.probes.port)
        self.probes = probes
        self.manager = Manager(self.informers, self.controllers, elector=self.elector, probes=probes)

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
