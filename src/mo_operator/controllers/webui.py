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
from dataclasses import dataclass, field
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
from .framework.decision import Decision
from .framework.desired import stamped
from .framework.draft import StatusDraft
from .framework.env import Env
from .framework.meta import child_metadata, cluster_of, is_controlled_by, is_deleting, name_of, set_labels
from .framework.writes import Delete, Intent, Writes, applies, writes_workload
from .mappers import set_of_pod
from .specs.configmaps import invalid_config_is_terminal
from .specs.deployments import deployment
from .specs.podtemplate import canonical_resources, overlay_pod
from .specs.services import client_service
from .steps.podset import STATELESS
from .steps.podset_input import Cached
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


@dataclass(frozen=True)
class ConsoleView:
    """What a console's decision reads, once: the console and its admitted spec, its
    status as known, its cluster's credential Secret (None: not there yet), its
    objects as cached (its config Secrets found by label), its pods and the clock."""

    obj: Mapping[str, Any]
    spec: WebUISpec | None
    known: Mapping[str, Any]
    credential: Mapping[str, Any] | None
    now: float
    stall_seconds: float = 0.0
    cached: Cached = field(default_factory=Cached)
    configs: tuple[Mapping[str, Any], ...] = ()
    """The console's config Secrets as cached (of every version)."""
    pods: tuple[Mapping[str, Any], ...] = ()


def credential_name(obj: Mapping[str, Any]) -> str:
    """The cluster's ``<mo>-credential`` Secret (the console's own name without a cluster)."""
    return names.credential_secret_name(cluster_of(obj) or name_of(obj))


def decide(view: ConsoleView) -> Decision:
    """The console's writes and status from ``view``: pure. Without a credential it
    waits, writing nothing; else it writes what differs of its config Secret, Service
    and Deployment, deletes the config Secrets of earlier versions once its roll is
    complete with nothing else to do, and reports the roll."""
    obj, spec = view.obj, view.spec
    namespace, name = namespace_of(obj), name_of(obj)
    draft = StatusDraft(view.known, generation=meta_of(obj).generation, namespace=namespace)
    credential = view.credential
    username = _decode(credential, "username") if credential else None
    password = _decode(credential, "password") if credential else None
    if not username or not password:
        draft.set_condition(
            "Ready", False, "WaitingForCredential", f"Secret {credential_name(obj)} has no credential yet"
        )
        return draft.decision()
    selector = labels.sub_resource_labels(COMPONENT, name, namespace)
    obj_labels = set_labels(COMPONENT, obj)
    config = config_secret(obj, spec, obj_labels, username, password)
    workload = deployment(
        obj,
        names.workload_name(COMPONENT, name),
        obj_labels,
        selector,
        replicas=_replicas(spec),
        template=console_template(spec, selector, obj_labels, name_of(config)),
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
    intents: list[Intent] = list(applies(desired, view.cached.get, view.cached.applied))
    cached_workload = view.cached.get(r.DEPLOYMENTS, names.workload_name(COMPONENT, name))
    roll = STATELESS.rollout(cached_workload, view.pods, now=view.now, stall_seconds=view.stall_seconds)
    if roll.complete and not intents:
        intents += unused_configs(obj, name_of(config), view.configs, view.pods)
    report_rollout(draft, roll, _replicas(spec), READINESS, pending=writes_workload(intents), pods=view.pods)
    return draft.decision(intents)


class WebUIActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def read(self, ctx: Context) -> ConsoleView:
        """The console as admitted and its cluster's credential; once that is there,
        its objects and pods, from the cache."""
        env, obj = self.env, ctx.obj
        spec = admit(WebUI, obj).spec
        caches, namespace, name = env.caches, ctx.namespace, ctx.name
        credential = caches.get(r.SECRETS, namespace, credential_name(obj))
        now = env.clock()
        if credential is None:
            return ConsoleView(obj, spec, dict(ctx.status), None, now)
        base = names.config_map_base_name(COMPONENT, name)
        configs = tuple(caches.list(r.SECRETS, namespace, {CONFIG_BASE_LABEL: base}))
        objects: dict[tuple[str, str], Mapping[str, Any]] = {(r.SECRETS.kind, name_of(c)): c for c in configs}
        for res, owned in (
            (r.DEPLOYMENTS, names.workload_name(COMPONENT, name)),
            (r.SERVICES, names.client_service_name(COMPONENT, name)),
        ):
            found = caches.get(res, namespace, owned)
            if found is not None:
                objects[(res.kind, owned)] = found
        pods = caches.list(r.PODS, namespace, labels.sub_resource_labels(COMPONENT, name, namespace))
        return ConsoleView(
            obj,
            spec,
            dict(ctx.status),
            credential,
            now,
            env.settings.rollout_stall_seconds,
            Cached(objects, env.unseen.of_owner(uid_of(obj))),
            configs,
            tuple(pods),
        )

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client, self.env.unseen)

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True


def config_secret(
    obj: Mapping[str, Any],
    spec: WebUISpec | None,
    obj_labels: Mapping[str, str],
    username: str,
    password: str,
) -> Obj:
    """The backend's config, holding the credential: an immutable Secret named by its
    content."""
    name = obj["metadata"]["name"]
    rendered = dump(spec) if spec is not None else {}
    with invalid_config_is_terminal():
        data = webui_config.config_map_data(name=name, spec=rendered, username=username, password=password)
    base = names.config_map_base_name(COMPONENT, name)
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": child_metadata(obj, hashed_name(base, data), {**obj_labels, CONFIG_BASE_LABEL: base}),
        "type": "Opaque",
        "immutable": True,
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def console_template(
    spec: WebUISpec | None, selector: Mapping[str, str], obj_labels: Mapping[str, str], config: str
) -> Obj:
    """The console's pod template: the dashboard's backend (mounting ``config``) and
    frontend, with the spec's pull policy, resources, node selector and overlay."""
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
        "ports": [{"name": ports.WEBUI_PORT_NAME, "containerPort": ports.WEBUI_FRONTEND, "protocol": "TCP"}],
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


def unused_configs(
    obj: Mapping[str, Any],
    current: str,
    configs: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
) -> list[Intent]:
    """The deletions of config Secrets of earlier versions (among ``configs``) that no
    pod mounts."""
    namespace = namespace_of(obj)
    used = {mapping_at(v, "secret").get("secretName") for p in pods for v in spec_of(p).get("volumes") or ()}
    return [
        Delete(r.SECRETS, namespace, name_of(secret), uid=uid_of(secret))
        for secret in configs
        if name_of(secret) not in used | {current}
        and is_controlled_by(secret, obj)
        and not is_deleting(secret)
    ]


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
