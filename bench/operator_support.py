"""Shared load of the operator benchmarks (``bench/operator_*.py``), one
module per job, gathered here so that a script imports from one place:

- ``support_target``: the cluster the operator runs against (the embedded
  control plane in its own process, or a real API server with the kubelet
  simulator attached), namespaces, cleanup;
- ``support_clusters``: benchmark MatrixOneClusters and a user's view of
  when each became Ready;
- ``support_operator``: the product's ``Operator`` in this process, watched
  through the runtime's observation points (a ``ReconcileObserver`` on each
  controller, a write hook on its client), nothing patched;
- ``support_objects``: the objects of a converged cluster, captured through
  the API and created again without the operator;
- ``support_load``: N clusters converged by the operator, copies of one,
  and the arguments and conditions every figure records.

Writes are always counted on the operator's own client (``ApiClient.writes``
and the write hook), never from the server's request log, so every figure
can be taken on a real API server too.
"""

from __future__ import annotations

from support_clusters import (
    GROUP_VERSION,
    SIMULATED_STORAGE_CLASS,
    SMALL,
    VERSION,
    ClusterRef,
    Shape,
    Watcher,
    cluster_manifest,
    create_clusters,
    is_ready,
    layout,
)
from support_load import (
    Load,
    add_operator_arguments,
    common,
    converged_load,
    populate,
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
from support_operator import (
    Instrumentation,
    OperatorUnderTest,
    Unreachable,
    Write,
    for_kind,
    operator_settings,
)
from support_target import (
    NAMESPACES,
    REAL_KUBECONFIG,
    Target,
    bounded,
    cleanup,
    client_of,
    load_average,
    log,
    prepare,
    target,
)

__all__ = [
    "CACHED_KINDS",
    "GROUP_VERSION",
    "NAMESPACES",
    "REAL_KUBECONFIG",
    "SIMULATED_STORAGE_CLASS",
    "SMALL",
    "STATUS_KINDS",
    "VERSION",
    "Captured",
    "ClusterRef",
    "Instrumentation",
    "Load",
    "OperatorUnderTest",
    "Shape",
    "Target",
    "Unreachable",
    "Watcher",
    "Write",
    "add_operator_arguments",
    "bounded",
    "capture",
    "clean",
    "cleanup",
    "client_of",
    "cluster_manifest",
    "common",
    "converged_load",
    "create_clusters",
    "create_objects",
    "for_kind",
    "is_ready",
    "layout",
    "load_average",
    "log",
    "made_by_operator",
    "operator_settings",
    "populate",
    "prepare",
    "replicate",
    "run_child",
    "target",
    "template_cluster",
]
