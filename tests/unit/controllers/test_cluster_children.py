"""The child sets of a MatrixOneCluster (controllers/cluster/children.py): names,
order, images, what children inherit from the cluster, and which fields of a
child whose turn to roll has not come are held (``held``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mo_operator.api.base import dump, parse
from mo_operator.api.cluster import MatrixOneCluster, MatrixOneClusterSpec
from mo_operator.api.defaulting import default
from mo_operator.controllers.cluster.children import (
    NON_ROLLING,
    ROLE_CN,
    ROLE_LOG,
    ROLE_PROXY,
    ROLE_TN,
    Child,
    Defaulted,
    Renderings,
    cn_groups,
    desired_children,
    held,
)
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.admission import admit
from mo_operator.kube.meta.frozen import freeze
from mo_operator.matrixone import labels

Obj = dict[str, Any]
API = "core.matrixorigin.io/v1alpha1"


def typed(spec: dict[str, Any]) -> MatrixOneClusterSpec:
    """A cluster spec (as admitted) in the typed form the controller reads."""
    return parse(MatrixOneClusterSpec, spec)


def cluster(**spec: Any) -> Obj:
    base: Obj = {
        "version": "1.2.3",
        "logService": {
            "replicas": 3,
            "sharedStorage": {"fileSystem": {"path": "/data"}},
            "volume": {"size": "10Gi"},
        },
        "tn": {"replicas": 1},
        "cnGroups": [{"name": "tp", "replicas": 2}],
    }
    base.update(spec)
    return {
        "apiVersion": API,
        "kind": "MatrixOneCluster",
        "metadata": {"name": "mo", "namespace": "ns", "uid": "uid-mo", "generation": 1},
        "spec": {k: v for k, v in base.items() if v is not None},
    }


def children(obj: Obj, stored: dict[tuple[str, str], Obj] | None = None) -> list[Child]:
    spec = dump(admit(MatrixOneCluster, obj).spec)
    return desired_children(obj, typed(spec), stored or {})


def by_label(kids: list[Child]) -> dict[str, Obj]:
    return {c.label: c.obj for c in kids}


def env_of(child: Obj) -> dict[str, Obj]:
    return {e["name"]: e for e in (child["spec"].get("overlay") or {}).get("env") or ()}


# -------------------------------------------------------------- names, order
def test_names_roles_and_dependency_order() -> None:
    obj = cluster(
        tp={"replicas": 1},
        ap={"replicas": 1},
        cnGroups=[{"name": "b", "replicas": 1}, {"name": "a", "replicas": 1}],
        proxy={"replicas": 2},
    )
    kids = children(obj)
    assert [(c.role, c.label) for c in kids] == [
        (ROLE_LOG, "LogSet mo"),
        (ROLE_TN, "DNSet mo"),
        (ROLE_CN, "CNSet mo-tp"),
        (ROLE_CN, "CNSet mo-ap"),
        (ROLE_CN, "CNSet mo-b"),
        (ROLE_CN, "CNSet mo-a"),
        (ROLE_PROXY, "ProxySet mo"),
    ]
    assert [c.resource for c in kids] == [
        r.LOGSETS,
        r.DNSETS,
        r.CNSETS,
        r.CNSETS,
        r.CNSETS,
        r.CNSETS,
        r.PROXYSETS,
    ]
    assert [c.name for c in kids][:2] == ["mo", "mo"]
    assert [g for g, _ in cn_groups(admit(MatrixOneCluster, obj).spec)] == [
        "tp",
        "ap",
        "b",
        "a",
    ]


def test_every_child_is_owned_and_labelled_with_its_cluster() -> None:
    for child in children(cluster(proxy={"replicas": 1})):
        meta = child.obj["metadata"]
        assert child.obj["apiVersion"] == API
        assert meta["namespace"] == "ns"
        assert meta["labels"] == {labels.CLUSTER: "mo"}
        assert meta["ownerReferences"] == [
            {
                "apiVersion": API,
                "kind": "MatrixOneCluster",
                "name": "mo",
                "uid": "uid-mo",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]


def test_legacy_dn_field_and_no_tn() -> None:
    # validation asks new clusters for .spec.tn; clusters stored before it may have .spec.dn only
    obj = cluster(tn={"replicas": 2})
    spec = dump(admit(MatrixOneCluster, obj).spec)
    legacy = {**spec, "dn": spec["tn"]}
    del legacy["tn"]
    kids = desired_children(obj, typed(legacy), {})
    assert [c.label for c in kids] == ["LogSet mo", "DNSet mo", "CNSet mo-tp"]
    assert by_label(kids)["DNSet mo"]["spec"]["replicas"] == 2
    # tn wins over dn when both are there
    both = desired_children(obj, typed({**spec, "dn": {**spec["tn"], "replicas": 7}}), {})
    assert by_label(both)["DNSet mo"]["spec"]["replicas"] == 2
    without = {k: v for k, v in spec.items() if k not in ("tn", "cnGroups")}
    assert [c.label for c in desired_children(obj, typed(without), {})] == ["LogSet mo"]


def test_deps_point_at_the_clusters_own_sets() -> None:
    kids = by_label(children(cluster(proxy={"replicas": 1})))
    ref = {"metadata": {"name": "mo", "namespace": "ns"}}
    assert "deps" not in kids["LogSet mo"]
    assert kids["DNSet mo"]["deps"] == {"logSet": ref}
    assert kids["CNSet mo-tp"]["deps"] == {"logSet": ref, "dnSet": ref}
    assert kids["ProxySet mo"]["deps"] == {"logSet": ref}
    spec = dump(admit(MatrixOneCluster, cluster()).spec)
    without_tn = by_label(
        desired_children(cluster(), typed({k: v for k, v in spec.items() if k != "tn"}), {})
    )
    assert without_tn["CNSet mo-tp"]["deps"] == {"logSet": ref}


# ------------------------------------------------------------------- images
def test_image_from_version_and_image_repository_unless_the_child_names_one() -> None:
    kids = by_label(children(cluster()))
    assert {k: v["spec"]["image"] for k, v in kids.items()} == {
        "LogSet mo": "matrixorigin/matrixone:1.2.3",
        "DNSet mo": "matrixorigin/matrixone:1.2.3",
        "CNSet mo-tp": "matrixorigin/matrixone:1.2.3",
    }
    mirrored = by_label(
        children(
            cluster(
                imageRepository="registry.local/mo",
                version="2.0.1",
                cnGroups=[{"name": "tp", "replicas": 1, "image": "custom/mo:1.2.9"}],
            )
        )
    )
    assert mirrored["LogSet mo"]["spec"]["image"] == "registry.local/mo:2.0.1"
    assert mirrored["DNSet mo"]["spec"]["image"] == "registry.local/mo:2.0.1"
    assert mirrored["CNSet mo-tp"]["spec"]["image"] == "custom/mo:1.2.9"


# -------------------------------------------------------------- inheritance
INHERITED_VALUES: dict[str, Any] = {
    "nodeSelector": {"pool": "mo"},
    "topologySpread": ["topology.kubernetes.io/zone"],
    "semanticVersion": "1.2.3",
    "operatorVersion": "1.3.0",
    "memoryFsSize": "1Gi",
}
OWN_VALUES: dict[str, Any] = {
    "nodeSelector": {"pool": "own"},
    "topologySpread": ["kubernetes.io/hostname"],
    "semanticVersion": "1.2.4",
    "operatorVersion": "1.3.0",
    "memoryFsSize": "2Gi",
}


@pytest.mark.parametrize("field", sorted(INHERITED_VALUES))
def test_children_inherit_the_clusters_placement_and_versions(field: str) -> None:
    kids = children(cluster(proxy={"replicas": 1}, **{field: INHERITED_VALUES[field]}))
    for child in kids:
        assert child.obj["spec"][field] == INHERITED_VALUES[field], child.label


@pytest.mark.parametrize("field", sorted(OWN_VALUES))
def test_a_childs_own_value_wins(field: str) -> None:
    obj = cluster(
        tn={"replicas": 1, field: OWN_VALUES[field]},
        cnGroups=[{"name": "tp", "replicas": 1, field: OWN_VALUES[field]}],
        **{field: INHERITED_VALUES[field]},
    )
    kids = by_label(children(obj))
    assert kids["DNSet mo"]["spec"][field] == OWN_VALUES[field]
    assert kids["CNSet mo-tp"]["spec"][field] == OWN_VALUES[field]
    assert kids["LogSet mo"]["spec"][field] == INHERITED_VALUES[field]


def test_nothing_to_inherit_adds_nothing() -> None:
    for child in children(cluster()):
        for field in ("nodeSelector", "topologySpread", "semanticVersion", "memoryFsSize"):
            assert field not in child.obj["spec"], (child.label, field)
        assert "imagePullPolicy" not in (child.obj["spec"].get("overlay") or {})


def test_the_image_pull_policy_goes_into_each_overlay_unless_set_there() -> None:
    obj = cluster(
        imagePullPolicy="Always",
        proxy={"replicas": 1},
        cnGroups=[{"name": "tp", "replicas": 1, "overlay": {"imagePullPolicy": "IfNotPresent"}}],
    )
    kids = by_label(children(obj))
    assert kids["LogSet mo"]["spec"]["overlay"]["imagePullPolicy"] == "Always"
    assert kids["DNSet mo"]["spec"]["overlay"]["imagePullPolicy"] == "Always"
    assert kids["ProxySet mo"]["spec"]["overlay"]["imagePullPolicy"] == "Always"
    assert kids["CNSet mo-tp"]["spec"]["overlay"]["imagePullPolicy"] == "IfNotPresent"


def test_a_new_cluster_gives_its_children_the_latest_operator_version() -> None:
    for child in children(cluster()):
        assert child.obj["spec"]["operatorVersion"] == "1.3.0", child.label


# ---------------------------------------------------------------------- CNs
def test_cns_get_the_default_password_by_secret_reference() -> None:
    obj = cluster(
        cnGroups=[
            {
                "name": "tp",
                "replicas": 1,
                "overlay": {
                    "env": [{"name": "DEFAULT_PASSWORD", "value": "plain"}, {"name": "X", "value": "1"}]
                },
            }
        ],
        proxy={"replicas": 1},
    )
    kids = by_label(children(obj))
    cn_env = kids["CNSet mo-tp"]["spec"]["overlay"]["env"]
    password = [e for e in cn_env if e["name"] == "DEFAULT_PASSWORD"]
    assert password == [
        {
            "name": "DEFAULT_PASSWORD",
            "valueFrom": {"secretKeyRef": {"name": "mo-credential", "key": "password"}},
        }
    ]
    assert env_of(kids["CNSet mo-tp"])["X"]["value"] == "1"
    for label in ("LogSet mo", "DNSet mo", "ProxySet mo"):
        assert "DEFAULT_PASSWORD" not in env_of(kids[label]), label


def test_behind_a_proxy_cns_enable_the_proxy_frontend_and_keep_their_config() -> None:
    obj = cluster(
        cnGroups=[
            {"name": "tp", "replicas": 1, "config": '[cn]\nrole = "AP"\n'},
            {"name": "ap", "replicas": 1},
        ],
        proxy={"replicas": 1},
    )
    kids = by_label(children(obj))
    tp = kids["CNSet mo-tp"]["spec"]["config"]
    assert "proxy-enabled = true" in tp and 'role = "AP"' in tp
    assert "proxy-enabled = true" in kids["CNSet mo-ap"]["spec"]["config"]
    without = by_label(children(cluster()))
    assert "proxy-enabled" not in (without["CNSet mo-tp"]["spec"].get("config") or "")


def test_children_are_written_as_the_defaulting_webhook_stores_them() -> None:
    kids = by_label(children(cluster()))
    assert kids["CNSet mo-tp"]["spec"]["role"] == "TP"
    assert kids["CNSet mo-tp"]["spec"]["updateStrategy"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert kids["LogSet mo"]["spec"]["initialConfig"]["logShardReplicas"] == 3


def log_service(replicas: int, **extra: Any) -> Obj:
    return {
        "replicas": replicas,
        "sharedStorage": {"fileSystem": {"path": "/data"}},
        "volume": {"size": "10Gi"},
        **extra,
    }


def test_a_stored_logset_keeps_the_initial_config_it_was_made_with() -> None:
    # made with one log store (so one shard replica), then scaled to three: the
    # defaults computed from today's replicas must not rewrite the bootstrap settings
    small = by_label(children(cluster(logService=log_service(1))))["LogSet mo"]
    assert small["spec"]["initialConfig"] == {"logShardReplicas": 1, "logShards": 1, "dnShards": 1}
    stored = {("LogSet", "mo"): freeze(stored_child(small))}
    grown = by_label(children(cluster(logService=log_service(3)), stored))["LogSet mo"]
    assert grown["spec"]["replicas"] == 3
    assert grown["spec"]["initialConfig"] == small["spec"]["initialConfig"]
    # values the cluster's own spec names still reach the LogSet (a LogSet made with
    # bad settings while the webhook was off stays fixable until it bootstraps)
    explicit = cluster(logService=log_service(3, initialConfig={"logShardReplicas": 3}))
    fixed = by_label(children(explicit, stored))["LogSet mo"]
    assert fixed["spec"]["initialConfig"] == {"logShardReplicas": 3, "logShards": 1, "dnShards": 1}
    # without a stored LogSet, admission's defaults stand
    assert (
        by_label(children(cluster(logService=log_service(3))))["LogSet mo"]["spec"]["initialConfig"][
            "logShardReplicas"
        ]
        == 3
    )


def test_desired_children_is_a_pure_function_of_its_inputs() -> None:
    obj = cluster(proxy={"replicas": 1})
    before = copy.deepcopy(obj)
    assert children(obj) == children(obj)
    assert obj == before


# --------------------------------------------------------------------- held
def stored_child(child: Obj, **spec: Any) -> Obj:
    out = copy.deepcopy(child)
    out["metadata"].update(uid="uid-child", generation=4, resourceVersion="9")
    out["spec"].update(spec)
    out["status"] = {"observedGeneration": 4}
    return out


def test_held_takes_only_the_non_rolling_fields_from_the_desired_child() -> None:
    desired = by_label(
        children(
            cluster(
                version="1.2.4",
                cnGroups=[
                    {
                        "name": "tp",
                        "replicas": 5,
                        "serviceType": "NodePort",
                        "nodePort": 30001,
                        "cnLabels": [{"key": "role", "values": ["etl"]}],
                        "resources": {"limits": {"memory": "4Gi"}},
                    }
                ],
            )
        )
    )["CNSet mo-tp"]
    old = by_label(children(cluster()))["CNSet mo-tp"]
    stored = stored_child(old, serviceAnnotations={"lb": "old"}, pauseUpdate=True)
    got = held(desired, freeze(stored))
    # non-rolling fields: desired values, and gone where the desired child drops them
    for key in ("replicas", "serviceType", "nodePort", "cnLabels"):
        assert got["spec"][key] == desired["spec"][key], key
    assert "serviceAnnotations" not in got["spec"] and "pauseUpdate" not in got["spec"]
    # everything else: as stored
    assert got["spec"]["image"] == "matrixorigin/matrixone:1.2.3"
    assert "resources" not in got["spec"]
    assert {k: v for k, v in got["spec"].items() if k not in NON_ROLLING["CNSet"]} == {
        k: v for k, v in stored["spec"].items() if k not in NON_ROLLING["CNSet"]
    }
    # metadata and deps are the desired child's
    assert got["metadata"] == desired["metadata"] and got["deps"] == desired["deps"]
    assert "status" not in got
    # the result is a plain object, safe to stamp and send
    got["spec"]["image"] = "x"
    assert stored["spec"]["image"] == "matrixorigin/matrixone:1.2.3"


@pytest.mark.parametrize(
    ("kind", "label", "fields"),
    [
        (
            "LogSet",
            "LogSet mo",
            {"replicas": 5, "storeFailureTimeout": "5m0s", "failedPodStrategy": "Orphan"},
        ),
        ("DNSet", "DNSet mo", {"replicas": 2}),
        ("ProxySet", "ProxySet mo", {"replicas": 3, "serviceType": "NodePort", "minReadySeconds": 10}),
    ],
)
def test_held_per_kind(kind: str, label: str, fields: dict[str, Any]) -> None:
    old = by_label(children(cluster(proxy={"replicas": 1})))[label]
    desired = copy.deepcopy(old)
    desired["spec"].update(fields, image="matrixorigin/matrixone:9.9.9")
    got = held(desired, freeze(stored_child(old)))
    assert set(fields) <= NON_ROLLING[kind]
    for key, value in fields.items():
        assert got["spec"][key] == value, key
    assert got["spec"]["image"] == old["spec"]["image"]


def test_held_of_a_settled_child_changes_nothing() -> None:
    for child in children(cluster(proxy={"replicas": 1})):
        stored = stored_child(child.obj)
        assert held(child.obj, freeze(stored)) == child.obj, child.label


# ------------------------------------------------------ remembered defaulting
def test_remembered_defaulting_gives_what_defaulting_gives_and_a_copy_of_its_own() -> None:
    memo = Defaulted()
    small = by_label(children(cluster(logService=log_service(1))))["LogSet mo"]
    stored = freeze(stored_child(small))
    child = {**copy.deepcopy(small), "spec": log_service(3)}
    first = memo.default("LogSet", copy.deepcopy(child), stored)
    assert first == default("LogSet", copy.deepcopy(child), old=stored)
    first["spec"]["replicas"] = 99
    assert memo.default("LogSet", copy.deepcopy(child), stored)["spec"]["replicas"] == 3


def test_remembered_defaulting_follows_a_new_stored_spec_and_ignores_status_writes() -> None:
    memo = Defaulted()
    small = by_label(children(cluster(logService=log_service(1))))["LogSet mo"]
    child = {**copy.deepcopy(small), "spec": log_service(3)}
    made_with_one = stored_child(small)
    kept = memo.default("LogSet", copy.deepcopy(child), freeze(made_with_one))["spec"]["initialConfig"]
    assert kept["logShardReplicas"] == 1
    status_written = {
        **copy.deepcopy(made_with_one),
        "status": {"observedGeneration": 4, "availableStores": []},
    }
    status_written["metadata"]["resourceVersion"] = "10"
    assert (
        memo.default("LogSet", copy.deepcopy(child), freeze(status_written))["spec"]["initialConfig"] == kept
    )
    respecified = stored_child(small, initialConfig={"logShardReplicas": 3, "logShards": 1, "dnShards": 1})
    respecified["metadata"]["generation"] = 5
    again = memo.default("LogSet", copy.deepcopy(child), freeze(respecified))["spec"]["initialConfig"]
    assert again["logShardReplicas"] == 3, "a stored child's new generation is a new input"
    unnamed = copy.deepcopy(respecified)
    del unnamed["metadata"]["uid"]
    assert memo.default("LogSet", copy.deepcopy(child), freeze(unnamed))["spec"]["initialConfig"] == again


def test_remembered_defaulting_keeps_only_the_latest_children() -> None:
    memo = Defaulted(size=2)
    for replicas in (1, 2, 3):
        memo.default("DNSet", {**cluster(), "kind": "DNSet", "spec": {"replicas": replicas}}, None)
    assert len(memo._found) == 2


# ------------------------------------------------------------------ renderings
def _rendered(memo: Renderings, obj: Obj, stored: dict[tuple[str, str], Obj] | None = None) -> Any:
    return memo.of(obj, admit(MatrixOneCluster, obj).spec, stored or {})


def test_a_rendering_is_what_the_children_are_and_is_kept_while_nothing_it_reads_changed() -> None:
    memo, obj = Renderings(), cluster()
    first = _rendered(memo, obj)
    assert [c.obj for c in first.children] == [c.obj for c in children(obj)]
    assert set(first.wants) == {c.label for c in first.children}
    status_written = {**copy.deepcopy(obj), "status": {"phase": "Ready"}}
    assert _rendered(memo, status_written) is first, "a status write renders nothing anew"


@pytest.mark.parametrize(
    "change",
    [
        "spec",
        "restart stamp",
        "stored child's generation",
        "stored child made",
    ],
)
def test_a_rendering_is_made_anew_when_what_it_reads_changed(change: str) -> None:
    memo, obj = Renderings(), cluster()
    made = children(obj)
    log = stored_child(by_label(made)["LogSet mo"])
    stored = {("LogSet", "mo"): log}
    first = _rendered(memo, obj, stored)
    again = copy.deepcopy(obj)
    if change == "spec":
        again["spec"]["cnGroups"][0]["replicas"] = 3
    elif change == "restart stamp":
        again["metadata"]["annotations"] = {labels.RESTART_AT: "2026-11-28T00:00:00Z"}
    elif change == "stored child's generation":
        stored = {("LogSet", "mo"): {**log, "metadata": {**log["metadata"], "generation": 5}}}
    else:
        dn = stored_child(by_label(made)["DNSet mo"])
        stored = {**stored, ("DNSet", "mo"): dn}
    second = _rendered(memo, again, stored)
    assert second is not first
    assert [c.obj for c in second.children] == [c.obj for c in children(again, stored)]
    if change == "spec":
        assert by_label(list(second.children))["CNSet mo-tp"]["spec"]["replicas"] == 3
    if change == "restart stamp":
        log_overlay = by_label(list(second.children))["LogSet mo"]["spec"]["overlay"]
        assert log_overlay["podAnnotations"][labels.RESTART_AT] == "2026-11-28T00:00:00Z"


def test_a_cluster_or_stored_child_without_identity_is_rendered_every_time() -> None:
    memo, obj = Renderings(), cluster()
    anonymous = copy.deepcopy(obj)
    anonymous["metadata"]["uid"] = ""
    assert _rendered(memo, anonymous) is not _rendered(memo, anonymous)
    log = stored_child(by_label(children(obj))["LogSet mo"])
    del log["metadata"]["generation"]
    stored = {("LogSet", "mo"): log}
    assert _rendered(memo, obj, stored) is not _rendered(memo, obj, stored)


def test_renderings_keep_only_the_clusters_reconciled_last() -> None:
    memo = Renderings(size=2)
    objs = [copy.deepcopy(cluster()) for _ in range(3)]
    for i, obj in enumerate(objs):
        obj["metadata"].update(uid=f"uid-{i}", name=f"mo{i}")
    kept = [_rendered(memo, obj) for obj in objs]
    assert _rendered(memo, objs[2]) is kept[2] and _rendered(memo, objs[1]) is kept[1]
    assert _rendered(memo, objs[0]) is not kept[0], "the least recently reconciled went first"
