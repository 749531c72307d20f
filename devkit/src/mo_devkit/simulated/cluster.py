"""A Kubernetes cluster where MatrixOne pods behave like MatrixOne: what the
demo, ``mo-operator control-plane`` and the end-to-end tests run the operator
against.

Two shapes, one interface:

- **embedded**: the embedded API server plus the full workload simulator
  (scheduler, workload controllers, kubelets), started here;
- **attached**: a real API server given by a kubeconfig, where the
  simulator plays only the kubelets of its own simulated Nodes (and their
  volume provisioner), as kwok does, and the real controllers do the rest.

Either way the simulated MatrixOne watches the MatrixOne pods, and its
processes serve morpc on loopback as MatrixOne's do. An operator reaches
them as it reaches a real cluster, by the cluster's names and ports, through
a dialer: ``dialer`` in this process; an operator in another process reads
the address book the simulation writes to ``address_book`` (beside the
kubeconfig for ``mo-operator control-plane``: ``address_book_beside``). The
operator, not the simulation, sets the CN readiness gate, as upstream's
operator does on a real cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightkube import AsyncClient, KubeConfig

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.localcluster.simulator.config import SimulatorConfig
from mo_devkit.localcluster.simulator.simulator import Simulator
from mo_devkit.simulated.install import SimulatedMatrixOne, install_simulated_matrixone
from mo_devkit.simulated.rpc.addressbook import BookDialer
from mo_devkit.simulated.state import Settings
from mo_operator.kube.client.keepalive import lightkube_client

FAST_SIMULATOR: dict[str, Any] = {
    "start_delay": 0.05,
    "ready_delay": 0.05,
    "time_scale": 0.002,
    "nodes": 4,
    "node_pods": 1000,
}
"""``simulator_options`` of ``mo-operator control-plane --fast`` (what the benchmarks
run on): quick kubelets and room for thousands of pods."""


def address_book_beside(kubeconfig: str | Path) -> Path:
    """Where ``mo-operator control-plane`` writes its simulated MatrixOne's address book."""
    path = Path(kubeconfig)
    return path.with_name(f"{path.name}.mo-addresses.json")


class SimulatedCluster:
    def __init__(
        self,
        *,
        attach_to: str | Path | None = None,
        data_dir: str | Path | None = None,
        port: int = 0,
        simulator_options: dict[str, Any] | None = None,
        mo_settings: Settings | None = None,
        control_plane_options: dict[str, Any] | None = None,
        refresh_interval: float = 0.2,
        address_book: str | Path | None = None,
    ) -> None:
        """``attach_to``: the kubeconfig of a real API server (None: start an embedded one);
        ``address_book``: where to keep the address book for operators in other processes."""
        self.attach_to = Path(attach_to) if attach_to is not None else None
        self.data_dir = data_dir
        self.port = port
        self.simulator_options = simulator_options or {}
        self.mo_settings = mo_settings
        self.control_plane_options = control_plane_options or {}
        self.refresh_interval = refresh_interval
        self.address_book = Path(address_book) if address_book is not None else None
        self.control_plane: ControlPlane | None = None
        self.simulator: Simulator | None = None
        self.mo: SimulatedMatrixOne | None = None
        self.kubeconfig: Path | None = None
        self._client: AsyncClient | None = None

    @property
    def dialer(self) -> BookDialer:
        """The dialer of an operator in this process (``RpcAdminProvider(dialer=...)``)."""
        assert self.mo is not None, "not started"
        return self.mo.dialer

    async def start(self, kubeconfig: str | Path | None = None) -> None:
        """Start; for an embedded cluster, write its kubeconfig to ``kubeconfig``."""
        if self.attach_to is None:
            self.control_plane = ControlPlane(
                data_dir=self.data_dir,
                port=self.port,
                simulator_options=self.simulator_options,
                **self.control_plane_options,
            )
            await self.control_plane.start(kubeconfig)
            self.kubeconfig = self.control_plane.kubeconfig_path
            self.simulator = self.control_plane.simulator
        else:
            self.kubeconfig = self.attach_to
            self._client = lightkube_client(
                KubeConfig.from_file(str(self.attach_to)), field_manager="localcluster"
            )
            self.simulator = Simulator(
                self._client, SimulatorConfig(**{"mode": "kubelet", **self.simulator_options})
            )
            await self.simulator.start()
        assert self.simulator is not None
        self.mo = await install_simulated_matrixone(
            self.simulator,
            self.mo_settings,
            refresh_interval=self.refresh_interval,
            cn_store_condition=False,
            book_path=self.address_book,
        )

    async def stop(self) -> None:
        if self.mo is not None:
            await self.mo.stop()
            self.mo = None
        if self.control_plane is not None:
            await self.control_plane.stop()
            self.control_plane = None
        elif self.simulator is not None:
            await self.simulator.stop()
        self.simulator = None
        if self._client is not None:
            await self._client.close()
            self._client = None
