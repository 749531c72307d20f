"""The operator under test, as kopf's ``KopfRunner`` runs an operator for its
tests: in this process (fast; its client's writes countable, its idleness
observable) or as a child process a scenario kills with SIGKILL.

Either way it reaches the simulated MatrixOne over morpc with the product's
client (``RpcAdminProvider``), constructed with the world's dialer; the child
process is the product's ``run`` started by the kit's entry module
(``operator_process``), which gives it the dialer of the address book file.

In this process it is watched through the runtime's own observation points,
nothing in it patched (``observation``): a benchmark times its reconciles and
writes there, with the product's timings and its own worker count and rate
limit, and no webhooks.

The in-process operator serves and registers its webhooks as an install
would. ``refused`` (optional) judges the requests the operator made against
what its install grants: a request the shipped RBAC would refuse passes on an
API server that authorizes everything, and fails in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import aiohttp
from lightkube.config.kubeconfig import KubeConfig

from mo_devkit.localcluster.envtest import free_port
from mo_operator.controllers.operator import Operator
from mo_operator.kube.cache.reads import UndeclaredRead
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.controller.actor import ActorReconciler
from mo_operator.kube.controller.controller import Controller, Request
from mo_operator.kube.controller.status_policy import StatusWindow
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.matrixone.rpc.provider import DEFAULT_TIMEOUT, RpcAdminProvider
from mo_operator.settings import OperatorConfig
from mo_operator.settings import Settings as OperatorSettings
from mo_operator.webhooks import (
    api_claim_lookup,
    api_object_lookup,
    configuration_names,
    install_webhook_configurations,
    register,
)
from mo_operator.webhooks.configurations import MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION

from .observation import Observation, primary_resource
from .timings import OPERATOR_SETTINGS
from .world import World

CONTROLLER_LOG = logging.getLogger("mo_operator.kube.controller.controller")
"""Where a controller reports a reconcile requeued for an undeclared read."""


class UndeclaredReads(logging.Handler):
    """Collects the reads that ``strict_reads`` refused, from the controllers' own report
    of them (the exception is the record's argument), so the run that made one fails
    by name rather than by a wait that times out."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.reads: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        args = record.args if isinstance(record.args, tuple) else ()
        self.reads.extend(str(arg) for arg in args if isinstance(arg, UndeclaredRead))


Refused = Callable[[Iterable[tuple[str, str]]], list[str]]
"""The (verb, resource) requests an install would not grant, from those made."""


class OperatorRunner:
    """The operator under test: in this process, or as a process tests can kill."""

    def __init__(
        self,
        world: World,
        *,
        refused: Refused | None = None,
        settings: OperatorSettings = OPERATOR_SETTINGS,
        qps: float | None = None,
        record_writes: bool = True,
        status_window: float | None = None,
        strict_reads: bool = True,
        rpc_timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """``qps``: the client's rate limit (None: none); ``record_writes``: keep every
        write in ``seen`` (off where the memory of the process is measured);
        ``status_window``: seconds between non-urgent status writes of one object
        (None: the product's); ``strict_reads``: a reconcile reading a cache its
        controller did not declare fails, and ``stop`` names it (benchmarks measure
        the product as shipped, without the check); ``rpc_timeout``: what bounds each
        call to MatrixOne (the product's 10 s unless a scenario that stalls MatrixOne
        wants to see it sooner)."""
        self.world = world
        self.refused = refused
        self.settings = settings
        self.qps = qps
        self.record_writes = record_writes
        self.status_window = status_window
        self.strict_reads = strict_reads
        self.rpc_timeout = rpc_timeout
        self.admin: RpcAdminProvider | None = None
        """The in-process operator's MatrixOne client."""
        self.undeclared = UndeclaredReads()
        self.seen = Observation()
        """What the in-process operator's observation points saw."""
        self.operator: Operator | None = None
        self.client: ApiClient | None = None
        self._task: asyncio.Task[None] | None = None
        self.process: asyncio.subprocess.Process | None = None
        self._probe_port = 0
        """Where the child operator serves its probes (``wait_serving``)."""
        self.webhooks: WebhookServer | None = None

    def build(self, **config: Any) -> Operator:
        """The operator, built in this process with its observation points and not yet
        running (``config``: ``OperatorConfig`` fields besides the settings)."""
        self.client = ApiClient(
            KubeConfig.from_file(str(self.world.kubeconfig)), field_manager="mo-operator", qps=self.qps
        )
        if self.record_writes:
            self.client.write_hooks.append(self.seen.write)
        config = {"settings": self.settings, **config}
        if self.strict_reads:
            CONTROLLER_LOG.addHandler(self.undeclared)
        self.admin = RpcAdminProvider(dialer=self.world.cluster.dialer, timeout=self.rpc_timeout)
        self.operator = Operator(self.client, self.admin, OperatorConfig(**config))
        for controller in self.operator.controllers:
            controller.observers.append(self.seen)
            controller.strict_reads = self.strict_reads
            if self.status_window is not None and isinstance(controller.reconcile, ActorReconciler):
                controller.reconcile.status_window = StatusWindow(self.status_window)
        return self.operator

    def launch(self) -> asyncio.Task[None]:
        """Run the built operator in a task."""
        assert self.operator is not None, "build it first"
        self._task = asyncio.create_task(self.operator.run(), name="operator-under-test")
        return self._task

    async def start(self, *, webhooks: bool = True, synced: bool = False, **config: Any) -> Operator:
        """Run the operator in this process (the world's simulated MatrixOne reached from
        here), with its webhooks served and registered as an install would;
        ``synced``: return once its caches are."""
        operator = self.build(**config)
        if webhooks:
            await self.start_webhooks()
        task = self.launch()
        while synced and not operator.informers.has_synced():
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        return operator

    @property
    def controllers(self) -> list[Controller]:
        assert self.operator is not None, "the operator runs in this process"
        return self.operator.controllers

    def total_writes(self) -> int:
        """Write calls of the in-process operator's client so far."""
        return sum(self.client.writes.values()) if self.client is not None else 0

    def idle(self) -> bool:
        """No key queued and no reconcile running (keys waiting on a timer, such as a
        ready set's periodic look at MatrixOne, do not count)."""
        return all(c.idle for c in self.controllers)

    def holding(self) -> bool:
        """A status write is held back by the status window (a delayed requeue writes it)."""
        return any(getattr(c.reconcile, "holding", False) for c in self.controllers)

    async def wait_idle(self, timeout: float = 120.0) -> None:
        async with asyncio.timeout(timeout):
            while not self.idle():
                await asyncio.sleep(0.005)

    async def quiet(self, seconds: float = 1.0, timeout: float = 30.0) -> None:
        """Until ``seconds`` pass without a write of the in-process operator's, it is idle
        and holds no status write back; TimeoutError if it kept writing for ``timeout``.

        A world the tests see settled may still move for the operator (a pod finishing
        its termination, a status catching up), on a real server more than here: a check
        of "a resync writes nothing" must start from quiet, not from settled. A held
        status is written by a delayed requeue, which ``idle`` does not see, and belongs
        to the convergence, not to what is measured next."""
        async with asyncio.timeout(timeout):
            last, since = self.total_writes(), time.perf_counter()
            while time.perf_counter() - since < seconds or not self.idle() or self.holding():
                await asyncio.sleep(0.05)
                if self.total_writes() != last:
                    last, since = self.total_writes(), time.perf_counter()

    def resync(self) -> list[tuple[str, Request]]:
        """Enqueue every cached object of every controller's kind (the CN store
        finalizer's pods too), as a periodic resync would; the (controller, request)
        pairs, whose reconciles ``seen.finished_at`` then times."""
        assert self.operator is not None, "the operator runs in this process"
        enqueued = []
        for controller in self.controllers:
            for obj in self.operator.caches.list(primary_resource(controller)):
                meta = obj["metadata"]
                req = Request(meta.get("namespace") or "", meta["name"])
                controller.queue.add(req)
                enqueued.append((controller.name, req))
        return enqueued

    async def start_webhooks(self) -> None:
        certs = GeneratedCerts(["127.0.0.1", "localhost"])
        self.webhooks = WebhookServer(certs, host="127.0.0.1", port=0)
        client = self.world.client
        register(self.webhooks, claims=api_claim_lookup(client), objects=api_object_lookup(client))
        await self.webhooks.start()
        await install_webhook_configurations(
            self.world.client, url_base=f"https://127.0.0.1:{self.webhooks.port}", ca_bundle=certs.ca_bundle
        )

    async def stop_webhooks(self) -> None:
        """Stop serving and remove the configurations (else failurePolicy Fail blocks every write)."""
        if self.webhooks is not None:
            await self.webhooks.stop()
            self.webhooks = None
        resources = (MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION)
        for res, name in zip(resources, configuration_names(), strict=True):
            await self.world.client.delete(res, name, missing_ok=True)

    async def stop(self) -> None:
        """Stop whatever runs (in process and child); then, when ``refused`` is given, fail
        on any request the in-process operator made that the install would refuse."""
        if self.operator is not None and self._task is not None:
            self.operator.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 30)
        elif self.operator is not None:  # built, its informers perhaps started by hand
            await self.operator.informers.stop()
        if self.webhooks is not None:
            await self.stop_webhooks()
        client, self.operator, self.client, self._task = self.client, None, None, None
        if self.admin is not None:
            await self.admin.close()
            self.admin = None
        await self.kill()
        CONTROLLER_LOG.removeHandler(self.undeclared)
        if client is not None:
            await client.close()
            denied = self.refused(client.rest.requests_made) if self.refused is not None else []
            assert not denied, f"the operator made requests its install's RBAC refuses: {denied}"
        assert not self.undeclared.reads, (
            f"reads of caches their controllers do not declare: {self.undeclared.reads}"
        )

    async def spawn(self, *extra: str, identity: str | None = None) -> asyncio.subprocess.Process:
        """Run the operator (the product's ``mo-operator run``, through ``operator_process``)
        as a child process against the world's cluster."""
        if self.process is not None and self.process.returncode is None:
            raise RuntimeError("this runner's operator still runs: kill it first (two would both write)")
        self._probe_port = free_port()
        self.process = await asyncio.create_subprocess_exec(*self._run_args(identity), *extra)
        return self.process

    async def wait_serving(self, timeout: float = 60.0) -> bool:
        """Wait until the child operator's caches have synced (its ``/readyz`` answers
        200, as a kubelet's readiness probe would see it); False if it exited first.
        Raises ``TimeoutError`` after ``timeout`` seconds."""
        process, url = self.process, f"http://127.0.0.1:{self._probe_port}/readyz"
        if process is None:
            return False
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=1.0)) as session:
            async with asyncio.timeout(timeout):
                while process.returncode is None:
                    with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                        async with session.get(url) as response:
                            if response.status == 200:
                                return True
                    await asyncio.sleep(0.05)
        return False

    def _run_args(self, identity: str | None) -> list[str]:
        """``mo-operator run``'s flags with the world's cluster and timings, and the address
        book of its simulated MatrixOne."""
        book = self.world.cluster.address_book
        assert book is not None, "the world's simulated MatrixOne keeps no address book file"
        return [
            sys.executable,
            "-m",
            "mo_devkit.testing.operator_process",
            "--mo-address-book",
            str(book),
            "--log-level",
            "WARNING",
            "--kubeconfig",
            str(self.world.kubeconfig),
            "--health-probe-bind-address",
            f"127.0.0.1:{self._probe_port}",
            "--metrics-bind-address",
            "0",
            "--no-webhooks",
            "--identity",
            identity or f"e2e-{uuid.uuid4().hex[:6]}",
            "--poll-seconds",
            str(self.settings.poll_seconds),
            "--busy-poll-seconds",
            str(self.settings.busy_poll_seconds),
            "--rollout-stall-seconds",
            str(self.settings.rollout_stall_seconds),
        ]

    async def kill(self) -> None:
        """SIGKILL the child operator: no clean-up, no lease release, nothing."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()
        self.process = None
