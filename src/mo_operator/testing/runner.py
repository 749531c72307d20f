"""The operator under test, as kopf's ``KopfRunner`` runs an operator for its
tests: in this process (fast; its client's writes countable, its idleness
observable) or as a child process a scenario kills with SIGKILL.

The in-process operator serves and registers its webhooks as an install
would. ``refused`` (optional) judges the requests the operator made against
what its install grants: a request the shipped RBAC would refuse passes on an
API server that authorizes everything, and fails in production.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import uuid
from collections.abc import Callable, Iterable
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from mo_operator.controllers.common.settings import OperatorConfig
from mo_operator.controllers.common.settings import Settings as OperatorSettings
from mo_operator.controllers.operator import Operator
from mo_operator.kube.client import ApiClient
from mo_operator.kube.webhook_certs import GeneratedCerts
from mo_operator.kube.webhook_server import WebhookServer
from mo_operator.webhooks import (
    api_claim_lookup,
    configuration_names,
    install_webhook_configurations,
    register,
)
from mo_operator.webhooks.configurations import MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION

from .timings import OPERATOR_SETTINGS
from .world import World

Refused = Callable[[Iterable[tuple[str, str]]], list[str]]
"""The (verb, resource) requests an install would not grant, from those made."""


class OperatorRunner:
    """The operator under test: in this process, or as a process tests can kill."""

    def __init__(
        self, world: World, *, refused: Refused | None = None, settings: OperatorSettings = OPERATOR_SETTINGS
    ) -> None:
        self.world = world
        self.refused = refused
        self.settings = settings
        self.operator: Operator | None = None
        self.client: ApiClient | None = None
        self._task: asyncio.Task[None] | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.webhooks: WebhookServer | None = None

    async def start(self, *, webhooks: bool = True, **config: Any) -> Operator:
        """Run the operator in this process (the world's simulated MatrixOne in process
        too), with its webhooks served and registered as an install would."""
        self.client = ApiClient(
            KubeConfig.from_file(str(self.world.kubeconfig)), field_manager="mo-operator", qps=None
        )
        if webhooks:
            await self.start_webhooks()
        config = {"settings": self.settings, **config}
        self.operator = Operator(self.client, self.world.cluster.provider, OperatorConfig(**config))
        self._task = asyncio.create_task(self.operator.run(), name="operator-under-test")
        return self.operator

    async def quiet(self, seconds: float = 1.0, timeout: float = 30.0) -> None:
        """Until the in-process operator is idle and has written nothing for ``seconds``.

        A world the tests see settled may still move for the operator (a pod finishing
        its termination, a status catching up), on a real server more than here: a check
        of "a resync writes nothing" must start from quiet, not from settled."""
        op, client = self.operator, self.client
        assert op is not None and client is not None, "the operator runs in this process"
        async with asyncio.timeout(timeout):
            while True:
                await op.wait_idle()
                before = sum(client.writes.values())
                await asyncio.sleep(seconds)
                if sum(client.writes.values()) == before and all(_settled(c) for c in op.controllers):
                    return

    async def start_webhooks(self) -> None:
        certs = GeneratedCerts(["127.0.0.1", "localhost"])
        self.webhooks = WebhookServer(certs, host="127.0.0.1", port=0)
        register(self.webhooks, claims=api_claim_lookup(self.world.client))
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
        if self.webhooks is not None:
            await self.stop_webhooks()
        client, self.operator, self.client, self._task = self.client, None, None, None
        await self.kill()
        if client is not None:
            await client.close()
            denied = self.refused(client.rest.requests_made) if self.refused is not None else []
            assert not denied, f"the operator made requests its install's RBAC refuses: {denied}"

    async def spawn(self, *extra: str, identity: str | None = None) -> asyncio.subprocess.Process:
        """Run ``mo-operator run`` as a child process against the world's cluster."""
        if self.process is not None and self.process.returncode is None:
            raise RuntimeError("this runner's operator still runs: kill it first (two would both write)")
        self.process = await asyncio.create_subprocess_exec(*self._run_args(identity), *extra)
        return self.process

    def _run_args(self, identity: str | None) -> list[str]:
        """``mo-operator run`` with the world's cluster, simulated MatrixOne and timings."""
        admin = self.world.cluster.admin_server
        assert admin is not None
        return [
            sys.executable,
            "-m",
            "mo_operator.cli.main",
            "--log-level",
            "WARNING",
            "run",
            "--kubeconfig",
            str(self.world.kubeconfig),
            "--health-probe-bind-address",
            "0",
            "--metrics-bind-address",
            "0",
            "--no-webhooks",
            "--mo-admin-url",
            admin.url,
            "--mo-admin-token",
            admin.token,
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


def _settled(controller: Any) -> bool:
    """Idle, and no status write held back for a later requeue (``ActorReconciler.holding``)."""
    return bool(controller.idle and not getattr(controller.reconcile, "holding", False))
