"""``admitted`` remembers its answer per object: an object whose body (all but metadata
and status) is unchanged is not validated and defaulted again, one with a changed body
is, the answer handed out is always a private mutable copy carrying the object's
current metadata and status, and the memory is bounded."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import ValidationError

from mo_operator.api.defaulting import default
from mo_operator.api.logset import LogSet
from mo_operator.controllers.framework import admission
from mo_operator.controllers.framework.admission import AdmissionCache, admitted
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import freeze, thaw

Obj = dict[str, Any]


def logset(name: str = "mo", rv: str = "1", replicas: int = 1, uid: str | None = None) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "LogSet",
        "metadata": {"name": name, "namespace": "ns", "uid": uid or f"uid-{name}", "resourceVersion": rv},
        "spec": {
            "replicas": replicas,
            "image": "matrixorigin/matrixone:2.0.0",
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": f"bucket/ns/{name}"}},
        },
    }


def cnset() -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "CNSet",
        "metadata": {"name": "tp", "namespace": "ns", "uid": "uid-tp", "resourceVersion": "1"},
        "spec": {"replicas": 1, "image": "matrixorigin/matrixone:2.0.0"},
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }


def test_an_unchanged_object_is_answered_from_memory() -> None:
    cache = AdmissionCache()
    cached = freeze(logset())  # as the informer cache holds it
    first = cache.admitted("LogSet", cached)
    assert first == default("LogSet", copy.deepcopy(logset())), "the same answer as without memory"
    assert first["spec"]["initialConfig"]["logShardReplicas"] == 1, "defaulted"
    assert cache.admitted("LogSet", cached) == first
    assert cache.admitted("LogSet", freeze(logset())) == first, "an equal object (a relist) too"
    assert cache.misses == 1


def test_a_changed_object_is_validated_and_defaulted_again() -> None:
    cache = AdmissionCache()
    cache.admitted("LogSet", freeze(logset()))
    changed = cache.admitted("LogSet", freeze(logset(rv="2", replicas=3)))
    assert changed["spec"]["replicas"] == 3
    assert changed["spec"]["initialConfig"]["logShardReplicas"] == 3, "defaults follow the new spec"
    assert cache.misses == 2
    with pytest.raises(TerminalError) as invalid:
        cache.admitted("LogSet", freeze(logset(rv="3", replicas=-1)))
    assert invalid.value.reason == "InvalidSpec"
    assert "spec.replicas" in invalid.value.message


def with_status(obj: Obj, rv: str, **status: Any) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}, "status": status}


def test_a_status_write_is_answered_from_memory_with_the_new_status() -> None:
    cache = AdmissionCache()
    first = freeze(with_status(logset(), "1", availableStores=[]))
    cache.admitted("LogSet", first)
    # its spec the same frozen value, as the informer cache shares what a status write left alone
    written = freeze(with_status(first, "2", availableStores=[{"podName": "mo-log-0"}]))
    answer = cache.admitted("LogSet", written)
    assert cache.misses == 1
    assert answer["status"] == {"availableStores": [{"podName": "mo-log-0"}]}, "the status of now"
    assert answer["metadata"]["resourceVersion"] == "2", "the metadata of now"
    assert answer["spec"]["initialConfig"]["logShardReplicas"] == 1, "defaulted"
    assert answer == default("LogSet", thaw(written)), "the same answer as without memory"


def test_a_label_or_annotation_change_is_answered_from_memory_with_the_new_metadata() -> None:
    cache = AdmissionCache()
    cache.admitted("LogSet", freeze(logset()))
    labelled = logset(rv="2")
    labelled["metadata"].update(labels={"team": "db"}, annotations={"note": "x"})
    answer = cache.admitted("LogSet", freeze(labelled))
    assert cache.misses == 1, "validation reads neither"
    assert answer["metadata"]["labels"] == {"team": "db"}
    assert answer["metadata"]["annotations"] == {"note": "x"}


def test_a_change_outside_metadata_and_status_is_validated_again() -> None:
    cache = AdmissionCache()
    cache.admitted("CNSet", freeze(cnset()))
    moved = cnset()
    moved["deps"] = {"logSet": {"metadata": {}}}
    with pytest.raises(TerminalError) as invalid:
        cache.admitted("CNSet", freeze(moved))
    assert "deps.logSet.metadata.name" in invalid.value.message
    assert cache.misses == 2


def test_a_callers_own_dict_edited_in_place_is_not_mistaken_for_the_old_one() -> None:
    cache = AdmissionCache()
    mine = logset()
    assert cache.admitted("LogSet", mine)["spec"]["replicas"] == 1
    mine["spec"]["replicas"] = 5  # same dict, same resourceVersion: a test's hand-built object
    assert cache.admitted("LogSet", mine)["spec"]["replicas"] == 5


def test_every_caller_gets_its_own_mutable_copy() -> None:
    cache = AdmissionCache()
    cached = freeze(logset())
    first = cache.admitted("LogSet", cached)
    first["spec"]["replicas"] = 99
    first["spec"]["sharedStorage"]["s3"]["path"] = "elsewhere"
    second = cache.admitted("LogSet", cached)
    assert second["spec"]["replicas"] == 1
    assert second["spec"]["sharedStorage"]["s3"]["path"] == "bucket/ns/mo"
    second["metadata"]["labels"] = {"edited": "yes"}  # mutable, as before the memory
    assert cache.misses == 1


def test_an_invalid_object_is_refused_every_time_with_the_same_message() -> None:
    cache = AdmissionCache()
    bad = freeze(logset(replicas=-1))
    messages = []
    for _ in range(2):
        with pytest.raises(TerminalError) as e:
            cache.admitted("LogSet", bad)
        messages.append((e.value.reason, e.value.message))
    assert messages[0] == messages[1] and messages[0][0] == "InvalidSpec"
    assert cache.misses == 1
    fixed = cache.admitted("LogSet", freeze(logset(rv="2")))
    assert fixed["spec"]["replicas"] == 1


def test_the_memory_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache = AdmissionCache(size=3)
    objs = [freeze(logset(name=f"mo{i}")) for i in range(5)]
    for o in objs:
        cache.admitted("LogSet", o)
    assert len(cache) == 3
    assert cache.misses == 5
    cache.admitted("LogSet", objs[4])  # remembered
    assert cache.misses == 5
    cache.admitted("LogSet", objs[0])  # forgotten: computed again
    assert cache.misses == 6
    assert len(cache) == 3
    for i in range(10):  # one object changing many times takes one entry
        cache.admitted("LogSet", freeze(logset(name="mo4", rv=str(10 + i), replicas=i % 3)))
    assert len(cache) == 3


def test_kinds_and_objects_do_not_share_answers() -> None:
    cache = AdmissionCache()
    a = cache.admitted("LogSet", freeze(logset(name="a")))
    b = cache.admitted("LogSet", freeze(logset(name="b")))
    assert a["metadata"]["name"] == "a" and b["metadata"]["name"] == "b"
    same_name_new_uid = cache.admitted("LogSet", freeze(logset(name="a", uid="recreated")))
    assert same_name_new_uid["metadata"]["uid"] == "recreated"


def test_the_module_function_uses_the_shared_memory() -> None:
    admission.CACHE.clear()
    before = admission.CACHE.misses
    cached = freeze(logset(name="shared"))
    assert admitted("LogSet", cached) == admitted("LogSet", cached)
    assert admission.CACHE.misses == before + 1


def test_admit_hands_out_the_defaulted_body_as_the_kinds_frozen_model() -> None:
    cache = AdmissionCache()
    cached = freeze(logset())
    model = cache.admit(LogSet, cached)
    assert isinstance(model, LogSet)
    assert model.spec.replicas == 1
    assert model.spec.initial_config is not None and model.spec.initial_config.log_shard_replicas == 1, (
        "defaulted"
    )
    with pytest.raises(ValidationError):
        model.spec.replicas = 3  # type: ignore[misc]
    assert cache.admit(LogSet, freeze(logset(rv="2"))) is model, "parsed once per body, not per reconcile"
    assert cache.admit(LogSet, freeze(logset(rv="3", replicas=3))).spec.replicas == 3
    assert cache.misses == 2


def test_admit_refuses_an_invalid_object_as_admitted_does() -> None:
    bad = logset()
    bad["spec"]["replicas"] = "three"
    with pytest.raises(TerminalError) as e:
        AdmissionCache().admit(LogSet, freeze(bad))
    assert e.value.reason == "InvalidSpec"
    assert "spec.replicas" in e.value.message
