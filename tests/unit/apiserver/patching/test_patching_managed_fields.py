"""Field ownership of ordinary writes (create, update, patch).

References: https://kubernetes.io/docs/reference/using-api/server-side-apply/#field-management
(updaters own what they change; ``managedFields: []`` resets), and
k8s.io/apimachinery pkg/util/managedfields/internal: managedfieldsupdater.go
(a write that changes nothing keeps its timestamps), stripmeta.go (apiVersion,
kind, metadata name/namespace and server-set metadata never owned),
skipnonapplied.go (an object stored without managedFields stays untracked),
capmanagers.go (at most ten updaters, the oldest folded into
``ancient-changes``), fieldmanager.go (``decodeLiveOrNew``), and
structured-merge-diff merge/update.go (``Updater.Update``).
"""

from __future__ import annotations

import copy
from typing import Any

from mo_devkit.localcluster.apiserver.patching.managed_fields import record_update
from mo_devkit.localcluster.apiserver.patching.typeinfo import builtin_type_info, schema_type_info

CM = builtin_type_info("", "ConfigMap")
DEPLOY = builtin_type_info("apps", "Deployment")
T0, T1, T2 = "2024-01-01T00:00:00Z", "2024-01-01T00:01:00Z", "2024-01-01T00:02:00Z"


def configmap(**data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "test-cm",
            "namespace": "default",
            "labels": {"test-label": "test"},
            "uid": "u-1",
            "resourceVersion": "1",
            "creationTimestamp": T0,
        },
        "data": dict(data),
    }


def update(old: Any, new: dict[str, Any], manager: str, now: str, **kw: Any) -> list[dict[str, Any]]:
    kw.setdefault("api_version", new.get("apiVersion", "v1"))
    kw.setdefault("type_info", CM)
    return record_update(old, new, manager=manager, now=now, **kw)


def created(obj: dict[str, Any], manager: str = "kubectl-create") -> dict[str, Any]:
    obj["metadata"]["managedFields"] = update(None, obj, manager, T0)
    return obj


def changed(obj: dict[str, Any], edit: Any) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    edit(new)
    return new


def by_manager(entries: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in entries}


def test_create_owns_every_field_it_sets() -> None:
    """A created map is itself owned (``"."``), as kube-apiserver records for
    ``kubectl create`` of a ConfigMap."""
    entries = update(None, configmap(key="some value"), "kubectl-create", T0)
    assert entries == [
        {
            "manager": "kubectl-create",
            "operation": "Update",
            "apiVersion": "v1",
            "time": T0,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:data": {".": {}, "f:key": {}},
                "f:metadata": {"f:labels": {".": {}, "f:test-label": {}}},
            },
        }
    ]


def test_a_changed_field_moves_to_the_writer() -> None:
    live = created(configmap(key="a", other="b"))
    new = changed(live, lambda o: o["data"].update(key="changed"))
    entries = by_manager(update(live, new, "kubectl-edit", T1))
    assert entries["kubectl-edit"]["fieldsV1"] == {"f:data": {"f:key": {}}}
    assert entries["kubectl-edit"]["time"] == T1
    assert entries["kubectl-create"]["fieldsV1"]["f:data"] == {".": {}, "f:other": {}}
    assert entries["kubectl-create"]["time"] == T0


def test_a_write_that_changes_nothing_keeps_managed_fields() -> None:
    live = created(configmap(key="a"))
    same = changed(live, lambda o: o["metadata"].update(resourceVersion="7", generation=3))
    assert update(live, same, "other", T2) == live["metadata"]["managedFields"]


def test_removed_fields_leave_every_set_and_empty_entries_go() -> None:
    live = created(configmap(key="a"))
    live["metadata"]["managedFields"] += update(
        live, changed(live, lambda o: o["data"].update(x="1")), "patcher", T1
    )
    live["data"]["x"] = "1"
    entries = by_manager(update(live, changed(live, lambda o: o["data"].pop("x")), "kubectl-edit", T2))
    assert set(entries) == {"kubectl-create"}  # patcher owned only data.x; the remover gains nothing


