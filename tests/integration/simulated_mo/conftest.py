"""The simulated MatrixOne on the embedded control plane: bare pods, ConfigMaps and
Services written through the API, as the controllers will write them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mo_devkit.localcluster.simulator.config import SimulatorConfig
from mo_devkit.localcluster.simulator.core.kinds import CONFIGMAP, NAMESPACE, POD, SERVICE
from mo_devkit.localcluster.simulator.core.kubeapi import KubeApi
from mo_devkit.localcluster.simulator.simulator import Simulator
from mo_devkit.simulated import Settings, SimulatedMatrixOne, install_simulated_matrixone
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.bootstrap import plan_bootstrap
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.discovery import logset_endpoint
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

NS = "mo-test"
STORAGE = {"s3": {"path": "bucket/mo"}}
IMAGE = "matrixorigin/matrixone:2.0.0"
FAST = {"start_delay": 0.05, "ready_delay": 0.05, "run_duration": 0.1, "time_scale": 0.002}


async def eventually(check: Callable[[], Any], timeout: float = 15.0, interval: float = 0.05) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy."""
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if asyncio.iscoroutine(result):
                result = await result
            if result:
                return result
            await asyncio.sleep(interval)


class MOCluster:
    """The API (as a raw-dict client), the simulated MatrixOne running on it, and the
    operator's morpc client reaching it (``provider``)."""

    def __init__(self, api: KubeApi, mo: SimulatedMatrixOne) -> None:
        self.api = api
        self.mo = mo
        self.provider = RpcAdminProvider(dialer=mo.dialer, timeout=1.0, connect_timeout=0.5)

    async def pod(self, name: str) -> dict[str, Any]:
        found = await self.api.get(POD, NS, name)
        assert found is not None, f"pod {name} is gone"
        return found

    async def condition(self, pod: str, ctype: str) -> str | None:
        conditions = ((await self.pod(pod)).get("status") or {}).get("conditions") or []
        return next((c.get("status") for c in conditions if c.get("type") == ctype), None)

    async def ready(self, pod: str) -> bool:
        return await self.condition(pod, "Ready") == "True"

    async def logset(self, name: str = "mo", replicas: int = 3) -> None:
        """A LogSet's ConfigMaps and Services, as its controller makes them (no pods)."""
        spec = {"replicas": replicas, "image": IMAGE, "sharedStorage": STORAGE}
        data = {
            names.config_map_base_name(Component.LOG, name): log_config.config_map_data(
                name=name, namespace=NS, spec=spec
            ),
            names.log_bootstrap_config_map_name(name): log_config.bootstrap_config_map_data(
                spec=spec, replicas=plan_bootstrap(min(replicas, 3))
            ),
            names.log_gossip_config_map_name(name): log_config.gossip_config_map_data(
                name=name, namespace=NS, ordinals=range(replicas)
            ),
        }
        for cm_name, cm_data in data.items():
            await self.config_map(cm_name, cm_data)
        selector = labels.sub_resource_labels(Component.LOG, name, NS)
        for svc, headless in (
            (names.discovery_service_name(name), False),
            (names.headless_service_name(Component.LOG, name), True),
        ):
            spec_svc: dict[str, Any] = {
                "selector": selector,
                "ports": [{"name": "logservice", "port": ports.LOG_SERVICE}],
            }
            if headless:
                spec_svc |= {"clusterIP": "None", "publishNotReadyAddresses": True}
            await self.api.create(SERVICE, {"metadata": {"name": svc, "namespace": NS}, "spec": spec_svc})

    async def config_map(self, name: str, data: dict[str, str]) -> None:
        await self.api.create(CONFIGMAP, {"metadata": {"name": name, "namespace": NS}, "data": data})

    async def set_config(
        self, component: Component, set_name: str, spec: dict[str, Any] | None = None
    ) -> str:
        """The ConfigMap of a TN/CN/proxy set pointing at LogSet ``mo``; returns its name."""
        data = config_map_data(
            component,
            name=set_name,
            namespace=NS,
            spec=spec or {"image": IMAGE},
            shared_storage=STORAGE,
            hakeeper=logset_endpoint("mo", NS),
        )
        name = names.config_map_base_name(component, set_name)
        await self.config_map(name, data)
        return name

    async def run(
        self,
        component: Component,
        set_name: str,
        ordinal: int,
        *,
        config: str | None = None,
        image: str = IMAGE,
    ) -> str:
        """Create one pod of a set, mounting its ConfigMaps; returns the pod name."""
        name = names.pod_name(component, set_name, ordinal)
        volumes = [
            {
                "name": layout.CONFIG_VOLUME,
                "configMap": {"name": config or names.config_map_base_name(component, set_name)},
            }
        ]
        if component is Component.LOG:
            volumes += [
                {
                    "name": layout.BOOTSTRAP_VOLUME,
                    "configMap": {"name": names.log_bootstrap_config_map_name(set_name)},
                },
                {
                    "name": layout.GOSSIP_VOLUME,
                    "configMap": {"name": names.log_gossip_config_map_name(set_name)},
                },
            ]
        spec: dict[str, Any] = {
            "hostname": name,
            "subdomain": names.headless_service_name(component, set_name),
            "containers": [{"name": layout.MAIN_CONTAINER, "image": image}],
            "volumes": volumes,
        }
        if component is Component.CN:
            spec["readinessGates"] = [{"conditionType": labels.CN_STORE_READINESS}]
        pod = {
            "metadata": {
                "name": name,
                "namespace": NS,
                "labels": labels.sub_resource_labels(component, set_name, NS),
            },
            "spec": spec,
        }
        await self.api.create(POD, pod)
        return name


@pytest.fixture
async def mo_cluster(control_plane: Any) -> AsyncIterator[MOCluster]:
    sim_client, test_client = control_plane.client(), control_plane.client()
    sim = Simulator(sim_client, SimulatorConfig(nodes=2, **FAST))  # type: ignore[arg-type]
    await sim.start(timeout=20)
    mo = await install_simulated_matrixone(
        sim, Settings(store_timeout=0.5, tick_seconds=0.1, drain_seconds=0.5), refresh_interval=0.05
    )
    api = KubeApi(test_client, "simulated-mo-tests")
    await api.create(NAMESPACE, {"metadata": {"name": NS}})
    cluster = MOCluster(api, mo)
    try:
        yield cluster
    finally:
        await cluster.provider.close()
        await mo.stop()
        await sim.stop()
        await sim_client.close()
        await test_client.close()
