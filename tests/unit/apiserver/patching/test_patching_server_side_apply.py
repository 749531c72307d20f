"""Server-side apply.

References: https://kubernetes.io/docs/reference/using-api/server-side-apply/
(managedFields example, conflicts, shared ownership, field removal when an
applier stops applying, merge strategies, upgrading from client-side apply),
structured-merge-diff merge/update.go (``Apply``, ``prune``) and typed/
(merge, compare, ToFieldSet), and k8s.io/apimachinery
pkg/util/managedfields/internal: conflict.go (messages), skipnonapplied.go
(``before-first-apply``), lastappliedmanager.go and lastappliedupdater.go
(the ``kubectl`` manager and the last-applied annotation).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.patching.errors import PatchError
from mo_devkit.localcluster.apiserver.patching.managed_fields import (
    ApplyConflict,
    record_update,
    server_side_apply,
)
from mo_devkit.localcluster.apiserver.patching.typeinfo import TypeInfo, builtin_type_info, schema_type_info

CM = builtin_type_info("", "ConfigMap")
DEPLOY = builtin_type_info("apps", "Deployment")
SVC = builtin_type_info("", "Service")
T0, T1, T2, T3 = (f"2024-01-01T00:0{i}:00Z" for i in range(4))


def apply(
    live: dict[str, Any] | None,
    config: dict[str, Any],
    manager: str,
    now: str = T1,
    *,
    ti: TypeInfo = CM,
    force: bool = False,
    subresource: str = "",
) -> dict[str, Any]:
    obj = server_side_apply(
        copy.deepcopy(live),
        copy.deepcopy(config),
        manager=manager,
        force=force,
        type_info=ti,
        now=now,
        subresource=subresource,
    )
    obj["metadata"].setdefault("uid", "uid-1")
    return obj


def write(
    live: dict[str, Any], edit: Any, manager: str, now: str, ti: TypeInfo = CM, subresource: str = ""
) -> dict[str, Any]:
    """An ordinary update by ``manager``."""
    new = copy.deepcopy(live)
    edit(new)
    new["metadata"]["managedFields"] = record_update(
        live,
        new,
        manager=manager,
        type_info=ti,
        now=now,
        subresource=subresource,
        api_version=new["apiVersion"],
    )
    return new


def owners(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


def cm(labels: dict[str, str] | None = None, **data: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "test-cm", "namespace": "default"}
    if labels is not None:
        meta["labels"] = labels
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta}
    if data:
        obj["data"] = dict(data)
    return obj


def deployment(replicas: int | None = 3, containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": containers or [{"name": "main", "image": "nginx:1"}]},
        },
    }
    if replicas is not None:
        spec["replicas"] = replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": spec,
    }


def test_create_records_the_docs_example() -> None:
    """The ConfigMap of the SSA docs' managedFields example."""
    obj = apply(None, cm({"test-label": "test"}, key="some value"), "kubectl", T0)
    assert obj["data"] == {"key": "some value"}
    assert obj["metadata"]["managedFields"] == [
        {
            "manager": "kubectl",
            "operation": "Apply",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:data": {"f:key": {}}, "f:metadata": {"f:labels": {"f:test-label": {}}}},
        }
    ]


def test_applying_the_same_configuration_twice_changes_nothing() -> None:
    first = apply(None, deployment(), "mgr", T0, ti=DEPLOY)
    second = apply(first, deployment(), "mgr", T2, ti=DEPLOY)
    assert second == first


def test_conflict_with_an_updater_names_it_like_kube_apiserver() -> None:
    live = apply(None, deployment(), "kubectl", T0, ti=DEPLOY)
    live = write(live, lambda o: o["spec"].update(replicas=5), "kubectl-client-side-apply", T1, DEPLOY)
    with pytest.raises(ApplyConflict) as e:
        apply(live, deployment(), "kubectl", T2, ti=DEPLOY)
    assert e.value.message == (
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas'
    )
    assert e.value.conflicts == [("kubectl-client-side-apply", ".spec.replicas")]
    assert e.value.causes == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "kubectl-client-side-apply" using apps/v1',
            "field": ".spec.replicas",
        }
    ]


