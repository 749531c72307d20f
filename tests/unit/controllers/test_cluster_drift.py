"""A change made on a child set itself (controllers/cluster/drift.py): told apart from
the cluster's own change by the applied hash, and named by the cluster's field."""

from __future__ import annotations

from typing import Any

from mo_operator.api.base import parse
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.controllers.cluster.children import ROLE_CN, ROLE_LOG, ROLE_TN, Child
from mo_operator.controllers.cluster.drift import cluster_field, drifted_fields, reverted_message
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.desired import stamped

Obj = dict[str, Any]


def cnset(name: str = "mo-tp", **spec: Any) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "CNSet",
        "metadata": {"name": name},
        "spec": spec,
    }


def test_a_change_on_the_set_is_told_from_a_change_of_the_cluster() -> None:
    want = stamped(cnset(replicas=2, image="mo:2.1.0"))
    scaled = {**want, "spec": {**want["spec"], "replicas": 4, "defaulted": True}}
    assert drifted_fields(want, scaled) == ["replicas"]
    assert drifted_fields(want, want) == []
    assert drifted_fields(want, None) == [], "a new child has not drifted"
    cluster_changed = stamped(cnset(replicas=3, image="mo:2.1.0"))
    assert drifted_fields(cluster_changed, scaled) == [], "the cluster's own change is no revert"


def spec(**fields: Any) -> MatrixOneClusterSpec:
    """A cluster spec with ``fields``, and what every spec needs."""
    base = {
        "version": "1.2.3",
        "logService": {
            "replicas": 1,
            "sharedStorage": {"fileSystem": {"path": "/d"}},
            "volume": {"size": "1Gi"},
        },
    }
    return parse(MatrixOneClusterSpec, {**base, **fields})


def test_the_message_names_the_cluster_field_to_change() -> None:
    group = Child(ROLE_CN, r.CNSETS, cnset())
    assert reverted_message(group, "mo", spec(cnGroups=[{"name": "tp", "replicas": 1}]), ["replicas"]) == (
        "CNSet mo-tp: spec.replicas changed on the set itself is set back to what MatrixOneCluster mo "
        "says: change spec.cnGroups[name=tp].replicas of the MatrixOneCluster instead"
    )
    assert cluster_field(group, "mo", spec(tp={"replicas": 1})) == "spec.tp"
    assert cluster_field(Child(ROLE_TN, r.DNSETS, cnset("mo")), "mo", spec(dn={"replicas": 1})) == "spec.dn"
    assert cluster_field(Child(ROLE_LOG, r.LOGSETS, cnset("mo")), "mo", spec()) == "spec.logService"
