"""The ProxySet controller: MatrixOne's MySQL proxy and its Service.

What it owns, named as upstream names them: the Deployment ``<p>-proxy``,
the Service ``<p>-proxy`` (port 6001, named ``proxy``, of ``serviceType``),
the metric Service ``<p>-proxy-metric`` (when Prometheus discovers it by
Service) and the immutable hashed ConfigMap. The proxy finds the CNs through
HAKeeper and sends sessions only to CNs HAKeeper holds Working, which is
what lets the CNSet drain a CN without dropping a session.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.proxyset import ProxySet, ProxySetSpec
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.matrixone import names, ports
from mo_operator.matrixone.component import Component

from .framework import resources as r
from .framework.desired import stamped
from .framework.draft import Drafting
from .framework.meta import name_of, namespace_of
from .mappers import dependents_of_logset, news_for_dependents, set_of_pod
from .sets import guarded_set
from .specs.deployments import deployment
from .specs.services import client_service
from .specs.statefulsets import Rollout
from .steps.podset import STATELESS, Desired, PodSetActor
from .steps.podset_input import SetInput, SetView
from .steps.status import Readiness
from .wiring import Wiring

COMPONENT = Component.PROXY
READINESS = Readiness(
    members="proxies ready", not_ready="ProxiesNotReady", all_ready="AllProxiesReady", noun="proxies"
)


class ProxySetActor(PodSetActor):
    model = ProxySet
    component = COMPONENT
    readiness = READINESS
    workload = STATELESS

    @classmethod
    def services(cls, name: str) -> list[str]:
        return [names.client_service_name(COMPONENT, name)]

    @classmethod
    def desired(cls, given: SetInput[ProxySetSpec]) -> Desired:
        """The client Service, then the Deployment."""
        obj, spec, name = given.obj, given.spec, given.name
        workload = deployment(
            obj,
            names.workload_name(COMPONENT, name),
            given.labels,
            given.selector,
            replicas=spec.replicas,
            template=given.pod_template(),
            min_ready_seconds=spec.min_ready_seconds or 0,
        )
        svc = client_service(
            obj,
            names.client_service_name(COMPONENT, name),
            given.labels,
            given.selector,
            ports.PROXY_SERVICE_PORT_NAME,
            ports.PROXY_SQL,
            service_type=spec.service_type,
            node_port=spec.node_port,
            annotations=spec.service_annotations,
        )
        return [(r.SERVICES, stamped(svc)), (r.DEPLOYMENTS, stamped(workload))]

    @classmethod
    def first_fields(cls, obj: Mapping[str, Any], selector: Mapping[str, str]) -> Mapping[str, Any]:
        return _fields(obj, 0, 0, selector)

    @classmethod
    def report(cls, draft: Drafting, view: SetView, roll: Rollout, selector: Mapping[str, str]) -> None:
        """Where clients connect (the proxy's Service) and how many proxies serve."""
        draft.status.update(_fields(view.obj, roll.replicas, roll.ready, selector))


def _fields(obj: Mapping[str, Any], replicas: int, ready: int, selector: Mapping[str, str]) -> dict[str, Any]:
    return {
        "host": names.service_host(COMPONENT, name_of(obj), namespace_of(obj)),
        "port": ports.PROXY_SQL,
        "replicas": replicas,
        "readyReplicas": ready,
        "labelSelector": str(selector_from_labels(selector)),
    }


def setup(wiring: Wiring) -> None:
    """Proxies: a Deployment, its Services and ConfigMaps, woken by their pods and their LogSet."""
    proxy = guarded_set(
        wiring,
        "proxyset",
        r.PROXYSETS,
        ProxySetActor(wiring.env),
        Component.PROXY,
        (r.DEPLOYMENTS, r.SERVICES, r.CONFIGMAPS, r.PDBS),
    )
    wiring.watch(proxy, r.PODS, set_of_pod("ProxySet"))
    wiring.watch(proxy, r.LOGSETS, dependents_of_logset(wiring.caches, r.PROXYSETS), news_for_dependents)
