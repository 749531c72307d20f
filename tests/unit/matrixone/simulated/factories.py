"""API objects shaped as the controllers will make them, with configs from our own renderers.

Using the real renderers means these tests also check that what the operator renders
is a config the simulated MatrixOne accepts.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from typing import Any

from mo_devkit.localcluster.simulator.behaviour import PodVerdict
from mo_devkit.simulated.instances import Instance, observe_instances
from mo_devkit.simulated.state import MOModel, Settings
from mo_devkit.simulated.verdicts import verdict
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.discovery import logset_endpoint

NS = "ns"
STORAGE = {"s3": {"path": "bucket/mo"}}
IMAGE = "matrixorigin/matrixone:2.0.0"
OLD_IMAGE = "matrixorigin/matrixone:1.2.3"

_uids = itertools.count(1)


def node(name: str = "node-0", ready: bool = True) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "Unknown"}]},
    }


def config_map(name: str, data: dict[str, str], namespace: str = NS) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": data}


def service(
    name: str, selector: dict[str, str] | None, port: int = ports.LOG_SERVICE, namespace: str = NS
) -> dict[str, Any]:
    spec: dict[str, Any] = {"ports": [{"port": port}]}
    if selector is not None:
        spec["selector"] = selector
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def logset_services(logset: str = "mo", namespace: str = NS) -> list[dict[str, Any]]:
    """The discovery and headless Services a LogSet controller creates."""
    selector = labels.sub_resource_labels(Component.LOG, logset, namespace)
    return [
        service(names.discovery_service_name(logset), selector, namespace=namespace),
        service(names.headless_service_name(Component.LOG, logset), selector, namespace=namespace),
    ]


def pod(
    component: Component,
    set_name: str,
    name: str,
    *,
    volumes: dict[str, str],
    image: str = IMAGE,
    namespace: str = NS,
    running: bool = True,
    ready: bool = True,
    node_name: str = "node-0",
    restarts: int = 0,
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """A pod running ``component``; ``volumes`` maps volume names to ConfigMap names."""
    headless = names.headless_service_name(component, set_name)
    serial = next(_uids)
    state = {"running": {"startedAt": "2024-01-01T00:00:00Z"}} if running else {"waiting": {}}
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{serial}",
            "labels": labels.sub_resource_labels(component, set_name, namespace),
        },
        "spec": {
            "nodeName": node_name,
            "hostname": name,
            "subdomain": headless,
            "containers": [
                {
                    "name": layout.MAIN_CONTAINER,
                    "image": image,
                    "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
                }
            ],
            "volumes": [{"name": v, "configMap": {"name": cm}} for v, cm in volumes.items()],
        },
        "status": {
            "phase": "Running" if running else "Pending",
            "podIP": f"10.0.{serial // 256 % 256}.{serial % 256}",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [{"name": layout.MAIN_CONTAINER, "state": state, "restartCount": restarts}],
        },
    }


def log_spec(replicas: int = 3, image: str = IMAGE) -> dict[str, Any]:
    return {"replicas": replicas, "image": image, "sharedStorage": STORAGE}


def log_config_maps(logset: str = "mo", replicas: int = 3, members: int = 3) -> list[dict[str, Any]]:
    """The log ConfigMaps: ``<ls>-log-config``, ``-bootstrap`` (``members`` initial members), ``-gossip``."""
    spec = log_spec(replicas)
    return [
        config_map(
            names.config_map_base_name(Component.LOG, logset),
            log_config.config_map_data(name=logset, namespace=NS, spec=spec),
        ),
        config_map(
            names.log_bootstrap_config_map_name(logset),
            log_config.bootstrap_config_map_data(spec=spec, replicas=plan_bootstrap(members)),
        ),
        config_map(
            names.log_gossip_config_map_name(logset),
            log_config.gossip_config_map_data(name=logset, namespace=NS, ordinals=range(replicas)),
        ),
    ]


def log_pod(ordinal: int, logset: str = "mo", **kw: Any) -> dict[str, Any]:
    volumes = {
        layout.CONFIG_VOLUME: names.config_map_base_name(Component.LOG, logset),
        layout.BOOTSTRAP_VOLUME: names.log_bootstrap_config_map_name(logset),
        layout.GOSSIP_VOLUME: names.log_gossip_config_map_name(logset),
    }
    return pod(Component.LOG, logset, names.pod_name(Component.LOG, logset, ordinal), volumes=volumes, **kw)


def component_config_map(
    component: Component,
    set_name: str,
    *,
    logset: str = "mo",
    spec: dict[str, Any] | None = None,
    cm_name: str | None = None,
) -> dict[str, Any]:
    """The ConfigMap of a TN, CN or proxy set pointing at ``logset`` (rendered for 2.0 by default)."""
    data = config_map_data(
        component,
        name=set_name,
        namespace=NS,
        spec=spec if spec is not None else {"image": IMAGE},
        shared_storage=STORAGE,
        hakeeper=logset_endpoint(logset, NS, range(3)),
    )
    return config_map(cm_name or names.config_map_base_name(component, set_name), data)


def set_pod(
    component: Component, set_name: str, ordinal: int, cm_name: str | None = None, **kw: Any
) -> dict[str, Any]:
    volumes = {layout.CONFIG_VOLUME: cm_name or names.config_map_base_name(component, set_name)}
    return pod(component, set_name, names.pod_name(component, set_name, ordinal), volumes=volumes, **kw)


@dataclass
class World:
    """Objects in a pretend API server, and a model advanced over them by explicit time."""

    pods: dict[str, dict[str, Any]] = field(default_factory=dict)
    configmaps: list[dict[str, Any]] = field(default_factory=list)
    services: list[dict[str, Any]] = field(default_factory=list)
    nodes: list[dict[str, Any]] = field(default_factory=lambda: [node()])
    volume_claims: list[dict[str, Any]] = field(default_factory=list)
    bad_images: list[str] = field(default_factory=list)
    settings: Settings = field(
        default_factory=lambda: Settings(store_timeout=5, tick_seconds=1, drain_seconds=10)
    )
    model: MOModel = field(init=False)
    now: float = 1000.0
    instances: dict[str, Instance] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.model = MOModel(self.settings)

    def add(self, *pods: dict[str, Any]) -> None:
        for p in pods:
            self.pods[p["metadata"]["name"]] = p

    def remove(self, name: str) -> None:
        del self.pods[name]

    def edit(self, name: str) -> dict[str, Any]:
        """A copy of pod ``name`` put in its place, to change (objects from a server are not shared)."""
        self.pods[name] = copy.deepcopy(self.pods[name])
        return self.pods[name]

    def snapshot(self) -> Snapshot:
        return Snapshot.of(
            pods=self.pods.values(),
            configmaps=self.configmaps,
            services=self.services,
            nodes=self.nodes,
            volume_claims=self.volume_claims,
        )

    def step(self, seconds: float = 1.0) -> None:
        """Let ``seconds`` pass, then observe."""
        self.now += seconds
        snapshot = self.snapshot()
        found = observe_instances(snapshot, self.bad_images)
        self.instances = {i.pod: i for i in found}
        self.model.observe(found, self.now, snapshot.volume_claims)

    def verdict(self, pod_name: str) -> PodVerdict:
        return verdict(self.instances[pod_name], self.model)

    def uuid(self, pod_name: str) -> str:
        found = self.instances[pod_name].uuid
        assert found is not None
        return found


def cluster(world: World, *, logs: int = 3, cns: int = 2, cn_spec: dict[str, Any] | None = None) -> None:
    """A whole cluster ``mo`` in ``world``: log, one TN, ``cns`` CNs, with their Services."""
    world.configmaps += log_config_maps(replicas=logs, members=min(logs, 3))
    world.configmaps.append(component_config_map(Component.TN, "mo"))
    world.configmaps.append(component_config_map(Component.CN, "mo-tp", spec=cn_spec))
    world.services += logset_services()
    world.add(*(log_pod(i) for i in range(logs)))
    world.add(set_pod(Component.TN, "mo", 0))
    world.add(*(set_pod(Component.CN, "mo-tp", i) for i in range(cns)))
