"""The HAKeeper bootstrap decision: which stores start it, with which replica IDs.

It is made once and recorded on the LogSet (annotation ``logset.matrixorigin.io/bootstrap``)
before any pod exists, because a HAKeeper cannot be re-bootstrapped with another
membership; every later reconcile reads the record, never recomputes it. The record is
the first write of the plan that decides it: the rest of that plan (the S3 path's claim,
the configs, the StatefulSet) runs only once the record is written, so the LogSet goes
on in the same reconcile instead of waiting for its own update to come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.logset import LogSetSpec
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import annotations_of, name_of, namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.bootstrap import (
    BootstrapError,
    BootstrapReplica,
    decode_annotation,
    default_log_shard_replicas,
    encode_annotation,
    plan_bootstrap,
)

from ..framework import resources as r
from ..framework.writes import Patch


def log_shard_replicas(spec: LogSetSpec) -> int:
    """``initialConfig.logShardReplicas``, or its default for ``replicas`` log stores:
    the Raft group size the bootstrap and the failover limit both come from."""
    given = spec.initial_config.log_shard_replicas if spec.initial_config is not None else None
    return int(given or default_log_shard_replicas(spec.replicas))


def bootstrap_members(
    obj: Mapping[str, Any], spec: LogSetSpec
) -> tuple[tuple[BootstrapReplica, ...], Patch | None]:
    """The recorded bootstrap decision; on first sight, the decision made now and the
    conditional write that records it, to be planned before anything that may use it
    (a conflict stops the plan there: another reconcile recorded one first)."""
    recorded = annotations_of(obj).get(labels.LOGSET_BOOTSTRAP)
    if recorded is not None:
        try:
            return decode_annotation(recorded), None
        except BootstrapError as e:
            raise TerminalError("InvalidBootstrapAnnotation", str(e)) from e
    try:
        members = plan_bootstrap(log_shard_replicas(spec))
    except BootstrapError as e:
        raise TerminalError("InvalidSpec", f"spec.initialConfig.logShardReplicas: {e}") from e
    record = Patch(
        r.LOGSETS,
        namespace_of(obj),
        name_of(obj),
        {
            "metadata": {
                "annotations": {labels.LOGSET_BOOTSTRAP: encode_annotation(members)},
                "resourceVersion": obj["metadata"]["resourceVersion"],
            }
        },
        what="record the HAKeeper bootstrap decision",
    )
    return members, record
