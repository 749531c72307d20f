"""The WebUI controller: a cluster's optional web console.

What it owns, named as upstream names them: the Deployment ``<w>-webui``
(the dashboard's backend on 8007 and frontend on 8001), the Service
``<w>-webui`` (port 8001, named ``web``, of ``serviceType``) and the
backend's config. Upstream ignores ``spec.image`` and runs its dashboard
images; so do we (the webhook warns that it has no effect, as for every pod set
field the console does not take). ``updateStrategy`` is the Deployment's
rolling update; a field it leaves out keeps our default (surge 1, none
unavailable), where upstream's would be 0.

The backend logs in to the cluster's ``tp`` CN group (``<w>-tp-cn``) with the
cluster's credential, so its config holds a password: it is kept in an
immutable Secret named by its content (rolled like any config change),
never in a ConfigMap, and the credential is read from the cluster's
``<mo>-credential`` Secret, never invented. A console waits (a condition,
no error) until that Secret exists.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Mapping
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.webui import WebUI, WebUISpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.meta.objects import mapping_at, meta_of, namespace_of, spec_of, uid_of
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import webui as webui_config
from mo_operator.matrixone.config.configmap import hashed_name

from .framework import resources as r
from .framework.admission import admit
from .framework.desired import stamped
from .framework.env import Env
from .framework.meta import child_metadata, cluster_of, is_controlled_by, is_deleting, name_of, set_labels
from .framework.writes import Writes
from .mappers import set_of_pod
from .specs.configmaps import invalid_config_is_terminal
from .specs.deployments import deployment
from .specs.podtemplate import canonical_resources, overlay_pod
from .specs.services import client_service
from .steps.podset import STATELESS, read_roll
from .steps.status import Readiness, report_rollout
from .wiring import Wiring

Obj = dict[str, Any]

COMPONENT = Component.WEBUI
READINESS = Readiness(
    members="consoles ready", not_ready="ConsolesNotReady", all_ready="AllConsolesReady", noun="consoles"
)
BACKEND_IMAGE = "matrixorigin/dashboard:backend-0.1.0"
FRONTEND_IMAGE = "matrixorigin/dashboard:frontend-0.1.0"
CONFIG_BASE_LABEL = "matrixorigin.io/config-base"


def _decode(secret: Mapping[str, Any], key: str) -> str | None:
    raw = mapping_at(secret, "data").get(key)
    return base64.b64decode(raw).decode() if isinstance(raw, str) else None


class WebUIActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admit(WebUI, obj).spec
        namespace, name = ctx.namespace, ctx.name
        credential_name = names.credential_secret_name(cluster_of(obj) or name)
        credential = self.env.caches.get(r.SECRETS, namespace, credential_name)
        username = _decode(credential, "username") if credential else None
        password = _decode(credential, "password") if credential else None
        if not username or not password:
            ctx.set_condition(
                "Ready", False, "WaitingForCredential", f"Secret {credential_name} has no credential yet"
            )
            return None
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        obj_labels = set_labels(COMPONENT, obj)
        config = self._config_secret(obj, spec, obj_labels, username, password)
        workload = deployment(
            obj,
            names.workload_name(COMPONENT, name),
            obj_labels,
            selector,
            replicas=_replicas(spec),
            template=self._template(spec, selector, obj_labels, config["metadata"]["name"]),
            update_strategy=spec.update_strategy if spec is not None else None,
        )
        service = client_service(
            obj,
            names.client_service_name(COMPONENT, name),
            obj_labels,
            selector,
            ports.WEBUI_PORT_NAME,
            ports.WEBUI_FRONTEND,
            service_type=spec.service_type if spec is not None else None,
        )
        desired = [
            (r.SECRETS, stamped(config)),
            (r.SERVICES, stamped(service)),
            (r.DEPLOYMENTS, stamped(workload)),
        ]
        plan = Writes(self.env.client)
        plan.sync(self.env, desired)
        pods, roll = read_roll(ctx, self.env, STATELESS, COMPONENT)
        if roll.complete and not plan:
            self._collect_configs(obj, config["metadata"]["name"], pods, plan)
        report_rollout(ctx, roll, _replicas(spec), READINESS, pending=plan.writes_workload, pods=pods)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True

    def _config_secret(
        self,
        obj: Mapping[str, Any],
        spec: WebUISpec | None,
        obj_labels: Mapping[str, str],
        username: str,
        password: str,
    ) -> Obj:
        name = obj["metadata"]["name"]
        rendered = dump(spec) if spec is not None else {}
        with invalid_config_is_terminal():
            data = webui_config.config_map_data(
                name=name, spec=rendered, username=username, password=password
            )
        base = names.config_map_base_name(COMPONENT, name)
        return {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": child_metadata(obj, hashed_name(base, data), {**obj_labels, CONFIG_BASE_LABEL: base}),
            "type": "Opaque",
            "immutable": True,
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
        }

    def _template(
        self, spec: WebUISpec | None, selector: Mapping[str, str], obj_labels: Mapping[str, str], config: str
    ) -> Obj:
        overlay = spec.overlay if spec is not None else None
        policy = (spec.image_pull_policy if spec is not None else None) or (
            overlay.image_pull_policy if overlay is not None else None
        )
        mount = {"name": layout.CONFIG_VOLUME, "mountPath": layout.CONFIG_PATH, "readOnly": True}
        backend: Obj = {
            "name": "backend",
            "image": BACKEND_IMAGE,
            "command": ["/mocloud-metric-service", "-c", f"{layout.CONFIG_PATH}/{layout.CONFIG_FILE}"],
            "ports": [{"name": "backend", "containerPort": ports.WEBUI_BACKEND, "protocol": "TCP"}],
            "volumeMounts": [mount],
        }
        frontend: Obj = {
            "name": "frontend",
            "image": FRONTEND_IMAGE,
            "ports": [
                {"name": ports.WEBUI_PORT_NAME, "containerPort": ports.WEBUI_FRONTEND, "protocol": "TCP"}
            ],
        }
        resources = canonical_resources(spec.resources if spec is not None else None)
        for container in (backend, frontend):
            if policy:
                container["imagePullPolicy"] = policy
            if resources:
                container["resources"] = resources
        pod_spec: Obj = {
            "containers": [backend, frontend],
            "volumes": [{"name": layout.CONFIG_VOLUME, "secret": {"secretName": config}}],
        }
        if spec is not None and spec.node_selector:
            pod_spec["nodeSelector"] = dict(spec.node_selector)
        if overlay is not None:
            overlay_pod(pod_spec, overlay)
        return {"metadata": {"labels": {**obj_labels, **selector}}, "spec": pod_spec}

    def _collect_configs(
        self, obj: Mapping[str, Any], current: str, pods: list[Mapping[str, Any]], plan: Writes
    ) -> None:
        """Delete config Secrets of earlier versions once no pod mounts them."""
        namespace = namespace_of(obj)
        base = names.config_map_base_name(COMPONENT, name_of(obj))
        used = {
            mapping_at(v, "secret").get("secretName") for p in pods for v in spec_of(p).get("volumes") or ()
        }
        for secret in self.env.caches.list(r.SECRETS, namespace, {CONFIG_BASE_LABEL: base}):
            if (
                name_of(secret) not in used | {current}
                and is_controlled_by(secret, obj)
                and not is_deleting(secret)
            ):
                plan.delete(r.SECRETS, namespace, name_of(secret), uid=uid_of(secret))


def _replicas(spec: WebUISpec | None) -> int:
    """The consoles the spec asks for (none without a spec)."""
    return spec.replicas if spec is not None else 0


WARNING_REASONS = frozenset({"InvalidSpec", "InvalidConfig", "RolloutStalled"})
"""A spec or config refused, or a rollout that stalled."""


def consoles_of_credential(secret: Mapping[str, Any]) -> Iterable[Request]:
    """A cluster's credential Secret to the WebUI of that cluster (named like it)."""
    meta = meta_of(secret)
    if meta.labels.get(labels.COMPONENT) != "MatrixOneCluster":
        return []
    return [Request(meta.namespace, meta.labels.get(labels.INSTANCE, ""))]


def setup(wiring: Wiring) -> None:
    """The web console: a Deployment, its Service and Secret, woken by its pods and by
    its cluster's credential Secret."""
    webui = wiring.actor_controller(
        "webui",
        r.WEBUIS,
        WebUIActor(wiring.env),
        (r.DEPLOYMENTS, r.SERVICES, r.SECRETS),
        warning_reasons=WARNING_REASONS,
    )
    wiring.watch(webui, r.PODS, set_of_pod("WebUI"))
    wiring.watch(webui, r.SECRETS, consoles_of_credential)
