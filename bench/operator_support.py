"""Shared load of the operator benchmarks (``bench/operator_*.py``), one
module per job, gathered here so that a script imports from one place. The
world, the operator runner, cluster manifests and their placement on the
simulated nodes, cleanup and the reading of Ready are the test kit's
(``mo_devkit.testing``), as the end-to-end scenarios use them; what is
here is what only benchmarks need:

- ``support_target``: the kit's world with its cluster in a process of its
  own (the embedded control plane, or a real API server with the kubelet
  simulator attached), progress and load average;
- ``support_clusters``: benchmark MatrixOneClusters (their shape, spread
  over namespaces) and a user's view of when each became Ready;
- ``support_objects``: the objects of a converged cluster, captured through
  the API and created again without the operator;
- ``support_load``: N clusters converged by the operator, copies of one,
  and the arguments and conditions every figure records.

Writes are always counted on the operator's own client (``ApiClient.writes``
and the kit's write hook), never from the server's request log, so every
figure can be taken on a real API server too.
"""

from __future__ import annotations

from mo_devkit.testing import OperatorRunner, Write
from support_clusters import SMALL, ClusterRef, Watcher, create_clusters, layout
from support_load import (
    Load,
    add_operator_arguments,
    common,
    converged_load,
    operator_settings,
    populate,
    quiet,
    run_child,
    template_cluster,
)
from support_objects import (
    CACHED_KINDS,
    STATUS_KINDS,
    Captured,
    capture,
    clean,
    create_objects,
    made_by_operator,
    replicate,
)
from support_target import REAL_KUBECONFIG, client_of, load_average, log, target

__all__ = [
    "CACHED_KINDS",
    "REAL_KUBECONFIG",
    "SMALL",
    "STATUS_KINDS",
    "Captured",
    "ClusterRef",
    "Load",
    "OperatorRunner",
    "Watcher",
    "Write",
    "add_operator_arguments",
    "capture",
    "clean",
    "client_of",
    "common",
    "converged_load",
    "create_clusters",
    "create_objects",
    "layout",
    "load_average",
    "log",
    "made_by_operator",
    "operator_settings",
    "populate",
    "quiet",
    "replicate",
    "run_child",
    "target",
    "template_cluster",
]
