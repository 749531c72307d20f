"""The warning on a direct change of a set a MatrixOneCluster owns
(mo_operator/webhooks/owned_sets.py): given to a user's edit or scale of a field the
cluster sets back, never to the operator's own writes, nor for a field the cluster
does not set, nor for a set no cluster owns."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.webhook.server import AdmissionRequest
from mo_operator.webhooks import OwnedSets, Validator
from mo_operator.webhooks.owned_sets import changed_fields, owned_change, warning

Obj = dict[str, Any]

OPERATOR = "mo-operator"
TP_WARNING = (
    "CNSet mo-tp belongs to MatrixOneCluster mo, which sets spec.replicas back: "
    "change spec.cnGroups[name=tp].replicas of MatrixOneCluster mo instead"
)


def cnset(
    replicas: int = 2, *, owner: str | None = "mo", applied: tuple[str, ...] = ("replicas", "image")
) -> Obj:
    meta: Obj = {"name": "mo-tp", "namespace": "ns"}
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": "core.matrixorigin.io/v1alpha1",
                "kind": "MatrixOneCluster",
                "name": owner,
                "uid": "u1",
                "controller": True,
            }
        ]
    meta["managedFields"] = [
        {
            "manager": OPERATOR,
            "operation": "Apply",
            "fieldsV1": {"f:spec": {f"f:{f}": {} for f in applied}},
        },
        {"manager": OPERATOR, "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}},
    ]
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "CNSet",
        "metadata": meta,
        "spec": {"replicas": replicas, "image": "mo:2.1.0", "config": "x = 1"},
    }


def scale(replicas: int) -> Obj:
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "mo-tp", "namespace": "ns"},
        "spec": {"replicas": replicas},
    }


def request(obj: Obj, old: Obj, *, manager: str = "", subresource: str = "") -> AdmissionRequest:
    return AdmissionRequest(
        uid="u",
        operation="UPDATE",
        kind={"group": "core.matrixorigin.io", "version": "v1alpha1", "kind": obj["kind"]},
        namespace="ns",
        name="mo-tp",
        object=obj,
        old_object=old,
        dry_run=False,
        raw={},
        subresource=subresource,
        field_manager=manager,
    )


class Objects:
    """The API server's objects, by kind and name; counts the reads."""

    def __init__(self, *objs: Obj) -> None:
        self.objs = {(o["kind"], o["metadata"]["name"]): o for o in objs}
        self.reads: list[tuple[str, str]] = []

    async def __call__(self, kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        self.reads.append((kind, name))
        return self.objs.get((kind, name))


CLUSTER = {"kind": "MatrixOneCluster", "metadata": {"name": "mo"}, "spec": {"cnGroups": [{"name": "tp"}]}}


def test_the_change_of_a_field_the_cluster_applies_is_told_with_the_field_to_change() -> None:
    old = cnset(2)
    assert changed_fields(old, cnset(3)) == ["replicas"]
    assert owned_change(old, ["replicas"], OPERATOR) == ("mo", ["replicas"])
    assert warning("CNSet", "mo-tp", "mo", CLUSTER["spec"], ["replicas"]) == TP_WARNING
    legacy = warning("CNSet", "mo-tp", "mo", {"tp": {"replicas": 2}}, ["replicas", "image"])
    assert "sets spec.replicas, spec.image back: change spec.tp.replicas, spec.tp.image of" in legacy


def test_no_warning_without_an_owning_cluster_or_for_a_field_the_cluster_leaves_to_the_set() -> None:
    assert owned_change(cnset(2, owner=None), ["replicas"], OPERATOR) is None
    assert owned_change(cnset(2), ["config"], OPERATOR) is None, "config is not in the cluster's apply"
    assert owned_change(cnset(2), ["replicas", "config"], OPERATOR) == ("mo", ["replicas"])
    other = cnset(2)
    other["metadata"]["ownerReferences"][0]["apiVersion"] = "example.com/v1"
    assert owned_change(other, ["replicas"], OPERATOR) is None, "a MatrixOneCluster of another group"
    unapplied = cnset(2)
    unapplied["metadata"]["managedFields"] = []
    assert owned_change(unapplied, ["config"], OPERATOR) == ("mo", ["config"]), (
        "a set the cluster has not applied yet: every change is set back"
    )


async def test_a_users_edit_is_warned_about_and_the_operators_own_write_is_not() -> None:
    objects = Objects(CLUSTER)
    owned = OwnedSets(objects, OPERATOR)
    assert await owned.warnings("CNSet", request(cnset(3), cnset(2), manager="kubectl-edit")) == [TP_WARNING]
    assert await owned.warnings("CNSet", request(cnset(3), cnset(2), manager=OPERATOR)) == []
    assert await owned.warnings("CNSet", request(cnset(2), cnset(2), manager="kubectl-edit")) == []
    assert await owned.warnings("MatrixOneCluster", request(cnset(3), cnset(2))) == []
    assert await owned.warnings("CNSet", request(cnset(3), cnset(2), subresource="status")) == []


async def test_a_scale_reads_the_set_it_names_to_find_its_owner() -> None:
    objects = Objects(CLUSTER, cnset(2))
    owned = OwnedSets(objects, OPERATOR)
    assert await owned.warnings("CNSet", request(scale(4), scale(2), subresource="scale")) == [TP_WARNING]
    assert objects.reads == [("CNSet", "mo-tp"), ("MatrixOneCluster", "mo")]
    objects.reads.clear()
    assert await owned.warnings("CNSet", request(scale(2), scale(2), subresource="scale")) == []
    assert objects.reads == [], "a scale to the same count changes nothing and reads nothing"
    free = OwnedSets(Objects(cnset(2, owner=None)), OPERATOR)
    assert await free.warnings("CNSet", request(scale(4), scale(2), subresource="scale")) == []


async def test_a_paused_cluster_sets_the_change_back_once_it_is_resumed() -> None:
    paused = copy.deepcopy(CLUSTER)
    paused["metadata"]["annotations"] = {"matrixorigin.io/skip-sync": "true"}
    owned = OwnedSets(Objects(paused), OPERATOR)
    assert await owned.warnings("CNSet", request(cnset(3), cnset(2))) == [
        TP_WARNING.replace("sets spec.replicas back:", "sets spec.replicas back once it is resumed:")
    ]


async def test_a_failed_read_admits_without_the_warning() -> None:
    async def broken(kind: str, namespace: str, name: str) -> Mapping[str, Any] | None:
        raise ConnectionError("down")

    owned = OwnedSets(broken, OPERATOR)
    assert await owned.warnings("CNSet", request(scale(4), scale(2), subresource="scale")) == []
    assert await owned.warnings("CNSet", request(cnset(3), cnset(2))) == [TP_WARNING], (
        "the set's edit names its owner; the field is then named as in cnGroups"
    )


async def test_the_validator_admits_a_scale_with_the_warning_and_validates_no_scale_object() -> None:
    validator = Validator("CNSet", owned=OwnedSets(Objects(CLUSTER, cnset(2)), OPERATOR))
    admitted = await validator(request(scale(4), scale(2), subresource="scale"))
    assert admitted is not None and admitted.warnings == [TP_WARNING]  # type: ignore[union-attr]
    edited = copy.deepcopy(cnset(3))
    admitted = await validator(request(edited, cnset(2), manager="kubectl-client-side-apply"))
    assert admitted is not None and TP_WARNING in admitted.warnings  # type: ignore[union-attr]
