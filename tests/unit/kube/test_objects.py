"""Views over raw objects answer with the field's type whatever is missing or null,
and timestamps read and write as the API's."""

from __future__ import annotations

import datetime

import pytest

from mo_operator.kube.meta import objects, times

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "p",
        "namespace": "team",
        "uid": "u1",
        "generation": 3,
        "labels": {"app": "mo"},
        "ownerReferences": [
            {"kind": "ReplicaSet", "uid": "r0"},
            {"kind": "StatefulSet", "uid": "s1", "controller": True},
        ],
        "deletionTimestamp": "2026-01-02T03:04:05Z",
    },
    "spec": {"nodeName": "n"},
    "status": {"conditions": [{"type": "Ready", "status": "True"}]},
}


def test_a_full_object_reads_through_its_view() -> None:
    body = objects.view(POD)
    meta = body.meta
    assert (body.kind, meta.name, meta.namespace, meta.uid, meta.generation) == ("Pod", "p", "team", "u1", 3)
    assert meta.labels == {"app": "mo"} and meta.annotations == {}
    assert meta.controller == {"kind": "StatefulSet", "uid": "s1", "controller": True}
    assert meta.deleting and objects.is_deleting(POD)
    assert body.spec["nodeName"] == "n" and body.condition("Ready") == {"type": "Ready", "status": "True"}
    assert body.condition("Initialized") is None
    assert objects.key_of(POD) == "team/p"


@pytest.mark.parametrize(
    "obj", [{}, {"metadata": None, "spec": None, "status": None}, {"metadata": {"labels": None}}]
)
def test_missing_or_null_fields_read_as_empty(obj: dict[str, object]) -> None:
    body = objects.view(obj)
    assert (body.meta.name, body.meta.uid, body.meta.generation) == ("", "", 0)
    assert body.meta.labels == {} and body.meta.owner_references == () and body.meta.controller is None
    assert body.spec == {} and body.status == {} and body.conditions == ()
    assert not objects.is_deleting(obj) and objects.name_of(obj) == ""


def test_a_path_reads_through_what_is_missing_or_null() -> None:
    claim = {"spec": {"resources": {"requests": {"storage": "1Gi"}, "limits": None}}, "status": "odd"}
    assert objects.mapping_at(claim, "spec", "resources", "requests") == {"storage": "1Gi"}
    assert objects.mapping_at(claim, "spec", "resources", "limits") == {}
    assert objects.mapping_at(claim, "status", "capacity") == {}
    assert objects.mapping_at(None, "spec") == {} and objects.mapping_at(claim) == claim


def test_the_condition_of_an_object_that_may_be_absent() -> None:
    assert objects.condition_of(POD, "Ready") == {"type": "Ready", "status": "True"}
    assert objects.condition_of(POD, "Initialized") is None
    assert (
        objects.condition_of(None, "Ready") is None
        and objects.condition_of({"status": None}, "Ready") is None
    )


def test_the_view_never_writes() -> None:
    labels = objects.labels_of({})
    with pytest.raises(TypeError):
        labels["x"] = "y"  # type: ignore[index]


def test_timestamps_as_metav1_time() -> None:
    moment = datetime.datetime(2026, 1, 2, 3, 4, 5, 678000, tzinfo=datetime.UTC)
    assert times.format_time(moment) == "2026-01-02T03:04:05Z"
    assert times.format_time(moment.timestamp()) == "2026-01-02T03:04:05Z"
    assert times.format_micro_time(moment) == "2026-01-02T03:04:05.678000Z"
    assert times.parse_time("2026-01-02T03:04:05Z") == int(moment.timestamp())
    assert times.parse_time("yesterday") is None and times.parse_time(None) is None
    with pytest.raises(ValueError):
        times.format_time(datetime.datetime(2026, 1, 2))