def test_updaters_per_api_version_and_unknown_manager() -> None:
    live = created(configmap(key="a"))
    entries = update(live, changed(live, lambda o: o["data"].update(key="b")), "", T1, api_version="v2")
    assert {(e["manager"], e["apiVersion"]) for e in entries} == {("kubectl-create", "v1"), ("unknown", "v2")}


def test_server_owned_metadata_is_never_tracked() -> None:
    entries = update(None, configmap(), "creator", T0)
    text = repr(entries)
    for field in (
        "f:uid",
        "f:resourceVersion",
        "f:creationTimestamp",
        "f:name",
        "f:namespace",
        "f:apiVersion",
        "f:kind",
    ):
        assert field not in text


def test_status_is_owned_only_through_the_status_subresource() -> None:
    deploy: dict[str, Any] = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "uid": "u"},
        "spec": {"replicas": 1},
        "status": {"replicas": 0},
    }
    deploy["metadata"]["managedFields"] = update(None, deploy, "creator", T0, type_info=DEPLOY)
    assert "f:status" not in repr(deploy["metadata"]["managedFields"])
    new = changed(deploy, lambda o: (o["status"].update(replicas=1), o["spec"].update(replicas=5)))
    entries = update(deploy, new, "kube-controller-manager", T1, type_info=DEPLOY, subresource="status")
    status_entry = next(e for e in entries if e["manager"] == "kube-controller-manager")
    assert status_entry["subresource"] == "status"
    assert status_entry["fieldsV1"] == {"f:status": {"f:replicas": {}}}


def test_object_without_managed_fields_stays_untracked() -> None:
    live = configmap(key="a")  # stored before tracking, or its fields were reset
    assert update(live, changed(live, lambda o: o["data"].update(key="b")), "x", T1) == []


def test_empty_managed_fields_in_a_write_reset_them() -> None:
    live = created(configmap(key="a"))
    new = changed(live, lambda o: o["metadata"].update(managedFields=[]))
    assert update(live, new, "x", T1) == []


def test_entries_sent_with_an_update_are_the_base() -> None:
    live = created(configmap(key="a"))
    sent = [dict(live["metadata"]["managedFields"][0], manager="renamed")]
    new = changed(live, lambda o: (o["metadata"].update(managedFields=sent), o["data"].update(key="b")))
    assert {e["manager"] for e in update(live, new, "editor", T1)} == {"renamed", "editor"}


def test_the_oldest_of_more_than_ten_updaters_are_folded() -> None:
    live = created(configmap(k0="0"), manager="m00")
    for i in range(1, 12):
        new = changed(live, lambda o, i=i: o["data"].update({f"k{i}": str(i)}))
        new["metadata"]["managedFields"] = update(live, new, f"m{i:02d}", f"2024-01-01T00:{i:02d}:00Z")
        live = new
    entries = by_manager(live["metadata"]["managedFields"])
    assert len(entries) == 10
    assert "ancient-changes" in entries
    assert set(entries["ancient-changes"]["fieldsV1"]["f:data"]) >= {"f:k0", "f:k1", "f:k2"}
    assert {"m00", "m01", "m02"}.isdisjoint(entries)


def test_an_unreadable_object_keeps_its_entries() -> None:
    """kube-apiserver never fails a write over managedFields; it restores the
    previous ones (fieldmanager.go ``UpdateNoErrors``)."""
    ti = schema_type_info(
        {
            "type": "object",
            "properties": {
                "items": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object"},
                }
            },
        }
    )
    live: dict[str, Any] = {"apiVersion": "x/v1", "kind": "T", "metadata": {"uid": "u"}, "items": []}
    live["metadata"]["managedFields"] = update(None, live, "c", T0, type_info=ti)
    new = changed(live, lambda o: (o["items"].append({"noname": 1}), o.update(extra="x")))
    assert update(live, new, "w", T1, type_info=ti) == live["metadata"]["managedFields"]