def test_force_takes_ownership() -> None:
    live = apply(None, deployment(), "kubectl", T0, ti=DEPLOY)
    live = write(live, lambda o: o["spec"].update(replicas=5), "kubectl-edit", T1, DEPLOY)
    out = apply(live, deployment(), "kubectl", T2, ti=DEPLOY, force=True)
    assert out["spec"]["replicas"] == 3
    assert "kubectl-edit" not in owners(out)  # its only field moved to the applier
    assert "f:replicas" in owners(out)["kubectl"]["fieldsV1"]["f:spec"]
    assert owners(out)["kubectl"]["time"] == T2


def test_several_conflicts_are_grouped_by_manager() -> None:
    live = apply(None, deployment(), "app", T0, ti=DEPLOY)
    live = write(live, lambda o: o["spec"].update(replicas=5), "kubectl-patch", T1, DEPLOY)
    live = write(
        live,
        lambda o: o["spec"]["template"]["spec"]["containers"][0].update(image="x"),
        "kubectl-edit",
        T2,
        DEPLOY,
    )
    live = write(
        live, lambda o: o["spec"]["selector"]["matchLabels"].update(tier="a"), "kubectl-edit", T3, DEPLOY
    )
    with pytest.raises(ApplyConflict) as e:
        apply(live, deployment(), "app", T3, ti=DEPLOY)
    assert e.value.message == (
        "Apply failed with 3 conflicts: "
        'conflicts with "kubectl-edit" using apps/v1:\n'
        "- .spec.selector\n"
        '- .spec.template.spec.containers[name="main"].image\n'
        'conflicts with "kubectl-patch" using apps/v1:\n'
        "- .spec.replicas"
    )


def test_same_value_is_shared_not_a_conflict() -> None:
    live = apply(None, cm(key="v"), "a", T0)
    shared = apply(live, cm(key="v"), "b", T1)
    assert "f:key" in owners(shared)["a"]["fieldsV1"]["f:data"]
    assert "f:key" in owners(shared)["b"]["fieldsV1"]["f:data"]
    assert owners(shared)["b"].get("time") is None  # the object did not change
    # a stops applying the field: b still owns it, so it stays.
    kept = apply(shared, cm(), "a", T2)
    assert kept["data"] == {"key": "v"}
    assert "a" not in owners(kept)
    # b stops too: nobody owns it any more, so it goes.
    gone = apply(kept, cm(), "b", T3)
    assert "data" not in gone


def test_a_field_no_longer_applied_is_removed() -> None:
    live = apply(None, cm({"a": "1", "b": "2"}, x="1", y="2"), "mgr", T0)
    out = apply(live, cm({"a": "1"}, x="1"), "mgr", T1)
    assert out["data"] == {"x": "1"}
    assert out["metadata"]["labels"] == {"a": "1"}


def test_fields_another_updater_set_survive_when_the_applier_drops_its_own() -> None:
    live = apply(None, cm(x="1"), "mgr", T0)
    live = write(live, lambda o: o["data"].update(mine="2"), "editor", T1)
    out = apply(live, cm(), "mgr", T2)
    assert out["data"] == {"mine": "2"}
    assert "mgr" not in owners(out)


def test_removing_an_item_from_a_keyed_list() -> None:
    two = [{"name": "main", "image": "nginx:1"}, {"name": "side", "image": "busybox"}]
    live = apply(None, deployment(containers=two), "mgr", T0, ti=DEPLOY)
    out = apply(live, deployment(), "mgr", T1, ti=DEPLOY)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["main"]
    # Another applier that also applies the item keeps it alive.
    shared = apply(live, deployment(replicas=None, containers=[two[1]]), "other", T1, ti=DEPLOY)
    out = apply(shared, deployment(), "mgr", T2, ti=DEPLOY)
    assert [c["name"] for c in out["spec"]["template"]["spec"]["containers"]] == ["main", "side"]


def test_list_map_with_several_keys() -> None:
    """ServicePort is keyed by port and protocol (protocol defaults to TCP),
    so the same port over TCP and UDP are two items."""
    svc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "dns"},
        "spec": {"ports": [{"port": 53}, {"port": 53, "protocol": "UDP"}]},
    }
    live = apply(None, svc, "mgr", T0, ti=SVC)
    ports = owners(live)["mgr"]["fieldsV1"]["f:spec"]["f:ports"]
    assert set(ports) == {'k:{"port":53,"protocol":"TCP"}', 'k:{"port":53,"protocol":"UDP"}'}
    svc["spec"]["ports"] = [{"port": 53}]
    assert apply(live, svc, "mgr", T1, ti=SVC)["spec"]["ports"] == [{"port": 53}]


