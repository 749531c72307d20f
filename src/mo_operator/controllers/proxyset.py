"""The ProxySet controller: MatrixOne's MySQL proxy and its Service.

What it owns, named as upstream names them: the Deployment ``<p>-proxy``,
the Service ``<p>-proxy`` (port 6001, named ``proxy``, of ``serviceType``),
the metric Service ``<p>-proxy-metric`` (when Prometheus discovers it by
Service) and the immutable hashed ConfigMap. The proxy finds the CNs through
HAKeeper and sends sessions only to CNs HAKeeper holds Working, which is
what lets the CNSet drain a CN without dropping a session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.actor import Context
from mo_operator.kube.selectors import selector_from_dict
from mo_operator.matrixone import names, ports
from mo_operator.matrixone.component import Component

from .common import resources as r
from .common.deployments import deployment
from .common.deps import LogService
from .common.desired import stamped
from .common.meta import set_labels
from .common.podset import STATELESS, Desired, PodSetActor, service_config, template_input
from .common.podtemplate import pod_template
from .common.services import client_service
from .common.statefulsets import Rollout
from .common.status import Readiness

COMPONENT = Component.PROXY
READINESS = Readiness(members="proxies ready", not_ready="ProxiesNotReady", all_ready="AllProxiesReady")


class ProxySetActor(PodSetActor):
    kind = "ProxySet"
    component = COMPONENT
    readiness = READINESS
    workload = STATELESS

    def desired(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        selector: Mapping[str, str],
    ) -> Desired:
        name = obj["metadata"]["name"]
        obj_labels = set_labels(COMPONENT, obj)
        config = service_config(obj, COMPONENT, spec, service, obj_labels)
        template = pod_template(
            template_input(
                obj,
                COMPONENT,
                spec,
                config_map=config["metadata"]["name"],
                selector=selector,
                shared_storage=service.shared_storage,
                obj_labels=obj_labels,
            )
        )
        workload = deployment(
            obj,
            names.workload_name(COMPONENT, name),
            obj_labels,
            selector,
            replicas=int(spec["replicas"]),
            template=template,
            min_ready_seconds=int(spec.get("minReadySeconds") or 0),
        )
        svc = client_service(
            obj,
            names.client_service_name(COMPONENT, name),
            obj_labels,
            selector,
            ports.PROXY_SERVICE_PORT_NAME,
            ports.PROXY_SQL,
            spec,
        )
        return [
            (r.CONFIGMAPS, stamped(config)),
            (r.SERVICES, stamped(svc)),
            (r.DEPLOYMENTS, stamped(workload)),
        ]

    def report(
        self, ctx: Context, pods: Sequence[Mapping[str, Any]], roll: Rollout, selector: Mapping[str, str]
    ) -> None:
        """Where clients connect (the proxy's Service) and how many proxies serve."""
        status = ctx.status
        status["host"] = names.service_host(COMPONENT, ctx.name, ctx.namespace)
        status["port"] = ports.PROXY_SQL
        status["replicas"] = roll.replicas
        status["readyReplicas"] = roll.ready
        status["labelSelector"] = str(selector_from_dict({"matchLabels": selector}))
