"""Strategic merge patch on built-in kinds.

References: the kubectl patch task
(https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/:
containers merge by name, tolerations are replaced, ``$retainKeys`` on a
Deployment strategy), the SMP design doc
(https://github.com/kubernetes/community/blob/master/contributors/devel/sig-api-machinery/strategic-merge-patch.md:
``$patch``, ``$deleteFromPrimitiveList``, ``$setElementOrder``) and
k8s.io/apimachinery pkg/util/strategicpatch/patch.go (ordering of merged
lists: ``normalizeElementOrder``/``mergeSortedSlice``; error messages).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.patching.errors import PatchError
from mo_devkit.localcluster.apiserver.patching.strategic_merge import apply_strategic_merge_patch
from mo_devkit.localcluster.apiserver.patching.typeinfo import builtin_type_info

DEPLOYMENT = builtin_type_info("apps", "Deployment")
POD = builtin_type_info("", "Pod")


def deployment(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "patch-demo", "labels": {"app": "demo"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [{"name": "patch-demo-ctr", "image": "nginx"}],
                    "tolerations": [{"effect": "NoSchedule", "key": "dedicated", "value": "test-team"}],
                },
            },
            **spec,
        },
    }


def pod_spec(obj: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = obj["spec"]["template"]["spec"]
    return spec


def test_containers_merge_by_name_tolerations_replaced() -> None:
    """The kubectl patch task: the patch adds a second container (kept with
    the first) and a toleration (which replaces the list)."""
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "patch-demo-ctr-2", "image": "redis"}],
                    "tolerations": [{"effect": "NoSchedule", "key": "disktype", "value": "ssd"}],
                }
            }
        }
    }
    out = pod_spec(apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT))
    assert out["containers"] == [
        {"name": "patch-demo-ctr-2", "image": "redis"},
        {"name": "patch-demo-ctr", "image": "nginx"},
    ]
    assert out["tolerations"] == [{"effect": "NoSchedule", "key": "disktype", "value": "ssd"}]


def test_inputs_are_not_changed() -> None:
    original = deployment()
    patch: dict[str, Any] = {"spec": {"replicas": None, "template": {"spec": {"containers": []}}}}
    before = copy.deepcopy((original, patch))
    apply_strategic_merge_patch(original, patch, DEPLOYMENT)
    assert (original, patch) == before


def test_merged_item_fields_merge_and_null_deletes() -> None:
    patch = {
        "metadata": {"labels": {"app": None, "tier": "web"}},
        "spec": {
            "replicas": None,
            "template": {"spec": {"containers": [{"name": "patch-demo-ctr", "args": ["-v"]}]}},
        },
    }
    out = apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT)
    assert out["metadata"]["labels"] == {"tier": "web"}
    assert "replicas" not in out["spec"]
    assert pod_spec(out)["containers"] == [{"name": "patch-demo-ctr", "image": "nginx", "args": ["-v"]}]


def test_retain_keys_clears_unlisted_fields() -> None:
    """The kubectl patch task: switching a Deployment to Recreate with
    ``$retainKeys: [type]`` drops rollingUpdate."""
    original = deployment(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}})
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert apply_strategic_merge_patch(original, patch, DEPLOYMENT)["spec"]["strategy"] == {
        "type": "Recreate"
    }
    bad = {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(original, bad, DEPLOYMENT)
    assert (e.value.message, e.value.code) == ("invalid patch format of retainKeys", 400)


def test_patch_replace_and_delete_on_maps() -> None:
    """``$patch: delete`` on a live map leaves it empty (handleDirectiveInMergeMap)."""
    replace = {"spec": {"template": {"metadata": {"labels": {"$patch": "replace", "only": "this"}}}}}
    out = apply_strategic_merge_patch(deployment(), replace, DEPLOYMENT)
    assert out["spec"]["template"]["metadata"]["labels"] == {"only": "this"}
    delete = {"metadata": {"labels": {"$patch": "delete"}}}
    assert apply_strategic_merge_patch(deployment(), delete, DEPLOYMENT)["metadata"]["labels"] == {}


def test_patch_delete_and_replace_items() -> None:
    original = deployment()
    pod_spec(original)["containers"].append({"name": "side", "image": "busybox"})
    delete = {"spec": {"template": {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}}}
    assert [
        c["name"] for c in pod_spec(apply_strategic_merge_patch(original, delete, DEPLOYMENT))["containers"]
    ] == ["patch-demo-ctr"]
    replace = {"spec": {"template": {"spec": {"containers": [{"$patch": "replace"}, {"name": "only"}]}}}}
    assert pod_spec(apply_strategic_merge_patch(original, replace, DEPLOYMENT))["containers"] == [
        {"name": "only"}
    ]


def test_primitive_merge_list_union_and_deletion_list() -> None:
    """ObjectMeta.finalizers (``patchStrategy:"merge"``): a union ordered as
    the patch with live-only items kept in place; ``$deleteFromPrimitiveList``
    removes."""
    original = {"metadata": {"finalizers": ["a", "b"]}}
    out = apply_strategic_merge_patch(original, {"metadata": {"finalizers": ["c", "a"]}}, POD)
    assert out["metadata"]["finalizers"] == ["c", "a", "b"]
    out = apply_strategic_merge_patch(
        original, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}, POD
    )
    assert out["metadata"]["finalizers"] == ["b"]


def test_set_element_order() -> None:
    original = {"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b"}, {"name": "c"}]}}
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}],
            "containers": [{"name": "a", "image": "2"}],
        }
    }
    out = apply_strategic_merge_patch(original, patch, POD)
    assert out["spec"]["containers"] == [{"name": "c"}, {"name": "a", "image": "2"}, {"name": "b"}]


def test_set_element_order_must_agree_with_the_patch() -> None:
    original = {"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}
    patch = {
        "spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
            "containers": [{"name": "b"}, {"name": "a"}],
        }
    }
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(original, patch, POD)
    assert "doesn't match $setElementOrder list" in e.value.message


def test_env_and_ports_merge_by_their_keys() -> None:
    original = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                }
            ]
        }
    }
    patch = {
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "env": [{"name": "B", "value": "3"}, {"name": "A", "$patch": "delete"}],
                    "ports": [{"containerPort": 80, "name": "http"}],
                }
            ]
        }
    }
    out = apply_strategic_merge_patch(original, patch, POD)["spec"]["containers"][0]
    assert out["env"] == [{"name": "B", "value": "3"}]
    assert out["ports"] == [{"containerPort": 80, "protocol": "TCP", "name": "http"}]


def test_service_ports_merge_by_port() -> None:
    svc = builtin_type_info("", "Service")
    original = {"spec": {"ports": [{"port": 80, "targetPort": 8080}], "selector": {"a": "b"}}}
    out = apply_strategic_merge_patch(
        original, {"spec": {"ports": [{"port": 443}, {"port": 80, "name": "h"}]}}, svc
    )
    assert out["spec"]["ports"] == [{"port": 443}, {"port": 80, "targetPort": 8080, "name": "h"}]


def test_job_conditions_merge_by_type_and_owner_references_by_uid() -> None:
    job = builtin_type_info("batch", "Job")
    original = {
        "metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]},
        "status": {"conditions": [{"type": "Complete", "status": "False"}]},
    }
    patch = {
        "metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]},
        "status": {"conditions": [{"type": "Complete", "status": "True"}]},
    }
    out = apply_strategic_merge_patch(original, patch, job)
    assert out["status"]["conditions"] == [{"type": "Complete", "status": "True"}]
    assert [r["uid"] for r in out["metadata"]["ownerReferences"]] == ["2", "1"]


def test_replace_strategy_on_a_map() -> None:
    """PodDisruptionBudgetSpec.selector has ``patchStrategy:"replace"``."""
    pdb = builtin_type_info("policy", "PodDisruptionBudget")
    original = {"spec": {"selector": {"matchLabels": {"a": "1"}, "matchExpressions": []}}}
    out = apply_strategic_merge_patch(original, {"spec": {"selector": {"matchLabels": {"b": "2"}}}}, pdb)
    assert out["spec"]["selector"] == {"matchLabels": {"b": "2"}}


def test_new_values_carry_no_directives_or_nulls() -> None:
    """A new list item is appended as sent and then decoded into the Go type,
    which drops nulls and the unknown directive keys but keeps the maps."""
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {"name": "new", "image": None, "env": [{"name": "X", "$patch": "delete"}]}
                    ],
                    "volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["name", "emptyDir"]}],
                }
            }
        }
    }
    out = pod_spec(apply_strategic_merge_patch(deployment(), patch, DEPLOYMENT))
    assert out["containers"][0] == {"name": "new", "env": [{"name": "X"}]}
    assert out["volumes"] == [{"name": "v", "emptyDir": {}}]


def test_directive_maps_placed_where_nothing_was_are_dropped() -> None:
    """Unmatched patch values go through ``removeDirectives``: a map carrying
    ``$patch`` is not stored at all."""
    original: dict[str, Any] = {"metadata": {"name": "x"}}
    patch = {
        "metadata": {
            "annotations": {"$patch": "replace", "a": "b"},
            "labels": {"k": {"$patch": "delete"}, "j": "1"},
        }
    }
    assert apply_strategic_merge_patch(original, patch, POD) == {
        "metadata": {"name": "x", "labels": {"j": "1"}}
    }


def test_missing_merge_key_is_an_error() -> None:
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(
            deployment(), {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, DEPLOYMENT
        )
    assert e.value.message == "map: map[image:x] does not contain declared merge key: name"


def test_unknown_directive_and_list_of_lists() -> None:
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch({"metadata": {}}, {"metadata": {"$patch": "explode"}}, POD)
    assert e.value.message.startswith("unknown patch type: explode in map:")
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch(
            {"metadata": {"finalizers": ["a"]}}, {"metadata": {"finalizers": [["b"]]}}, POD
        )
    assert (e.value.message, e.value.code) == ("lists of lists are not supported", 422)


def test_patch_must_be_an_object() -> None:
    with pytest.raises(PatchError) as e:
        apply_strategic_merge_patch({}, [1], POD)
    assert e.value.code == 400
    assert apply_strategic_merge_patch({"a": 1}, None, POD) == {"a": 1}
