"""``SharedValues``: frozen copies equal to the input, with equal parts stored
once across objects, never confusing JSON values Python calls equal."""

from __future__ import annotations

import copy
import sys
from typing import Any

import pytest
from lightkube.resources.apps_v1 import StatefulSet
from lightkube.resources.core_v1 import Pod

from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.cache.shared_values import SharedValues
from mo_operator.kube.meta.frozen import INTERN_MAX, FrozenDict, FrozenList, freeze, thaw

from .fakes import FakeListerWatcher, FakeServer


def pod(name: str, rv: str = "1", *, ready: Any = True) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": rv},
        "spec": {
            "containers": [
                {
                    "name": "main",
                    "image": "matrixorigin/matrixone:2.0.0",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                    "ports": [{"containerPort": 6001, "protocol": "TCP"}],
                }
            ],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
        },
        "status": {"containerStatuses": [{"name": "main", "ready": ready, "restartCount": 0}]},
    }


def test_a_frozen_copy_equals_the_input_and_is_read_only() -> None:
    raw = pod("a")
    frozen = SharedValues().freeze(copy.deepcopy(raw))
    assert frozen == raw
    assert thaw(frozen) == raw
    assert isinstance(frozen, FrozenDict) and type(frozen["spec"]["containers"]) is FrozenList
    with pytest.raises(TypeError):
        frozen["spec"]["containers"][0]["image"] = "other"


def test_equal_parts_of_different_objects_are_stored_once() -> None:
    values = SharedValues()
    a, b = values.freeze(pod("a")), values.freeze(pod("b", "2"))
    assert a["spec"] is b["spec"], "the whole spec repeats"
    assert a["status"] is b["status"]
    assert a is not b and a["metadata"] is not b["metadata"], "an object and its metadata are its own"
    assert values.hits > 0


def test_json_types_python_calls_equal_are_kept_apart() -> None:
    values = SharedValues()
    as_bool = values.freeze(pod("a", ready=True))
    as_int = values.freeze(pod("b", ready=1))
    as_float = values.freeze(pod("c", ready=1.0))
    found = [o["status"]["containerStatuses"][0]["ready"] for o in (as_bool, as_int, as_float)]
    assert [type(v) for v in found] == [bool, int, float]


def test_key_order_is_kept() -> None:
    values = SharedValues()
    first = values.freeze({"a": {"x": 1, "y": 2}})
    second = values.freeze({"a": {"y": 2, "x": 1}})
    assert list(first["a"]) == ["x", "y"] and list(second["a"]) == ["y", "x"]


def test_a_hash_collision_is_a_miss_not_a_wrong_value() -> None:
    values = SharedValues()
    wanted = [{"name": "wanted"}]
    _, digest = values._list_items(freeze(wanted))
    values._young[digest] = FrozenList([FrozenDict({"name": "impostor"})])
    assert values.freeze({"list": wanted})["list"] == wanted


def test_parts_unused_for_two_generations_leave_the_memo() -> None:
    values = SharedValues(generation_size=8)
    kept = values.freeze({"a": {"shared": True}})
    for i in range(40):
        values.freeze({"b": {"unique": i}})
        values.freeze({"a": {"shared": True}})  # asked for all along: stays shared
    assert values.entries <= 16
    assert values.freeze({"a": {"shared": True}})["a"] is kept["a"]
    gone = values.freeze({"c": {"once": True}})["c"]
    for i in range(40):
        values.freeze({"b": {"unique": i + 100}})
    assert values.freeze({"c": {"once": True}})["c"] is not gone, "forgotten after two generations"


def test_every_informer_of_a_factory_shares_one_freezer() -> None:
    """Parts equal across kinds (a pod's containers, its StatefulSet's template) are
    stored once only if the informers of every kind freeze through the same memo."""
    factory = InformerFactory(lister_watcher=lambda res, namespace, selector: FakeListerWatcher(FakeServer()))
    pods, sets = factory.informer(Pod), factory.informer(StatefulSet)
    assert pods._values is sets._values


def test_long_strings_are_stored_once() -> None:
    values = SharedValues()
    script = "#!/bin/sh\n" + "echo start\n" * INTERN_MAX

    def config_map(name: str) -> dict[str, Any]:
        return {"metadata": {"name": name, "resourceVersion": "1"}, "data": {"start.sh": "".join(script)}}

    a, b = values.freeze(config_map("a")), values.freeze(config_map("b"))
    assert a["data"]["start.sh"] is b["data"]["start.sh"]


def test_uids_and_resource_versions_are_not_interned() -> None:
    """They are unique: interning them would only grow the interpreter's table."""
    frozen = SharedValues().freeze(pod(f"unique-{id(object())}", rv=str(10**12 + id(object()))))
    for field in ("uid", "resourceVersion"):
        kept = frozen["metadata"][field]
        assert sys.intern("".join(list(kept))) is not kept, field
    name = frozen["metadata"]["name"]
    assert sys.intern("".join(list(name))) is name, "other metadata strings are"
