"""``mo-operator run``: the operator process.

Builds the API client (kubeconfig, or in-cluster when there is none), the
MatrixOne admin interface (the simulated one a local control plane
advertises in its kubeconfig, or MatrixOne's own interface), and runs the
operator until SIGTERM/SIGINT, finishing in-flight reconciles on the way
out. With leader election, losing the lease ends the process (exit code
1), as controller-runtime does, so that the restarted process starts clean.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path

from lightkube.config.kubeconfig import KubeConfig

from mo_operator.api.install import install_crds
from mo_operator.controllers.common.env import Settings
from mo_operator.controllers.operator import Operator, OperatorConfig, default_identity
from mo_operator.kube.client import ApiClient
from mo_operator.matrixone.admin import MOAdminProvider
from mo_operator.matrixone.simulated.remote import RemoteAdminProvider, discover

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunOptions:
    kubeconfig: str | None = None
    namespace: str | None = None
    leader_elect: bool = True
    lease_namespace: str | None = None
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    health_port: int | None = 8081
    qps: float = 50.0
    burst: int = 100
    workers: int = 4
    install_crds: bool = False
    mo_admin_url: str | None = None
    mo_admin_token: str | None = None
    identity: str | None = None


def _config(options: RunOptions) -> KubeConfig:
    if options.kubeconfig:
        return KubeConfig.from_file(options.kubeconfig)
    return KubeConfig.from_env()


def admin_provider(options: RunOptions) -> MOAdminProvider:
    """The simulated MatrixOne's admin server when one is named or advertised,
    else MatrixOne's own interface."""
    if options.mo_admin_url:
        return RemoteAdminProvider(options.mo_admin_url, options.mo_admin_token or "")
    if options.kubeconfig:
        found = discover(Path(options.kubeconfig))
        if found is not None:
            log.info("using the simulated MatrixOne at %s (from the kubeconfig)", found.url)
            return found
    from mo_operator.matrixone.rpc.provider import RpcAdminProvider

    provider: MOAdminProvider = RpcAdminProvider()
    return provider


async def run_operator(options: RunOptions) -> int:
    config = _config(options)
    identity = options.identity or default_identity()
    client = ApiClient(
        config,
        field_manager="mo-operator",
        user_agent=f"mo-operator/{identity}",
        qps=options.qps,
        burst=options.burst,
    )
    lease_client = ApiClient(
        config, field_manager="mo-operator", user_agent=f"mo-operator/{identity}/leader-election"
    )
    admin = admin_provider(options)
    if options.install_crds:
        await install_crds(client)
    operator = Operator(
        client,
        admin,
        OperatorConfig(
            settings=Settings(namespace=options.namespace),
            leader_election=options.leader_elect,
            lease_namespace=options.lease_namespace or client.namespace or "default",
            identity=identity,
            lease_duration=options.lease_duration,
            renew_deadline=options.renew_deadline,
            retry_period=options.retry_period,
            probe_port=options.health_port,
            workers=options.workers,
        ),
        lease_client=lease_client,
    )
    operator.manager.install_signal_handlers()
    try:
        await operator.run()
    finally:
        close = getattr(admin, "close", None)
        if close is not None:
            await close()
        await client.close()
        await lease_client.close()
    if operator.manager.lost_leadership:
        log.error("lost leadership: exiting so that a fresh process can campaign again")
        return 1
    return 0


def run(options: RunOptions) -> int:
    return asyncio.run(run_operator(options))
