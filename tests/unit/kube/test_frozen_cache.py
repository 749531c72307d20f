"""The informer's store: keys, namespace and owner indexes, custom indexers,
label-selector lists (client-go ``tools/cache/thread_safe_store.go`` and
``index.go``; ``MetaNamespaceKeyFunc`` for keys) and read-only objects."""

from __future__ import annotations

import copy
import gc
import json
import pickle
from collections.abc import Callable, Mapping
from typing import Any

import msgspec
import pytest

from mo_operator.kube.cache.cache import NAMESPACE_INDEX, OWNER_INDEX, Store, object_key
from mo_operator.kube.meta import frozen as frozen_module
from mo_operator.kube.meta.frozen import FrozenDict, FrozenList, as_json, freeze, thaw


def obj(
    name: str,
    namespace: str = "ns",
    labels: dict[str, str] | None = None,
    owners: tuple[str, ...] = (),
    rv: str = "1",
    **extra: Any,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "resourceVersion": rv,
        "labels": labels or {},
    }
    if owners:
        meta["ownerReferences"] = [{"uid": u, "kind": "X", "name": u, "apiVersion": "v1"} for u in owners]
    return {"metadata": meta, **extra}


# ---------------------------------------------------------------- frozen
def test_frozen_values_refuse_every_mutation() -> None:
    f: Any = freeze({"a": {"b": [1, {"c": 2}]}, "l": [1, 2]})
    d: Any = f["a"]
    lst: Any = f["l"]
    attempts: list[Callable[[], object]] = [
        lambda: f.__setitem__("x", 1),
        lambda: f.__delitem__("a"),
        lambda: f.update(x=1),
        lambda: f.setdefault("x", 1),
        lambda: f.pop("a"),
        lambda: f.popitem(),
        lambda: f.clear(),
        lambda: d["b"][1].__setitem__("c", 3),
        lambda: lst.append(3),
        lambda: lst.extend([3]),
        lambda: lst.insert(0, 3),
        lambda: lst.__setitem__(0, 3),
        lambda: lst.sort(),
        lambda: lst.reverse(),
        lambda: lst.remove(1),
        lambda: lst.pop(),
        lambda: lst.clear(),
    ]
    for attempt in attempts:
        with pytest.raises(TypeError):
            attempt()
    with pytest.raises(TypeError):
        f |= {"x": 1}
    with pytest.raises(TypeError):
        lst += [3]
    assert f == {"a": {"b": [1, {"c": 2}]}, "l": [1, 2]}


def test_frozen_values_compare_and_encode_like_plain_json() -> None:
    plain: dict[str, Any] = {"spec": {"containers": [{"name": "c", "args": ["a", "b"]}]}, "n": 1, "z": None}
    f: Any = freeze(plain)
    assert f == plain and plain == f and f["spec"]["containers"] == plain["spec"]["containers"]
    assert f != {**plain, "n": 2} and f != {"spec": plain["spec"], "n": 1}
    assert isinstance(f, Mapping) and isinstance(f["spec"]["containers"], list)
    assert json.loads(json.dumps(f, default=as_json)) == plain
    assert msgspec.json.decode(msgspec.json.encode(f, enc_hook=as_json)) == plain
    with pytest.raises(TypeError):
        json.dumps(f)  # never silently encoded as something else


def test_frozen_objects_read_like_dicts_and_share_their_keys() -> None:
    f: Any = freeze({"a": 1, "b": {"c": None}})
    assert list(f) == ["a", "b"] and list(f.items()) == [("a", 1), ("b", {"c": None})]
    assert len(f) == 2 and "a" in f and "z" not in f and f.get("z", 3) == 3 and f["b"].get("c", 4) is None
    assert ("a", 1) in f.items() and list(f.values()) == [1, {"c": None}] and f.keys() - {"a"} == {"b"}
    assert (
        {**f, "a": 2} == {"a": 2, "b": {"c": None}} and (f | {"z": 0})["z"] == 0 and ({"z": 0} | f)["a"] == 1
    )
    assert repr(f) == "{'a': 1, 'b': {'c': None}}"
    with pytest.raises(KeyError):
        f["z"]
    g: Any = freeze({"a": 2, "b": {}})
    assert g._shape is f._shape and g != f
    assert freeze({"b": {"c": None}, "a": 1}) == f, "equal as JSON objects whatever their key order"


def test_a_shape_goes_with_the_last_object_of_it() -> None:
    keys = ("only-in-this-test", "and-this")
    first: Any = freeze(dict.fromkeys(keys, 1))
    second: Any = freeze(dict.fromkeys(keys, 2))
    assert first._shape is second._shape and keys in frozen_module._shapes
    del first
    assert keys in frozen_module._shapes
    del second
    gc.collect()
    assert keys not in frozen_module._shapes
    assert freeze(dict.fromkeys(keys, 3))["and-this"] == 3, "a shape made again after its last object went"


