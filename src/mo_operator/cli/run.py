"""``mo-operator run``: the operator process.

Builds the API client (kubeconfig, or in-cluster when there is none), the
MatrixOne client (morpc, ``RpcAdminProvider``; its dialer is the system's
unless a caller in Python passes another: the dev kit does), the webhook
server (on every replica: admission must not depend on who leads) and the
operator, and runs until SIGTERM/SIGINT, finishing in-flight reconciles on
the way out. With leader election, losing the lease ends the process (exit
code 1), as controller-runtime does, so that a restarted process starts
clean.

What an installer gets wrong is said in one line, not a traceback or a
stream of retries: a permission the API server refuses during setup ends
the process (exit code 1) naming it; CRDs not installed yet are named once
(again once a minute) while the operator waits, not ready, and it starts by
itself once they are served. A signal stops it at any of these stages.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mo_operator.api.install import install_crds
from mo_operator.controllers.operator import FIELD_MANAGER, Operator, default_identity
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.discovery import wait_until_served
from mo_operator.kube.healthz.probes import ProbeServer
from mo_operator.kube.meta.errors import Forbidden
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import CertSource, DirectoryCerts, GeneratedCerts, shared_ca
from mo_operator.matrixone.admin import MOAdminProvider
from mo_operator.matrixone.rpc.connection import Dialer, open_connection
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.settings import (
    ApiSettings,
    LeaderElection,
    OperatorConfig,
    ProbeSettings,
    Serving,
    Settings,
    Startup,
    Webhooks,
)
from mo_operator.webhooks import (
    api_claim_lookup,
    api_object_lookup,
    inject_ca_bundle,
    install_webhook_configurations,
    register,
)

from . import diagnostics
from .errors import address_in_use
from .kubeconfig import load_kubeconfig
from .operator_config import OperatorConfigError, UpstreamOperatorConfig, load_operator_config
from .shutdown import Interrupted, Shutdown

log = logging.getLogger(__name__)
T = TypeVar("T")

WEBHOOK_CA_SECRET = "mo-operator-webhook-ca"


@dataclass(frozen=True)
class RunOptions:
    """What ``mo-operator run`` was told: the operator's settings tree (with
    every default), and what has none: where to connect, the webhooks'
    certificate or URL, whether to install the CRDs, the Go operator's
    configuration directory."""

    config: OperatorConfig
    kubeconfig: str | None
    webhook_cert_dir: str | None
    webhook_url: str | None
    install_crds: bool
    operator_config_dir: str | None
    """The Go operator's configuration directory (its ConfigMap mounted), see
    :mod:`.operator_config`."""

    @classmethod
    def from_flags(cls, flags: Mapping[str, Any]) -> RunOptions:
        """From the ``run`` command's flags: those of the tree go into ``config``."""
        rest = dict(flags)
        defaults = Settings()
        settings = Settings(
            namespaces=tuple(rest.pop("namespaces")),
            rollout_stall_seconds=rest.pop("rollout_stall_seconds"),
            poll_seconds=rest.pop("poll_seconds"),
            busy_poll_seconds=rest.pop("busy_poll_seconds"),
            backup_image=rest.pop("backup_image") or defaults.backup_image,
            cleanup_image=rest.pop("cleanup_image") or defaults.cleanup_image,
            failover=rest.pop("failover"),
            adopt_kruise=rest.pop("adopt_kruise"),
        )
        leader = LeaderElection(
            enabled=rest.pop("leader_elect"),
            namespace=rest.pop("lease_namespace") or "",
            identity=rest.pop("identity") or "",
            lease_duration=rest.pop("lease_duration"),
            renew_deadline=rest.pop("renew_deadline"),
            retry_period=rest.pop("retry_period"),
        )
        config = OperatorConfig(
            settings=settings,
            leader=leader,
            api=ApiSettings(qps=rest.pop("qps"), burst=rest.pop("burst")),
            workers=rest.pop("workers"),
            serving=Serving(
                metrics_bind_address=rest.pop("metrics_bind_address"),
                health_probe_bind_address=rest.pop("health_probe_bind_address"),
            ),
            webhooks=Webhooks(
                enabled=rest.pop("webhooks"),
                port=rest.pop("webhook_port"),
                host=rest.pop("webhook_host"),
                service=rest.pop("webhook_service"),
            ),
            startup=Startup(api_poll_seconds=rest.pop("api_poll_seconds")),
        )
        return cls(config=config, **rest)


def bind_address(text: str) -> tuple[str, int] | None:
    """``host:port`` or ``:port`` (all interfaces); ``0`` means "do not serve"."""
    if text in ("0", ""):
        return None
    host, _, port = text.rpartition(":")
    return host or "0.0.0.0", int(port)


async def start_webhooks(
    options: RunOptions, client: ApiClient, namespace: str, default_args: Mapping[str, Sequence[str]]
) -> WebhookServer:
    """Serve the webhooks and make the API server trust them; ``default_args`` are
    the configured default ``serviceArgs`` by component. A failure after the
    server started stops it again: the caller has no server to stop."""
    certs: CertSource
    if options.webhook_cert_dir:
        certs = DirectoryCerts(options.webhook_cert_dir)  # cert-manager injects its CA itself
    else:
        service = options.config.webhooks.service
        hosts = [
            service,
            f"{service}.{namespace}",
            f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local",
            "localhost",
            "127.0.0.1",
        ]
        certs = GeneratedCerts(hosts, ca=await shared_ca(client, namespace, WEBHOOK_CA_SECRET))
    server = WebhookServer(certs, host=options.config.webhooks.host, port=options.config.webhooks.port)
    register(
        server,
        claims=api_claim_lookup(client),
        objects=api_object_lookup(client),
        operator_manager=FIELD_MANAGER,
        default_args=default_args,
    )
    await server.start()
    try:
        if options.webhook_url:
            await install_webhook_configurations(
                client, url_base=options.webhook_url, ca_bundle=certs.ca_bundle
            )
        elif not options.webhook_cert_dir:
            await inject_ca_bundle(client, certs.ca_bundle)
    except BaseException:
        await server.stop()
        raise
    return server


