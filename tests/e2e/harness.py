"""The world an end-to-end scenario runs in, from the shared test kit
(``mo_devkit.testing``), with what only this suite adds: the real cluster
``MO_TEST_KUBECONFIG`` names (read once the session set it), and an operator
runner that fails a scenario whose operator made a request the install's RBAC
refuses (``rbac.py``).

Nothing here relies on what only the embedded server offers: writes are
counted from the operator's own client, not the server's request log, and
pods are made to fail through the simulator's rules ConfigMap, which any
API server stores.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from mo_devkit.testing import runner
from mo_devkit.testing.cleanup import NAMESPACES, OUR_FINALIZERS, PERSISTENT_VOLUMES
from mo_devkit.testing.manifests import GROUP_VERSION, SIMULATED_STORAGE_CLASS, VERSION
from mo_devkit.testing.timings import FAST_SIMULATOR, MO_SETTINGS, OPERATOR_SETTINGS
from mo_devkit.testing.waiting import Unmet, condition, eventually, is_ready
from mo_devkit.testing.world import World

from .rbac import refused

REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""A real API server to run against instead of the embedded one."""

Obj = dict[str, Any]
Check = Callable[[], Awaitable[Any]]

__all__ = [
    "FAST_SIMULATOR",
    "GROUP_VERSION",
    "MO_SETTINGS",
    "NAMESPACES",
    "OPERATOR_SETTINGS",
    "OUR_FINALIZERS",
    "PERSISTENT_VOLUMES",
    "REAL_KUBECONFIG",
    "SIMULATED_STORAGE_CLASS",
    "VERSION",
    "Check",
    "Obj",
    "OperatorRunner",
    "Unmet",
    "World",
    "condition",
    "eventually",
    "is_ready",
]


class OperatorRunner(runner.OperatorRunner):
    """The kit's runner, checking on stop the operator's requests against the install's RBAC."""

    def __init__(self, world: World) -> None:
        super().__init__(world, refused=refused)