def test_thaw_and_deepcopy_give_independent_mutable_copies() -> None:
    f = freeze({"a": {"b": [1]}})
    for copy_ in (thaw(f), copy.deepcopy(f), pickle.loads(pickle.dumps(f))):
        assert type(copy_) is dict and type(copy_["a"]) is dict and type(copy_["a"]["b"]) is list
        copy_["a"]["b"].append(2)
        assert f["a"]["b"] == [1]
    shallow = copy.copy(f)
    assert type(shallow) is dict and isinstance(shallow["a"], FrozenDict)


def test_freeze_copies_its_input_and_keeps_frozen_values() -> None:
    plain = {"a": [{"b": 1}]}
    f = freeze(plain)
    plain["a"][0]["b"] = 2
    assert f["a"][0]["b"] == 1
    assert freeze(f) is f
    assert isinstance(freeze(("x", {"y": 1})), FrozenList)


# ----------------------------------------------------------------- store
def test_keys_follow_meta_namespace_key_func() -> None:
    assert object_key({"metadata": {"name": "a", "namespace": "ns"}}) == "ns/a"
    assert object_key({"metadata": {"name": "node-1"}}) == "node-1"


def test_get_and_list_by_namespace_and_selector() -> None:
    s = Store()
    s.upsert(obj("a", "ns1", {"app": "web", "tier": "front"}))
    s.upsert(obj("b", "ns1", {"app": "db"}))
    s.upsert(obj("c", "ns2", {"app": "web"}))
    s.upsert({"metadata": {"name": "node-1", "resourceVersion": "1"}})
    assert s.get("ns1", "a")["metadata"]["name"] == "a"  # type: ignore[index]
    assert s.get(None, "node-1") is not None and s.get("ns1", "zz") is None
    assert {o["metadata"]["name"] for o in s.list()} == {"a", "b", "c", "node-1"}
    assert {o["metadata"]["name"] for o in s.list("ns1")} == {"a", "b"}
    assert {o["metadata"]["name"] for o in s.list(label_selector="app=web")} == {"a", "c"}
    assert [o["metadata"]["name"] for o in s.list("ns1", {"matchLabels": {"app": "web"}})] == ["a"]
    assert [o["metadata"]["name"] for o in s.list(label_selector="app notin (web),app")] == ["b"]


def test_owner_index_files_every_owner_reference_and_follows_updates() -> None:
    s = Store()
    s.upsert(obj("pod-1", owners=("rs-1", "other")))
    s.upsert(obj("pod-2", owners=("rs-1",)))
    assert [o["metadata"]["name"] for o in s.by_index(OWNER_INDEX, "rs-1")] == ["pod-1", "pod-2"]
    assert [o["metadata"]["name"] for o in s.by_index(OWNER_INDEX, "other")] == ["pod-1"]
    s.upsert(obj("pod-1", owners=("rs-2",), rv="2"))  # re-parented
    assert [o["metadata"]["name"] for o in s.by_index(OWNER_INDEX, "rs-1")] == ["pod-2"]
    assert s.index_values(OWNER_INDEX) == ["rs-1", "rs-2"]
    s.remove("ns/pod-2")
    assert s.by_index(OWNER_INDEX, "rs-1") == [] and "rs-1" not in s.index_values(OWNER_INDEX)
    assert len(s) == 1 and "ns/pod-1" in s


def test_custom_indexer_added_late_indexes_existing_objects() -> None:
    s = Store()
    s.upsert(obj("a", spec={"nodeName": "n1"}))
    s.upsert(obj("b", spec={"nodeName": "n2"}))

    def by_node(o: Any) -> list[str]:
        return [o.get("spec", {}).get("nodeName", "")]

    s.add_indexer("node", by_node)
    assert [o["metadata"]["name"] for o in s.by_index("node", "n1")] == ["a"]
    s.upsert(obj("c", spec={"nodeName": "n1"}))
    assert [o["metadata"]["name"] for o in s.by_index("node", "n1")] == ["a", "c"]
    with pytest.raises(ValueError):
        s.add_indexer("node", by_node)
    with pytest.raises(KeyError):
        s.by_index("nope", "x")
    assert s.by_index(NAMESPACE_INDEX, "ns") == s.list("ns")


def test_store_hands_out_frozen_copies_and_returns_the_replaced_object() -> None:
    s = Store()
    source = obj("a", data={"k": "v"})
    stored, old = s.upsert(source)
    assert old is None
    source["data"]["k"] = "changed"
    assert s.get("ns", "a")["data"]["k"] == "v"  # type: ignore[index]
    with pytest.raises(TypeError):
        stored["data"]["k"] = "x"
    _, old = s.upsert(obj("a", rv="2"))
    assert old is stored
