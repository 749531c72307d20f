"""A test kit for the operator, as controller-runtime's envtest and kopf's
``KopfRunner`` are for theirs: what an end-to-end scenario or a benchmark
needs to run the operator against a cluster and look at it as a user would.

- ``open_world`` / ``World``: a cluster (embedded, or a real API server with
  the simulated kubelets and MatrixOne attached; in this process, or in one of
  its own for a benchmark: ``cluster_process``), namespaces, a user client,
  kubectl; cleaned up on a shared cluster (``cleanup``);
- ``OperatorRunner``: the operator in this process or as a killable child,
  watched through the runtime's observation points (``observation``);
- ``manifests``: cluster manifests of a ``Shape``, placed on the simulated
  nodes when real;
- ``waiting``: ``eventually``, ``Unmet`` (a "not yet" that says what it saw)
  and the one ``is_ready`` (observedGeneration included);
- ``timings``: the fast timings scenarios run with.

It sits on the top layer, beside the CLI: it knows the whole product and
nothing imports it but tests and benchmarks.
"""

from mo_devkit.localcluster.envtest import free_port

from .cleanup import NAMESPACES, OUR_FINALIZERS, PERSISTENT_VOLUMES
from .cluster_process import ClusterProcess
from .concurrency import bounded
from .kubectl import Kubectl
from .manifests import (
    GROUP_VERSION,
    SIMULATED_STORAGE_CLASS,
    VERSION,
    Shape,
    cluster_manifest,
    place,
    runnable,
)
from .observation import Observation, Write
from .runner import OperatorRunner
from .timings import FAST_SIMULATOR, MO_SETTINGS, OPERATOR_SETTINGS
from .waiting import Unmet, condition, eventually, is_ready, is_settled, observed
from .world import World, joined_world, open_world, remove_crds_and_simulated_nodes

__all__ = [
    "FAST_SIMULATOR",
    "GROUP_VERSION",
    "MO_SETTINGS",
    "NAMESPACES",
    "OPERATOR_SETTINGS",
    "OUR_FINALIZERS",
    "PERSISTENT_VOLUMES",
    "SIMULATED_STORAGE_CLASS",
    "VERSION",
    "ClusterProcess",
    "Kubectl",
    "Observation",
    "OperatorRunner",
    "Shape",
    "Unmet",
    "World",
    "Write",
    "bounded",
    "cluster_manifest",
    "condition",
    "eventually",
    "free_port",
    "is_ready",
    "is_settled",
    "joined_world",
    "observed",
    "open_world",
    "place",
    "remove_crds_and_simulated_nodes",
    "runnable",
]
