"""Where addresses lead, by Kubernetes DNS rules over the API objects.

DNS rules: kubernetes.io/docs/concepts/services-networking/dns-pod-service/ (a Service
name resolves to the Service, ``<hostname>.<subdomain>.<ns>.svc`` to a pod whose
hostname and subdomain match when a headless Service named like the subdomain exists).
"""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.simulated.configfiles import HAKeeperClient
from mo_devkit.simulated.resolve import Unresolved, resolve_address, resolve_client
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone.component import Component

from .factories import NS, log_pod, logset_services, service, set_pod


def _view(*extra_pods: dict[str, Any], services: list[dict[str, Any]] | None = None) -> Snapshot:
    pods = [log_pod(0), log_pod(1), *extra_pods]
    return Snapshot.of(pods=pods, services=logset_services() if services is None else services)


@pytest.mark.parametrize(
    ("address", "namespace"),
    [
        ("mo-log-discovery.ns.svc:32001", "other"),
        ("mo-log-discovery.ns.svc.cluster.local:32001", "other"),
        ("mo-log-discovery.ns:32001", "other"),
        ("mo-log-discovery:32001", NS),
        ("mo-log-1.mo-log-headless.ns.svc:32001", "other"),
    ],
)
def test_addresses_that_lead_to_the_logset(address: str, namespace: str) -> None:
    assert resolve_address(address, namespace, _view()) == (NS, "mo")


@pytest.mark.parametrize(
    ("address", "namespace", "why"),
    [
        ("mo-log-discovery:32001", "other", "not found"),
        ("mo-log-discovery.ns.svc:6001", NS, "no port 6001"),
        ("nowhere.ns.svc:32001", NS, "not found"),
        ("mo-log-7.mo-log-headless.ns.svc:32001", NS, "no pod answers"),
        ("mo-log-0.mo-log-headless.ns.svc:32002", NS, "not a log service"),
        ("no-port", NS, "not host:port"),
    ],
)
def test_addresses_that_lead_nowhere(address: str, namespace: str, why: str) -> None:
    result = resolve_address(address, namespace, _view())
    assert isinstance(result, Unresolved) and why in result.reason


def test_pod_names_need_their_headless_service() -> None:
    only_discovery = [s for s in logset_services() if "discovery" in s["metadata"]["name"]]
    result = resolve_address("mo-log-0.mo-log-headless.ns.svc:32001", NS, _view(services=only_discovery))
    assert isinstance(result, Unresolved) and "DNS record" in result.reason


def test_a_service_must_select_log_pods_of_exactly_one_logset() -> None:
    """A Service selecting nothing has no endpoints; one selecting two LogSets is ambiguous."""
    empty = service("mo-log-discovery", None)
    assert isinstance(resolve_address("mo-log-discovery.ns:32001", NS, _view(services=[empty])), Unresolved)
    both = service("both", {"matrixorigin.io/component": "LogSet"})
    result = resolve_address("both.ns:32001", NS, _view(log_pod(0, logset="other"), services=[both]))
    assert isinstance(result, Unresolved) and "['mo', 'other']" in result.reason


def test_deleting_pods_are_no_endpoints() -> None:
    """A terminating pod is removed from a Service's ready endpoints."""
    pods = [log_pod(0)]
    pods[0]["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    view = Snapshot.of(pods=pods, services=logset_services())
    assert isinstance(resolve_address("mo-log-discovery.ns:32001", NS, view), Unresolved)


def test_client_prefers_discovery_then_tries_every_store() -> None:
    view = _view(log_pod(0, logset="b"), set_pod(Component.CN, "c", 0))
    client = HAKeeperClient(None, ("x.ns.svc.y.z:1", "mo-log-0.mo-log-headless.ns.svc:32001"))
    assert resolve_client(client, NS, view) == ((NS, "mo"),)
    with_discovery = HAKeeperClient("nowhere.ns:32001", client.service_addresses)
    result = resolve_client(with_discovery, NS, view)
    assert isinstance(result, Unresolved) and "nowhere" in result.reason
    assert isinstance(resolve_client(HAKeeperClient(None, ()), NS, view), Unresolved)
