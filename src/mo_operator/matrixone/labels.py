"""Label and annotation keys the operator reads and writes, exactly as upstream spells them.

Users and tools (dashboards, scripts, the upstream operator during a migration) select
MatrixOne objects by these keys, so they are part of our compatibility surface.
"""

from __future__ import annotations

from typing import Final

from mo_operator.api.kinds import LOGSET_BOOTSTRAP_ANNOTATION
from mo_operator.matrixone.component import Component

PREFIX: Final = "matrixorigin.io"

# Labels on every sub-resource of a set (upstream common.SubResourceLabels).
NAMESPACE: Final = "matrixorigin.io/namespace"
INSTANCE: Final = "matrixorigin.io/instance"
COMPONENT: Final = "matrixorigin.io/component"
CLUSTER: Final = "matrixorigin.io/cluster"
"""On a MatrixOneCluster's children and their pods: the cluster's name."""

# Other labels.
ACTION_REQUIRED: Final = "matrixorigin.io/action-required"
ACTION_REQUIRED_VALUE: Final = "True"
LOGSET_OWNER: Final = "matrixorigin.io/logset-owner"
"""On a log pod orphaned by failover (failedPodStrategy=Orphan): the LogSet it left."""
CN_UUID: Final = "matrixone.cloud/cn-uuid"
BUCKET_UNIQUE_ID: Final = "matrixorigin.io/bucket-unique-id"
MANAGED_BY: Final = "matrixorigin.io/managed-by"
OWNER_UID: Final = "matrixorigin.io/owner-uid"

# Pod annotations.
CONFIG_SUFFIX: Final = "matrixorigin.io/config-suffix"
SEMANTIC_VERSION: Final = "matrixorigin.io/semantic-version"
OPERATOR_VERSION: Final = "matrixorigin.io/operator-version"
CN_STATE: Final = "matrixorigin.io/cn-state"
"""The CN store state the operator last saw: Unknown, Draining or Up."""
CN_LABEL: Final = "matrixone.cloud/cn-label"
"""JSON of the CNSet's ``cnLabels``, synced to HAKeeper as the store's labels."""
STORE_DRAINING_START: Final = "matrixorigin.io/store-draining-start"
"""RFC 3339 time the operator started draining this CN."""
STORE_CONNECTIONS: Final = "matrixorigin.io/connections"
STORE_SCORE: Final = "matrixorigin.io/score"
STORE_CORDON: Final = "matrixorigin.io/store-cordon"
LOCK_RESTART: Final = "matrixorigin.io/lock-restart"
DIAGNOSE_DRAINING: Final = "matrixorigin.io/diagnos-draining"
"""Spelled as upstream spells it."""
POD_DELETION_COST: Final = "controller.kubernetes.io/pod-deletion-cost"
PROMETHEUS_SCRAPE: Final = "prometheus.io/scrape"
PROMETHEUS_PORT: Final = "prometheus.io/port"
PROMETHEUS_PATH: Final = "prometheus.io/path"

# Object annotations.
LOGSET_BOOTSTRAP: Final = LOGSET_BOOTSTRAP_ANNOTATION
"""On a LogSet: JSON of the HAKeeper bootstrap decision, written once (see bootstrap.py)."""
SKIP_SYNC: Final = "matrixorigin.io/skip-sync"
RESTART_AT: Final = "matrixorigin.io/restart-at"
"""On a cluster or a set: a time (any new value) that restarts its pods, as
``kubectl rollout restart`` does for a Deployment; a cluster restarts component by
component, in dependency order."""
RESTORE_COMPLETE: Final = "matrixorigin.io/restore-complete"

# Pod condition used as a readiness gate on CN pods.
CN_STORE_READINESS: Final = "matrixorigin.io/cn-store"

# Finalizers.
CN_DRAINING_FINALIZER: Final = "matrixorigin.io/cn-draining"
CONFIRM_DELETION_FINALIZER: Final = "matrixorigin.io/confirm-deletion"
BUCKET_DATA_FINALIZER: Final = "matrixorigin.io/bucket-data-finalizer"


def finalizer(controller: str) -> str:
    """The finalizer a controller puts on the objects it reconciles (``matrixorigin.io/<name>``)."""
    return f"{PREFIX}/{controller}"


def sub_resource_labels(component: Component, set_name: str, namespace: str) -> dict[str, str]:
    """Labels of every object a set owns, and the selector of its pods.

    Upstream selects pods by exactly these three labels, so they must never change for
    an existing set (a Deployment/StatefulSet selector is immutable).
    """
    return {NAMESPACE: namespace, INSTANCE: set_name, COMPONENT: component.kind}


def cluster_labels(cluster_name: str) -> dict[str, str]:
    """The label that ties a child set (and its pods) to its MatrixOneCluster."""
    return {CLUSTER: cluster_name}
