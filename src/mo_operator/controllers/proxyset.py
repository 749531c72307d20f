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

from mo_operator.kube.actor import Context
from mo_operator.kube.selectors import selector_from_dict
from mo_operator.matrixone import labels, names, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from .common import resources as r
from .common.admission import admitted
from .common.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal
from .common.deployments import deployment, rollout
from .common.deps import LogService, Waiting, resolve
from .common.desired import stamped
from .common.env import Env
from .common.meta import name_of, set_labels
from .common.podtemplate import PodTemplateInput, pod_template, restart_stamp
from .common.prometheus import sync_metric_service
from .common.services import client_service
from .common.status import Readiness, report_rollout
from .common.writes import Writes

Obj = dict[str, Any]

COMPONENT = Component.PROXY
READINESS = Readiness(members="proxies ready", not_ready="ProxiesNotReady", all_ready="AllProxiesReady")


class ProxySetActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admitted("ProxySet", obj)["spec"]
        service = resolve(self.env.caches, obj, spec)
        if isinstance(service, Waiting):
            ctx.set_condition("Ready", False, service.reason, service.message)
            return None
        namespace, name = ctx.namespace, ctx.name
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        desired = self._desired(obj, spec, service, selector)
        plan = Writes(self.env.client)
        plan.sync(self.env.caches, desired)
        sync_metric_service(self.env.caches, obj, COMPONENT, spec, plan)
        pods = self.env.caches.list(r.PODS, namespace, selector)
        dep = self.env.caches.get(r.DEPLOYMENTS, namespace, names.workload_name(COMPONENT, name))
        roll = rollout(dep, pods, now=self.env.clock(), stall_seconds=self.env.settings.rollout_stall_seconds)
        if roll.complete and not plan:
            base = names.config_map_base_name(COMPONENT, name)
            collect_unused(
                self.env.caches, obj, COMPONENT, base, pods, [name_of(d) for _, d in desired], plan
            )
        status = ctx.status
        status["host"] = names.service_host(COMPONENT, name, namespace)
        status["port"] = ports.PROXY_SQL
        status["replicas"] = roll.replicas
        status["readyReplicas"] = roll.ready
        status["labelSelector"] = str(selector_from_dict({"matchLabels": selector}))
        report_rollout(ctx, roll, int(spec["replicas"]), READINESS, pending=bool(plan))
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True

    def _desired(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        selector: Mapping[str, str],
    ) -> list[tuple[Any, Obj]]:
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        obj_labels = set_labels(COMPONENT, obj)
        with invalid_config_is_terminal():
            data = config_map_data(
                COMPONENT,
                name=name,
                namespace=namespace,
                spec=spec,
                shared_storage=service.shared_storage,
                hakeeper=service.endpoint,
            )
        config = hashed_config_map(obj, names.config_map_base_name(COMPONENT, name), obj_labels, data)
        template = pod_template(
            PodTemplateInput(
                component=COMPONENT,
                set_name=name,
                namespace=namespace,
                spec=spec,
                image=str(spec.get("image") or ""),
                config_map=config["metadata"]["name"],
                selector_labels=selector,
                shared_storage=service.shared_storage,
                extra_labels=obj_labels,
                image_pull_policy=(spec.get("overlay") or {}).get("imagePullPolicy"),
                restart_at=restart_stamp(obj),
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
