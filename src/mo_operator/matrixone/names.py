"""Names of the objects the operator creates, exactly as upstream names them.

Names are how a migrated cluster keeps its Services, PVCs and DNS records, and how
MatrixOne stores find each other (pod FQDNs are store addresses), so every function
here reproduces upstream's scheme. All are pure string functions.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from mo_operator.matrixone import ports
from mo_operator.matrixone.component import Component

_ORDINAL = re.compile(r"-(0|[1-9][0-9]*)$")


def workload_name(component: Component, set_name: str) -> str:
    """``<set>-<suffix>``: the workload, its pods' name prefix, and the client Service.

    E.g. ``mo-log``, ``mo-dn``, ``mo-tp-cn``, ``mo-proxy``, ``mo-webui``.
    """
    return f"{set_name}-{component.suffix}"


def client_service_name(component: Component, set_name: str) -> str:
    """The Service clients use: ``<cn>-cn`` (SQL 6001), ``<p>-proxy`` (6001), ``<w>-webui``."""
    return workload_name(component, set_name)


def headless_service_name(component: Component, set_name: str) -> str:
    """``<set>-<suffix>-headless``: gives log, TN and CN pods their DNS names."""
    return f"{workload_name(component, set_name)}-headless"


def discovery_service_name(logset_name: str) -> str:
    """``<ls>-log-discovery``: the ClusterIP Service in front of the HAKeeper (port 32001)."""
    return f"{workload_name(Component.LOG, logset_name)}-discovery"


def metric_service_name(component: Component, set_name: str) -> str:
    """``<set>-<suffix>-metric``: the metrics Service of a set (port 7001)."""
    return f"{workload_name(component, set_name)}-metric"


def config_map_base_name(component: Component, set_name: str) -> str:
    """``<set>-<suffix>-config``; the immutable ConfigMap adds ``-<hash>`` (see config.configmap)."""
    return f"{workload_name(component, set_name)}-config"


def log_bootstrap_config_map_name(logset_name: str) -> str:
    """``<ls>-log-bootstrap``: the HAKeeper bootstrap settings, mounted at /etc/bootstrap."""
    return f"{workload_name(Component.LOG, logset_name)}-bootstrap"


def log_gossip_config_map_name(logset_name: str) -> str:
    """``<ls>-log-gossip``: the gossip seeds, rewritten on scale and failover without a restart."""
    return f"{workload_name(Component.LOG, logset_name)}-gossip"


def pod_name(component: Component, set_name: str, ordinal: int) -> str:
    """``<set>-<suffix>-<ordinal>``, as a StatefulSet names its pods."""
    if ordinal < 0:
        raise ValueError(f"ordinal must not be negative, got {ordinal}")
    return f"{workload_name(component, set_name)}-{ordinal}"


def pod_ordinal(name: str) -> int | None:
    """The ordinal at the end of a pod name (``mo-log-2`` → 2), or None if there is none."""
    match = _ORDINAL.search(name)
    return int(match.group(1)) if match else None


def free_ordinals(count: int, taken: Collection[int] = ()) -> list[int]:
    """The ``count`` lowest ordinals not in ``taken``: where a set's next members go,
    filling the holes that deleted or reserved members left before growing past them."""
    ordinals: list[int] = []
    candidate = 0
    while len(ordinals) < count:
        if candidate not in taken:
            ordinals.append(candidate)
        candidate += 1
    return ordinals


def pod_fqdn(pod: str, headless_service: str, namespace: str) -> str:
    """``<pod>.<headless>.<ns>.svc``: a store's address, as MatrixOne and upstream write it.

    The cluster domain is left out on purpose: upstream does so, and the CN UUID is a
    hash of exactly this string (see identity.py).
    """
    return f"{pod}.{headless_service}.{namespace}.svc"


def discovery_host(logset_name: str, namespace: str) -> str:
    """``<ls>-log-discovery.<ns>.svc``: the host a LogSet reports in ``status.discovery.address``."""
    return f"{discovery_service_name(logset_name)}.{namespace}.svc"


def discovery_address(logset_name: str, namespace: str) -> str:
    """``<ls>-log-discovery.<ns>.svc:32001``: where TN, CN and proxy find the HAKeeper."""
    return f"{discovery_host(logset_name, namespace)}:{ports.LOG_SERVICE}"


def service_host(component: Component, set_name: str, namespace: str) -> str:
    """``<set>-<suffix>.<ns>``: the host a CNSet or ProxySet reports in its status."""
    return f"{client_service_name(component, set_name)}.{namespace}"


def cluster_child_name(cluster_name: str) -> str:
    """The name of a MatrixOneCluster's LogSet, DNSet, ProxySet and WebUI: the cluster's own."""
    return cluster_name


def cn_group_cnset_name(cluster_name: str, group: str) -> str:
    """``<mo>-<group>``: the CNSet of one ``cnGroups`` entry (``tp``/``ap`` for the legacy fields)."""
    return f"{cluster_name}-{group}"


def credential_secret_name(cluster_name: str) -> str:
    """``<mo>-credential``: the cluster's initial SQL credential."""
    return f"{cluster_name}-credential"


def metric_credential_secret_name(cluster_name: str) -> str:
    """``<mo>-metric``: the credential of the ``metricReaderEnabled`` SQL user."""
    return f"{cluster_name}-metric"


def webui_cn_host(webui_name: str) -> str:
    """``<w>-tp-cn``: the CN Service the WebUI backend connects to (upstream's fixed choice)."""
    return client_service_name(Component.CN, f"{webui_name}-tp")
