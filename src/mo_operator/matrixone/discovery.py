"""How TN, CN and proxy find the log service, and how log stores find each other.

MatrixOne offers two ways to reach the HAKeeper (``[hakeeper-client]``): one
``discovery-address`` (a Service; MatrixOne asks it where the HAKeeper replicas are) or
a fixed ``service-addresses`` list of log stores. Upstream uses the list before
MatrixOne 2.0 (version.MOFeature.DISCOVERY_FIXED) and the discovery address from 2.0 on,
because only then does a log failover not require restarting every TN and CN.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from mo_operator.matrixone import names, ports
from mo_operator.matrixone.component import Component


@dataclass(frozen=True)
class HAKeeperEndpoint:
    """Where a TN, CN or proxy reaches the HAKeeper.

    ``discovery_address`` is ``host:port`` (a LogSet's ``status.discovery``, or an
    external LogSet's ``haKeeperEndpoint``). ``service_addresses`` lists the log stores
    for MatrixOne before 2.0; leave it empty when it is unknown (an external LogSet),
    and the discovery address is used whatever the version.
    """

    discovery_address: str
    service_addresses: tuple[str, ...] = ()


def _log_store_addresses(logset_name: str, namespace: str, ordinals: Iterable[int], port: int) -> list[str]:
    headless = names.headless_service_name(Component.LOG, logset_name)
    return [
        f"{names.pod_fqdn(names.pod_name(Component.LOG, logset_name, o), headless, namespace)}:{port}"
        for o in ordinals
    ]


def hakeeper_service_addresses(logset_name: str, namespace: str, ordinals: Iterable[int]) -> list[str]:
    """``hakeeper-client.service-addresses``: every live log store on port 32001."""
    return _log_store_addresses(logset_name, namespace, ordinals, ports.LOG_SERVICE)


def gossip_seed_addresses(logset_name: str, namespace: str, ordinals: Iterable[int]) -> list[str]:
    """``logservice.gossip-seed-addresses``: every live log store on port 32002."""
    return _log_store_addresses(logset_name, namespace, ordinals, ports.LOG_GOSSIP)


def logset_endpoint(
    logset_name: str, namespace: str, ordinals: Iterable[int] | None = None
) -> HAKeeperEndpoint:
    """The endpoint of a LogSet in this Kubernetes cluster; with ``ordinals``, also its store list."""
    addresses = (
        () if ordinals is None else tuple(hakeeper_service_addresses(logset_name, namespace, ordinals))
    )
    return HAKeeperEndpoint(names.discovery_address(logset_name, namespace), addresses)