def test_set_of_scalars_merges_per_value() -> None:
    live = apply(None, {**cm(), "metadata": {"name": "test-cm", "finalizers": ["a"]}}, "m1", T0)
    both = apply(live, {**cm(), "metadata": {"name": "test-cm", "finalizers": ["b"]}}, "m2", T1)
    assert both["metadata"]["finalizers"] == ["a", "b"]
    assert owners(both)["m2"]["fieldsV1"] == {"f:metadata": {"f:finalizers": {'v:"b"': {}}}}
    # Applying an empty set list owns nothing: m1's value goes, m2's stays.
    out = apply(both, {**cm(), "metadata": {"name": "test-cm", "finalizers": []}}, "m1", T2)
    assert out["metadata"]["finalizers"] == ["b"]


def test_an_applied_empty_map_is_owned() -> None:
    """ToFieldSet counts a field holding ``{}`` as set."""
    out = apply(None, {**cm(), "data": {}}, "m1", T0)
    assert owners(out)["m1"]["fieldsV1"] == {"f:data": {}}


def test_emptied_list_disappears() -> None:
    live = apply(None, {**cm(), "metadata": {"name": "test-cm", "finalizers": ["a"]}}, "m1", T0)
    out = apply(live, cm(), "m1", T1)
    assert "finalizers" not in out["metadata"]


def test_atomic_values_are_replaced_and_owned_whole() -> None:
    live = apply(None, deployment(), "m1", T0, ti=DEPLOY)
    config = deployment()
    config["spec"]["selector"] = {"matchLabels": {"app": "web", "tier": "x"}}
    config["spec"]["template"]["spec"]["containers"][0]["args"] = []
    out = apply(live, config, "m1", T1, ti=DEPLOY)
    assert out["spec"]["selector"] == {"matchLabels": {"app": "web", "tier": "x"}}
    assert out["spec"]["template"]["spec"]["containers"][0]["args"] == []
    mine = owners(out)["m1"]["fieldsV1"]["f:spec"]
    assert mine["f:selector"] == {}
    assert "f:args" in mine["f:template"]["f:spec"]["f:containers"]['k:{"name":"main"}']


def test_nested_maps_from_two_appliers_merge() -> None:
    live = apply(None, cm({"a": "1"}), "m1", T0)
    out = apply(live, cm({"b": "2"}), "m2", T1)
    assert out["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_null_removes_a_field_and_counts_as_a_change() -> None:
    live = apply(None, deployment(), "m1", T0, ti=DEPLOY)
    config = deployment()
    config["spec"]["replicas"] = None
    with pytest.raises(ApplyConflict):
        apply(live, config, "m2", T1, ti=DEPLOY)
    out = apply(live, config, "m1", T1, ti=DEPLOY)
    assert "replicas" not in out["spec"]
    assert "f:replicas" in owners(out)["m1"]["fieldsV1"]["f:spec"]


def test_status_is_ignored_by_a_main_resource_apply() -> None:
    live = apply(None, deployment(), "m1", T0, ti=DEPLOY)
    live["status"] = {"replicas": 1}
    out = apply(live, {**deployment(), "status": {"replicas": 9}}, "m1", T1, ti=DEPLOY)
    assert out["status"] == {"replicas": 1}
    assert "f:status" not in owners(out)["m1"]["fieldsV1"]


def test_status_subresource_apply_owns_status_only() -> None:
    live = apply(None, deployment(), "m1", T0, ti=DEPLOY)
    config = {**deployment(replicas=1), "status": {"replicas": 3}}
    out = apply(live, config, "ctrl", T1, ti=DEPLOY, subresource="status")
    assert out["status"] == {"replicas": 3}
    assert out["spec"]["replicas"] == 3  # spec sent to the status subresource is ignored
    entry = owners(out)["ctrl"]
    assert entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}
    # Another status applier conflicts, named with its subresource.
    other = write(out, lambda o: o["status"].update(replicas=4), "kubelet", T2, DEPLOY, "status")
    with pytest.raises(ApplyConflict) as e:
        apply(other, config, "ctrl", T3, ti=DEPLOY, subresource="status")
    assert e.value.causes[0]["message"] == 'conflict with "kubelet" with subresource "status" using apps/v1'


