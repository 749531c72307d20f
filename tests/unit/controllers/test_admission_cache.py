"""``admit`` remembers its answer per object: an object whose body (all but metadata
and status) is unchanged is not validated, defaulted and parsed again, one with a
changed body is, the answer is the kind's frozen model of the defaulted body, and the
memory is bounded."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from mo_operator.api.base import dump
from mo_operator.api.cnset import CNSet
from mo_operator.api.defaulting import default
from mo_operator.api.logset import LogSet
from mo_operator.controllers.framework import admission
from mo_operator.controllers.framework.admission import AdmissionCache, admit
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import freeze

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
    first = cache.admit(LogSet, cached)
    defaulted = default("LogSet", logset())
    assert dump(first) == {k: v for k, v in defaulted.items() if k not in ("metadata", "status")}, (
        "the same answer as without memory"
    )
    assert first.spec.initial_config is not None and first.spec.initial_config.log_shard_replicas == 1, (
        "defaulted"
    )
    assert cache.admit(LogSet, cached) is first
    assert cache.admit(LogSet, freeze(logset())) is first, "an equal object (a relist) too"
    assert cache.misses == 1


def test_a_changed_object_is_validated_and_defaulted_again() -> None:
    cache = AdmissionCache()
    cache.admit(LogSet, freeze(logset()))
    changed = cache.admit(LogSet, freeze(logset(rv="2", replicas=3)))
    assert changed.spec.replicas == 3
    assert changed.spec.initial_config is not None and changed.spec.initial_config.log_shard_replicas == 3, (
        "defaults follow the new spec"
    )
    assert cache.misses == 2
    with pytest.raises(TerminalError) as invalid:
        cache.admit(LogSet, freeze(logset(rv="3", replicas=-1)))
    assert invalid.value.reason == "InvalidSpec"
    assert "spec.replicas" in invalid.value.message


def with_status(obj: Obj, rv: str, **status: Any) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], "resourceVersion": rv}, "status": status}


def test_a_status_write_or_a_label_is_answered_from_memory() -> None:
    cache = AdmissionCache()
    first = freeze(with_status(logset(), "1", availableStores=[]))
    answer = cache.admit(LogSet, first)
    # its spec the same frozen value, as the informer cache shares what a status write left alone
    written = freeze(with_status(first, "2", availableStores=[{"podName": "mo-log-0"}]))
    assert cache.admit(LogSet, written) is answer
    labelled = logset(rv="3")
    labelled["metadata"].update(labels={"team": "db"}, annotations={"note": "x"})
    assert cache.admit(LogSet, freeze(labelled)) is answer, "validation reads neither"
    assert cache.misses == 1
    assert answer.status is None and answer.metadata is None, "the live object's are read from it"


def test_a_change_outside_metadata_and_status_is_validated_again() -> None:
    cache = AdmissionCache()
    cache.admit(CNSet, freeze(cnset()))
    moved = cnset()
    moved["deps"] = {"logSet": {"metadata": {}}}
    with pytest.raises(TerminalError) as invalid:
        cache.admit(CNSet, freeze(moved))
    assert "deps.logSet.metadata.name" in invalid.value.message
    assert cache.misses == 2


def test_a_callers_own_dict_edited_in_place_is_not_mistaken_for_the_old_one() -> None:
    cache = AdmissionCache()
    mine = logset()
    assert cache.admit(LogSet, mine).spec.replicas == 1
    mine["spec"]["replicas"] = 5  # same dict, same resourceVersion: a test's hand-built object
    assert cache.admit(LogSet, mine).spec.replicas == 5


def test_an_invalid_object_is_refused_every_time_with_the_same_message() -> None:
    cache = AdmissionCache()
    bad = freeze(logset(replicas=-1))
    messages = []
    for _ in range(2):
        with pytest.raises(TerminalError) as e:
            cache.admit(LogSet, bad)
        messages.append((e.value.reason, e.value.message))
    assert messages[0] == messages[1] and messages[0][0] == "InvalidSpec"
    assert cache.misses == 1
    assert cache.admit(LogSet, freeze(logset(rv="2"))).spec.replicas == 1


def test_the_memory_is_bounded_and_forgets_the_least_recently_used() -> None:
    cache = AdmissionCache(size=3)
    objs = [freeze(logset(name=f"mo{i}")) for i in range(5)]
    for o in objs:
        cache.admit(LogSet, o)
    assert len(cache) == 3
    assert cache.misses == 5
    cache.admit(LogSet, objs[4])  # remembered
    assert cache.misses == 5
    cache.admit(LogSet, objs[0])  # forgotten: computed again
    assert cache.misses == 6
    assert len(cache) == 3
    for i in range(10):  # one object changing many times takes one entry
        cache.admit(LogSet, freeze(logset(name="mo4", rv=str(10 + i), replicas=i % 3)))
    assert len(cache) == 3


def test_objects_do_not_share_answers() -> None:
    cache = AdmissionCache()
    a = cache.admit(LogSet, freeze(logset(name="a")))
    b = cache.admit(LogSet, freeze(logset(name="b")))
    assert a.spec.shared_storage.s3 is not None and a.spec.shared_storage.s3.path == "bucket/ns/a"
    assert b.spec.shared_storage.s3 is not None and b.spec.shared_storage.s3.path == "bucket/ns/b"
    cache.admit(LogSet, freeze(logset(name="a", uid="recreated")))
    assert cache.misses == 3, "a recreated object (new uid) is admitted afresh"


def test_the_module_function_uses_the_shared_memory() -> None:
    admission.CACHE.clear()
    before = admission.CACHE.misses
    cached = freeze(logset(name="shared"))
    assert admit(LogSet, cached) is admit(LogSet, cached)
    assert admission.CACHE.misses == before + 1


def test_the_model_is_frozen() -> None:
    model = AdmissionCache().admit(LogSet, freeze(logset()))
    with pytest.raises(ValidationError):
        model.spec.replicas = 3  # type: ignore[misc]


def test_admit_refuses_a_value_of_the_wrong_type_naming_the_field() -> None:
    bad = logset()
    bad["spec"]["replicas"] = "three"
    with pytest.raises(TerminalError) as e:
        AdmissionCache().admit(LogSet, freeze(bad))
    assert e.value.reason == "InvalidSpec"
    assert "spec.replicas" in e.value.message
