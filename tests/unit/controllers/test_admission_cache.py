"""``admitted`` remembers its answer per object: an unchanged object is not validated
and defaulted again, a changed one is, the answer handed out is always a private
mutable copy, and the memory is bounded."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mo_operator.api.defaulting import default
from mo_operator.controllers.common import admission
from mo_operator.controllers.common.admission import AdmissionCache, admitted
from mo_operator.kube.actor import TerminalError
from mo_operator.kube.frozen import freeze

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
