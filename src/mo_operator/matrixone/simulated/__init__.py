"""The simulated MatrixOne: MatrixOne pods on the workload simulator behave like MatrixOne.

Driven only by API objects (pods by their ``matrixorigin.io/component`` and
``instance`` labels, the ConfigMaps they mount, their images), and reached by the
operator only through ``MOAdmin`` (``SimulatedMatrixOne.provider``). Modules, bottom up:
``view`` (the objects looked at), ``configfiles`` (what a process reads), ``resolve``
(where its addresses lead), ``instances`` (one process per pod), ``state`` (HAKeepers,
stores, sessions), ``verdicts`` (what the kubelet reports), ``admin``, ``behaviour``
and ``install`` (the wiring).
"""

from mo_operator.matrixone.simulated.admin import AdminCall, SimulatedAdmin, SimulatedAdminProvider
from mo_operator.matrixone.simulated.install import SimulatedMatrixOne, install_simulated_matrixone
from mo_operator.matrixone.simulated.state import MOModel, Settings
from mo_operator.matrixone.simulated.verdicts import STATE_ANNOTATION

__all__ = [
    "STATE_ANNOTATION",
    "AdminCall",
    "MOModel",
    "Settings",
    "SimulatedAdmin",
    "SimulatedAdminProvider",
    "SimulatedMatrixOne",
    "install_simulated_matrixone",
]
