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
BACKUP_SCHEDULE: Final = "matrixorigin.io/backup-schedule"
"""On a BackupJob a BackupSchedule made, and on its Backup: the schedule's name."""
SCHEDULED_AT: Final = "matrixorigin.io/scheduled-at"
"""On a BackupJob a BackupSchedule made: the scheduled time of its run (RFC 3339)."""
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
LOGSET_RESERVED_ORDINALS: Final = "logset.matrixorigin.io/reserved-ordinals"
"""On a LogSet taken over from the Go operator: the ordinals its log failover retired
(Kruise ``reserveOrdinals``), as a JSON list; no store runs at them (see reserved.py)."""
LOGSET_TEMPLATE_HASH: Final = "logset.matrixorigin.io/template-hash"
"""On a log store pod the LogSet keeps itself (below a reserved ordinal): the hash of the
StatefulSet pod template it was made from, so that a stale one is seen."""
SKIP_SYNC: Final = "matrixorigin.io/skip-sync"
RESTART_AT: Final = "matrixorigin.io/restart-at"
"""On a cluster or a set: a time (any new value) that restarts its pods, as
``kubectl rollout restart`` does for a Deployment; a cluster restarts component by
component, in dependency order."""
RESTORE_COMPLETE: Final = "matrixorigin.io/restore-complete"

# CN pools (upstream api/core/v1alpha1/cnpool_types.go, cnclaim_types.go).
POOL_PHASE: Final = "pool.matrixorigin.io/phase"
"""Label of a pool's CN pod: where it is in its pool life (the ``POOL_PHASE_*`` values)."""
POOL_PHASE_UNKNOWN: Final = "Unknown"
"""Started, not yet registered in HAKeeper: not claimable."""
POOL_PHASE_IDLE: Final = "Idle"
"""Registered, Draining in HAKeeper with no labels (no session reaches it): claimable."""
POOL_PHASE_BOUND: Final = "Bound"
"""Claimed: Working in HAKeeper with its claim's labels."""
POOL_PHASE_DRAINING: Final = "Draining"
"""Reclaimed from a claim that went: its sessions move away before it is Idle again."""
POOL_PHASE_TERMINATING: Final = "Terminating"
"""Leaving the pool (scale-in, outdated, drain timed out): never claimed again."""
POOL_CLAIMED_BY: Final = "pool.matrixorigin.io/claimed-by"
"""Label of a Bound pool pod: the name of the CNClaim holding it."""
POOL_NAME: Final = "pool.matrixorigin.io/pool-name"
"""Label of a pool's pods (and of the claims nominated to it): the CNPool's name."""
POOL_MANAGEMENT_POLICY: Final = "pool.matrixorigin.io/management-policy"
"""Annotation of a pool's pods: ``Pooling``."""
POOL_DIRECT_POD: Final = "pool.matrixorigin.io/direct-pod"
POOL_IN_PLACE_ROLLING: Final = "pool.matrixorigin.io/in-place-rolling"
POOLING: Final = "Pooling"
"""``spec.podManagementPolicy`` of a CNSet whose pods a CNPool hands out to claims."""
POD_OWNER: Final = "matrixorigin.io/owner"
"""Label of a Bound pool pod: its claim's ``spec.ownerName``."""
POD_LAST_OWNER: Final = "matrixorigin.io/last-owner"
"""Label of a reclaimed pool pod: the owner it had (a claim of that owner prefers it)."""
CLAIMSET: Final = "matrixorigin.io/claimset"
"""Label of a CNClaimSet's claims and of the pods they hold: the CNClaimSet's name."""
CLAIM_INSTANCE_ID: Final = "claim.matrixorigin.io/instance-id"
"""Label of a CNClaimSet's claim: its instance id within the set."""
POD_OUTDATED: Final = "matrixorigin.io/outdated"
"""Label of a pool pod of an older template: no claim takes it."""
DELETE_ON_RECLAIM: Final = "matrixorigin.io/delete-on-reclaim"
"""Annotation of a pool pod: once reclaimed and drained, delete it instead of making it Idle."""
RECLAIMED_AT: Final = "matrixorigin.io/reclaimed-at"
"""Annotation of a Draining pool pod: RFC 3339 time its claim let it go."""
REVISION_HASH: Final = "controller-revision-hash"
"""Label of a pool's CNSet: the hash of the pool template it runs."""

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
