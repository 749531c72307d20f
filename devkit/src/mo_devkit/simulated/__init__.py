"""The simulated MatrixOne: MatrixOne pods on the workload simulator behave like MatrixOne.

Driven only by API objects (pods by their ``matrixorigin.io/component`` and
``instance`` labels, the ConfigMaps they mount, their images), and reached by the
operator only over morpc, with the product's client, through a dialer
(``SimulatedMatrixOne.dialer``). Modules, bottom up: ``view`` (the objects looked
at), ``configfiles`` (what a process reads), ``resolve`` (where its addresses lead),
``instances`` (one process per pod), ``state`` (HAKeepers, stores, sessions; the one
source of truth), ``lockservice`` (the TN lock services), ``verdicts`` (what the
kubelet reports), ``rpc`` (the processes' morpc servers, a view of the state, and the
address book that leads the cluster's names to them), ``behaviour`` and ``install``
(the wiring).
"""

from mo_devkit.simulated.install import SimulatedMatrixOne, install_simulated_matrixone
from mo_devkit.simulated.rpc.server import Call, Faults
from mo_devkit.simulated.state import MOModel, Settings
from mo_devkit.simulated.verdicts import STATE_ANNOTATION

__all__ = [
    "STATE_ANNOTATION",
    "Call",
    "Faults",
    "MOModel",
    "Settings",
    "SimulatedMatrixOne",
    "install_simulated_matrixone",
]
