"""The embedded local control plane: the API server plus the workload
simulator, started together, with a kubeconfig for kubectl and clients."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from .apiserver.server import ApiServer
from .apiserver.storage.watch import BOOKMARK_INTERVAL

log = logging.getLogger(__name__)


class ControlPlane:
    def __init__(
        self,
        *,
        data_dir: str | Path | None = None,
        port: int = 0,
        history_size: int = 10000,
        bookmark_interval: float = BOOKMARK_INTERVAL,
        simulate_workloads: bool = True,
        simulator_options: dict[str, Any] | None = None,
    ) -> None:
        self.server = ApiServer(
            port=port, data_dir=data_dir, history_size=history_size, bookmark_interval=bookmark_interval
        )
        self.simulate_workloads = simulate_workloads
        self.simulator_options = simulator_options or {}
        self.simulator: Any = None
        self._sim_client: Any = None
        self.kubeconfig_path: Path | None = None

    async def start(self, kubeconfig: str | Path | None = None) -> None:
        await self.server.start()
        if kubeconfig is not None:
            self.kubeconfig_path = self.server.write_kubeconfig(kubeconfig)
        if self.simulate_workloads:
            await self._start_simulator()

    async def _start_simulator(self) -> None:
        from .simulator.simulator import Simulator, SimulatorConfig

        config = SimulatorConfig(**self.simulator_options)
        self._sim_client = self.client()
        self.simulator = Simulator(self._sim_client, config)
        await self.simulator.start()

    def client(self) -> Any:
        """A lightkube AsyncClient for this control plane."""
        from lightkube import KubeConfig

        from mo_operator.kube.client.keepalive import lightkube_client

        return lightkube_client(KubeConfig.from_dict(self.server.kubeconfig()), field_manager="localcluster")

    async def stop(self) -> None:
        if self.simulator is not None:
            await self.simulator.stop()
            self.simulator = None
            await self._sim_client.close()
        await self.server.stop()
