"""Fields Go's encoding/json always writes, filled as kube-apiserver returns them
(k8s.io/api types: fields without omitempty, and every non-pointer struct, since
omitempty never omits a struct)."""

from __future__ import annotations

import copy

from mo_devkit.localcluster.apiserver.encoding.go_zero_values import with_zero_values


def sts() -> dict:
    return {
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 1}]}]}
            },
        },
    }


def test_a_new_statefulset_has_its_counters_and_every_container_its_resources() -> None:
    out = with_zero_values("apps/v1", "StatefulSet", sts())
    assert out["status"] == {"replicas": 0, "availableReplicas": 0}
    assert out["spec"]["template"]["spec"]["containers"][0]["resources"] == {}
    assert out["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 1}]


def test_present_values_win_and_the_input_is_never_mutated() -> None:
    obj = sts()
    obj["status"] = {"replicas": 3, "readyReplicas": 2}
    before = copy.deepcopy(obj)
    out = with_zero_values("apps/v1", "StatefulSet", obj)
    assert obj == before
    assert out["status"] == {"replicas": 3, "readyReplicas": 2, "availableReplicas": 0}


def test_a_complete_object_is_returned_as_is() -> None:
    obj = with_zero_values("apps/v1", "StatefulSet", sts())
    assert with_zero_values("apps/v1", "StatefulSet", obj) is obj


def test_pointers_and_omitempty_scalars_stay_absent_and_custom_kinds_are_untouched() -> None:
    out = with_zero_values("policy/v1", "PodDisruptionBudget", {"metadata": {"name": "p"}, "spec": {}})
    assert out["status"] == {
        "disruptionsAllowed": 0,
        "currentHealthy": 0,
        "desiredHealthy": 0,
        "expectedPods": 0,
    }
    assert "minAvailable" not in out["spec"] and "selector" not in out["spec"]
    pod = with_zero_values("v1", "Pod", {"spec": {"containers": [{"name": "c"}]}})
    assert "securityContext" not in pod["spec"]["containers"][0]  # a pointer
    crd_obj = {"spec": {"x": 1}}
    assert with_zero_values("core.matrixorigin.io/v1alpha1", "LogSet", crd_obj) is crd_obj