class SetupRefused(Exception):
    """The API server refused a setup step for want of a permission; the
    message says which, in one line."""


async def setup_step(shutdown: Shutdown, doing: str, work: Awaitable[T]) -> T:
    """``work``, interrupted by a signal, with a 403 turned into ``SetupRefused``."""
    try:
        return await shutdown.interruptible(work)
    except Forbidden as e:
        raise SetupRefused(diagnostics.forbidden(e, doing)) from e


def build_operator(
    options: RunOptions, client: ApiClient, lease_client: ApiClient, admin: MOAdminProvider, namespace: str
) -> Operator:
    """The operator, waiting before its informers start until the API server
    serves every kind they watch (our CRDs may be installed after it).
    ``namespace`` is the Lease's unless ``--lease-namespace`` names one."""
    health = bind_address(options.config.serving.health_probe_bind_address)
    config = options.config
    leader = dataclasses.replace(config.leader, namespace=config.leader.namespace or namespace)
    probes = ProbeSettings(*health) if health else ProbeSettings()
    operator = Operator(
        client,
        admin,
        dataclasses.replace(config, leader=leader, probes=probes),
        lease_client=lease_client,
    )
    resources = operator.informers.resources
    operator.manager.before_start.append(
        lambda: wait_until_served(
            client,
            resources,
            explain=diagnostics.missing_crds,
            poll_seconds=options.config.startup.api_poll_seconds,
            remind_seconds=options.config.startup.api_remind_seconds,
        )
    )
    return operator


async def run_operator(options: RunOptions, dialer: Dialer = open_connection) -> int:
    """Run until SIGTERM/SIGINT (exit code 0, at any stage), lost leadership,
    a missing permission during setup or an unusable ``--operator-config-dir`` (1).
    ``dialer`` opens the connections to MatrixOne (``RpcAdminProvider``)."""
    try:
        upstream = (
            load_operator_config(Path(options.operator_config_dir))
            if options.operator_config_dir
            else UpstreamOperatorConfig()
        )
    except OperatorConfigError as e:
        log.error("--operator-config-dir: %s", e)
        return 1
    if options.operator_config_dir and upstream.default_args and not options.config.webhooks.enabled:
        log.warning(
            "defaultArgs are given by the defaulting webhook: with --no-webhooks they are not applied"
        )
    config = load_kubeconfig(options.kubeconfig)
    shutdown = Shutdown().install()
    leader = options.config.leader
    identity = leader.identity or default_identity()
    options = dataclasses.replace(
        options,
        config=dataclasses.replace(options.config, leader=dataclasses.replace(leader, identity=identity)),
    )
    agent = f"mo-operator/{identity}"
    api = options.config.api
    client = ApiClient(config, field_manager=FIELD_MANAGER, user_agent=agent, qps=api.qps, burst=api.burst)
    lease_client = ApiClient(config, field_manager=FIELD_MANAGER, user_agent=f"{agent}/leader-election")
    namespace = os.environ.get("POD_NAMESPACE") or client.namespace or "default"
    admin = RpcAdminProvider(dialer=dialer)
    servers: list[WebhookServer | ProbeServer] = []
    try:
        try:
            if options.install_crds:
                await setup_step(shutdown, "installing the CRDs (--install-crds)", install_crds(client))
            if options.config.webhooks.enabled:
                doing = (
                    "registering the webhooks (--webhook-url)"
                    if options.webhook_url
                    else "setting up the webhooks"
                )
                servers.append(
                    await setup_step(
                        shutdown, doing, start_webhooks(options, client, namespace, upstream.default_args)
                    )
                )
        except Interrupted:
            log.info("stopped before the operator started")
            return 0
        except SetupRefused as e:
            log.error("%s", e)
            return 1
        metrics_at = bind_address(options.config.serving.metrics_bind_address)
        if metrics_at is not None and metrics_at != bind_address(
            options.config.serving.health_probe_bind_address
        ):
            metrics = ProbeServer(host=metrics_at[0], port=metrics_at[1])
            await metrics.start()
            servers.append(metrics)
        operator = build_operator(options, client, lease_client, admin, namespace)
        shutdown.on_signal(operator.stop)
        await operator.run()
    finally:
        for server in servers:
            await server.stop()
        await admin.close()
        await client.close()
        await lease_client.close()
    if operator.manager.lost_leadership:
        log.error("lost leadership: exiting so that a fresh process can campaign again")
        return 1
    return 0


def run(options: RunOptions, dialer: Dialer = open_connection) -> int:
    """The operator's exit code; a port taken by another process is a ``CliError``
    naming the flag."""
    try:
        return asyncio.run(run_operator(options, dialer))
    except OSError as e:
        ports = {
            options.config.webhooks.port if options.config.webhooks.enabled else 0: "--webhook-port",
            **{
                at[1]: flag
                for flag, text in (
                    ("--metrics-bind-address", options.config.serving.metrics_bind_address),
                    ("--health-probe-bind-address", options.config.serving.health_probe_bind_address),
                )
                if (at := bind_address(text)) is not None
            },
        }
        raise address_in_use(e, ports) or e from None
