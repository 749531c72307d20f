"""Where an address in a MatrixOne config leads: which LogSet's HAKeeper answers it.

A real process resolves the address by DNS: a Service name leads to the pods its
selector picks, and ``<pod>.<subdomain>.<ns>.svc`` exists only for a pod with that
hostname and subdomain when a Service named like the subdomain exists. The simulation
follows the same rules over the API objects, so a controller that forgets the
discovery Service, or points a CN at the wrong LogSet, sees its CNs never register.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_devkit.simulated.configfiles import HAKeeperClient
from mo_devkit.simulated.view import Snapshot, mo_component
from mo_operator.kube.meta.objects import labels_of
from mo_operator.matrixone import labels, ports
from mo_operator.matrixone.component import Component

LogSetKey = tuple[str, str]
"""``(namespace, LogSet name)``: identifies one HAKeeper."""

_CLUSTER_SUFFIX = ".cluster.local"


@dataclass(frozen=True)
class Unresolved:
    """An address that leads to no log service, and why."""

    reason: str


def _split_address(address: str) -> tuple[str, int] | None:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit():
        return None
    return host, int(port)


def _host_labels(host: str) -> list[str]:
    host = host.rstrip(".")
    if host.endswith(_CLUSTER_SUFFIX):
        host = host[: -len(_CLUSTER_SUFFIX)]
    if host.endswith(".svc"):
        host = host[: -len(".svc")]
    return host.split(".")


def _is_deleting(obj: Mapping[str, Any]) -> bool:
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def _logset_of(pod: Mapping[str, Any]) -> str | None:
    if mo_component(pod) is not Component.LOG:
        return None
    return labels_of(pod).get(labels.INSTANCE)


def _via_service(name: str, namespace: str, port: int, view: Snapshot) -> LogSetKey | Unresolved:
    service = view.service(namespace, name)
    if service is None:
        return Unresolved(f"Service {namespace}/{name} not found")
    spec = service.get("spec") or {}
    if port not in {p.get("port") for p in spec.get("ports") or []}:
        return Unresolved(f"Service {namespace}/{name} has no port {port}")
    selector = spec.get("selector") or {}
    if not selector:
        return Unresolved(f"Service {namespace}/{name} selects no pods")
    logsets = {
        logset
        for pod in view.pods_in(namespace)
        if not _is_deleting(pod)
        and all(labels_of(pod).get(k) == v for k, v in selector.items())
        and (logset := _logset_of(pod)) is not None
    }
    if len(logsets) != 1:
        found = "no log pods" if not logsets else f"log pods of {sorted(logsets)}"
        return Unresolved(f"Service {namespace}/{name} selects {found}")
    return namespace, logsets.pop()


def _via_pod_hostname(
    pod_name: str, subdomain: str, namespace: str, port: int, view: Snapshot
) -> LogSetKey | Unresolved:
    where = f"{pod_name}.{subdomain}.{namespace}"
    pod = view.pod(namespace, pod_name)
    spec = (pod or {}).get("spec") or {}
    if pod is None or spec.get("subdomain") != subdomain or spec.get("hostname", pod_name) != pod_name:
        return Unresolved(f"no pod answers to {where}")
    if view.service(namespace, subdomain) is None:
        return Unresolved(f"no Service {namespace}/{subdomain} gives {where} a DNS record")
    logset = _logset_of(pod)
    if logset is None or port != ports.LOG_SERVICE:
        return Unresolved(f"{where}:{port} is not a log service")
    return namespace, logset


def resolve_address(address: str, namespace: str, view: Snapshot) -> LogSetKey | Unresolved:
    """The LogSet behind ``address`` (``host:port``) as seen from a pod in ``namespace``.

    Hosts may be short (``svc``, ``svc.ns``) as DNS search paths allow, or full
    (``svc.ns.svc[.cluster.local]``, ``pod.subdomain.ns.svc``).
    """
    split = _split_address(address)
    if split is None:
        return Unresolved(f"{address!r} is not host:port")
    host, port = split
    parts = _host_labels(host)
    if len(parts) == 1:
        return _via_service(parts[0], namespace, port, view)
    if len(parts) == 2:
        return _via_service(parts[0], parts[1], port, view)
    if len(parts) == 3:
        return _via_pod_hostname(parts[0], parts[1], parts[2], port, view)
    return Unresolved(f"cannot resolve host {host!r}")


def resolve_client(
    client: HAKeeperClient, namespace: str, view: Snapshot
) -> tuple[LogSetKey, ...] | Unresolved:
    """The LogSets a ``[hakeeper-client]`` may reach, in the order it tries them.

    MatrixOne uses the discovery address when there is one and the store list
    otherwise; with a list it tries every store until one leads to the HAKeeper.
    """
    addresses = (client.discovery_address,) if client.discovery_address else client.service_addresses
    found: list[LogSetKey] = []
    reasons: list[str] = []
    for address in addresses:
        result = resolve_address(address, namespace, view)
        if isinstance(result, Unresolved):
            reasons.append(result.reason)
        elif result not in found:
            found.append(result)
    if found:
        return tuple(found)
    return Unresolved("; ".join(reasons) or "no HAKeeper address")


def lookup_namespaces(client: HAKeeperClient, namespace: str) -> frozenset[str]:
    """The namespaces whose MatrixOne pods and Services ``resolve_client`` reads for
    ``client`` from a pod in ``namespace``: its answer stays the same while they do."""
    addresses = (client.discovery_address,) if client.discovery_address else client.service_addresses
    found = {namespace}
    for address in addresses:
        split = _split_address(address)
        if split is not None:
            parts = _host_labels(split[0])
            if len(parts) in (2, 3):
                found.add(parts[-1])
    return frozenset(found)