def test_fields_set_before_the_first_apply_belong_to_a_placeholder() -> None:
    untracked = {**cm(x="1"), "metadata": {"name": "test-cm", "uid": "u"}}
    out = apply(untracked, cm(x="1", y="2"), "mgr", T1)
    assert owners(out)["before-first-apply"]["fieldsV1"] == {"f:data": {".": {}, "f:x": {}}}
    with pytest.raises(ApplyConflict) as e:
        apply(untracked, cm(x="changed"), "mgr", T1)
    assert e.value.conflicts == [("before-first-apply", ".data.x")]


def test_kubectl_takes_fields_still_matching_its_last_applied_annotation() -> None:
    """``kubectl apply --server-side`` after client-side apply: fields whose
    live value is the one in the last-applied annotation move without a
    conflict, and the annotation follows the new configuration."""
    old_config = deployment(replicas=3)
    live = write(
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}},
        lambda o: (
            o.update(copy.deepcopy(old_config)),
            o["metadata"]
            .setdefault("annotations", {})
            .update({"kubectl.kubernetes.io/last-applied-configuration": json.dumps(old_config)}),
        ),
        "kubectl-client-side-apply",
        T0,
        DEPLOY,
    )
    live["metadata"]["uid"] = "u"
    new_config = deployment(replicas=5)
    out = apply(live, new_config, "kubectl", T1, ti=DEPLOY)
    assert out["spec"]["replicas"] == 5
    annotation = json.loads(
        out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    )
    assert annotation == new_config
    with pytest.raises(ApplyConflict):
        apply(live, new_config, "some-other-applier", T1, ti=DEPLOY)
    drifted = write(live, lambda o: o["spec"].update(replicas=4), "kubectl-client-side-apply", T1, DEPLOY)
    with pytest.raises(ApplyConflict):
        apply(drifted, new_config, "kubectl", T2, ti=DEPLOY)


def test_configurations_that_cannot_be_typed() -> None:
    dup = deployment(containers=[{"name": "main"}, {"name": "main"}])
    with pytest.raises(PatchError) as e:
        apply(None, dup, "m", T0, ti=DEPLOY)
    assert e.value.message == (
        "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): "
        '.spec.template.spec.containers: duplicate entries for key [name="main"]'
    )
    assert e.value.code == 500
    nameless = deployment(containers=[{"image": "x"}])
    with pytest.raises(PatchError) as e:
        apply(None, nameless, "m", T0, ti=DEPLOY)
    assert e.value.message.endswith(
        ".spec.template.spec.containers: element 0: associative list with keys has an element that omits "
        'all key fields ["name"] (and doesn\'t have default values for any key fields)'
    )
    with pytest.raises(PatchError) as e:
        apply(None, {**cm(), "metadata": {"name": "x", "managedFields": []}}, "m", T0)
    assert (e.value.message, e.value.code) == ("metadata.managedFields must be nil", 400)


def test_custom_resource_keyed_lists_follow_the_schema() -> None:
    ti = schema_type_info(
        {
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "properties": {
                        "groups": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "size": {"type": "integer"}},
                            },
                        },
                        "args": {"type": "array", "items": {"type": "string"}},
                    },
                }
            },
        }
    )
    cr = {
        "apiVersion": "ex.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        "spec": {"groups": [{"name": "a", "size": 1}], "args": ["x"]},
    }
    live = apply(None, cr, "m1", T0, ti=ti)
    other = {**cr, "spec": {"groups": [{"name": "b", "size": 2}], "args": ["y"]}}
    with pytest.raises(ApplyConflict) as e:
        apply(live, other, "m2", T1, ti=ti)
    assert e.value.conflicts == [("m1", ".spec.args")]
    out = apply(live, {**cr, "spec": {"groups": [{"name": "b", "size": 2}]}}, "m2", T1, ti=ti)
    assert out["spec"]["groups"] == [{"name": "a", "size": 1}, {"name": "b", "size": 2}]
