"""Deciding whether an object needs writing (controllers/framework/desired.py): the
subset check ``matches``, the applied-hash ``stamped`` and ``up_to_date``, which
together make a reconcile of a settled object write nothing."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.controllers.framework.desired import APPLIED_HASH, content_hash, matches, stamped, up_to_date
from mo_operator.kube.meta.frozen import freeze

Obj = dict[str, Any]


def applied_hash(obj: Obj) -> str | None:
    return ((obj.get("metadata") or {}).get("annotations") or {}).get(APPLIED_HASH)


def service(**spec: Any) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "mo-log-discovery", "namespace": "ns", "labels": {"app": "mo"}},
        "spec": {"selector": {"app": "mo"}, "ports": [{"name": "logservice", "port": 32001}], **spec},
    }


# ------------------------------------------------------------------ matches
def test_maps_match_when_every_key_we_set_has_our_value() -> None:
    assert matches({"a": 1}, {"a": 1, "b": 2})
    assert not matches({"a": 1, "b": 2}, {"a": 1})
    assert not matches({"a": 1}, {"a": 2})
    assert matches({"a": {"b": 1}}, {"a": {"b": 1, "c": 3}})
    assert not matches({"a": {"b": 1}}, {"a": "b"})
    assert matches({}, {"anything": True})


def test_lists_match_element_by_element_with_server_fields_inside() -> None:
    want = [{"name": "main", "image": "mo:1"}]
    have = [{"name": "main", "image": "mo:1", "terminationMessagePath": "/dev/termination-log"}]
    assert matches(want, have)
    assert not matches(want, [*have, {"name": "sidecar"}])  # an element we did not write
    assert not matches([*want, {"name": "sidecar"}], have)  # an element missing
    assert not matches(["a", "b"], ["b", "a"])  # order is content
    assert matches(("a", "b"), ["a", "b"]) and matches(["a", "b"], ("a", "b"))
    assert not matches(["a"], "a") and not matches({"a": 1}, [("a", 1)])


def test_scalars_compare_by_json_value_and_bools_are_not_numbers() -> None:
    assert matches(1, 1.0) and matches(2.0, 2)
    assert not matches(1, 2)
    assert matches(True, True) and not matches(True, False)
    assert not matches(True, 1) and not matches(1, True)
    assert not matches(False, 0) and not matches(0, False)
    assert not matches("1", 1) and not matches(1, "1")
    assert matches("a", "a") and not matches("a", "b")
    assert matches(None, None) and not matches(None, "x") and not matches("x", None)


def test_empty_values_we_ask_for_match_an_absent_field() -> None:
    # the API server drops empty lists, empty maps and nulls it is sent
    empties: list[Any] = [[], {}, None]
    for empty in empties:
        assert matches({"a": 1, "empty": empty}, {"a": 1})
    # but an empty string or a zero is a value, kept by the server
    assert not matches({"s": ""}, {})
    assert not matches({"n": 0}, {})
    assert not matches({"b": False}, {})
    # and an empty list we ask for does not match one that has elements
    assert not matches({"l": []}, {"l": ["x"]})


def test_frozen_cached_objects_match_plain_desired_ones() -> None:
    desired = stamped(service(type="ClusterIP"))
    cached = freeze({**copy.deepcopy(desired), "status": {"loadBalancer": {}}})
    assert matches(desired, cached)
    assert up_to_date(cached, desired)


# ------------------------------------------------------------------ stamped
def test_stamping_adds_the_hash_of_the_content_and_nothing_else() -> None:
    svc = service()
    out = stamped(svc)
    digest = applied_hash(out)
    assert digest is not None and len(digest) == 16
    without = copy.deepcopy(out)
    del without["metadata"]["annotations"][APPLIED_HASH]
    assert without == {**svc, "metadata": {**svc["metadata"], "annotations": {}}}
    assert digest == content_hash(without)
    assert "annotations" not in svc["metadata"]  # the argument is not changed


def test_the_hash_changes_exactly_when_the_content_changes() -> None:
    base = applied_hash(stamped(service()))
    assert applied_hash(stamped(service())) == base
    reordered = service()
    reordered["spec"] = dict(reversed(list(reordered["spec"].items())))
    assert applied_hash(stamped(reordered)) == base  # key order is not content
    assert applied_hash(stamped(service(type="NodePort"))) != base
    changed = service()
    changed["spec"]["ports"][0]["port"] = 32002
    assert applied_hash(stamped(changed)) != base
    labelled = service()
    labelled["metadata"]["labels"]["extra"] = "x"
    assert applied_hash(stamped(labelled)) != base
    annotated = service()
    annotated["metadata"]["annotations"] = {"a": "b"}
    assert applied_hash(stamped(annotated)) != base


def test_stamping_is_idempotent_and_the_hash_is_not_hashed() -> None:
    once = stamped(service())
    assert stamped(once) == once
    assert stamped(stamped(once)) == once
    # a stale hash on the desired object (e.g. copied from the cache) is replaced
    stale = service()
    stale["metadata"]["annotations"] = {APPLIED_HASH: "0123456789abcdef", "a": "b"}
    plain = service()
    plain["metadata"]["annotations"] = {"a": "b"}
    assert stamped(stale) == stamped(plain)
    assert applied_hash(stamped(stale)) != "0123456789abcdef"


# --------------------------------------------------------------- up_to_date
def as_stored(desired: Obj, **additions: Any) -> Obj:
    """``desired`` as the API server stores it: its fields plus the server's own."""
    stored = copy.deepcopy(desired)
    stored["metadata"].update(uid="u1", resourceVersion="42", creationTimestamp="2024-01-01T00:00:00Z")
    stored.update(additions)
    return stored


def test_nothing_cached_is_never_up_to_date() -> None:
    assert not up_to_date(None, stamped(service()))


def test_fields_the_server_adds_are_ignored() -> None:
    desired = stamped(service())
    stored = as_stored(desired, status={"loadBalancer": {}})
    stored["spec"].update(clusterIP="10.0.0.7", clusterIPs=["10.0.0.7"], sessionAffinity="None")
    stored["spec"]["ports"][0].update(protocol="TCP", targetPort=32001)
    stored["metadata"]["labels"]["other-manager"] = "x"
    stored["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied"] = "{}"
    assert up_to_date(stored, desired)


def test_drift_in_a_field_we_set_is_detected() -> None:
    desired = stamped(service())
    stored = as_stored(desired)
    stored["spec"]["selector"]["app"] = "edited"
    assert not up_to_date(stored, desired)
    stored = as_stored(desired)
    del stored["metadata"]["labels"]["app"]
    assert not up_to_date(stored, desired)


def test_a_field_we_stopped_setting_is_detected_through_the_hash() -> None:
    before = stamped(service(type="NodePort"))
    stored = as_stored(before)
    after = stamped(service())  # we no longer set spec.type
    assert matches(after["spec"], stored["spec"])  # the subset check alone cannot see it
    assert not up_to_date(stored, after)
    # once applied, the stored object carries the new hash and settles
    assert up_to_date(as_stored(after), after)


def test_an_object_written_by_someone_else_is_taken_over() -> None:
    desired = stamped(service())
    stored = as_stored(service())  # same fields, no applied hash
    assert not up_to_date(stored, desired)
    # an unstamped desired object is compared on its fields alone
    assert up_to_date(stored, service())


# ----------------------------------------------------------------- property
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**40), max_value=2**40),
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
KEYS = st.text(min_size=1, max_size=6)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
OBJECTS = st.fixed_dictionaries(
    {
        "metadata": st.fixed_dictionaries(
            {"name": st.text(min_size=1, max_size=8)},
            optional={
                "labels": st.dictionaries(KEYS, st.text(max_size=8), max_size=3),
                "annotations": st.dictionaries(KEYS, st.text(max_size=8), max_size=3),
            },
        )
    },
    optional={"spec": st.dictionaries(KEYS, JSON, max_size=5), "data": JSON},
)

Path = tuple[Any, ...]


def maps_in(value: Any, path: Path = ()) -> list[Path]:
    """Paths of every JSON object inside ``value`` (itself included)."""
    found: list[Path] = []
    if isinstance(value, dict):
        found.append(path)
        for key, item in value.items():
            found += maps_in(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += maps_in(item, (*path, i))
    return found


def leaves_in(value: Any, path: Path = ()) -> list[Path]:
    """Paths of every scalar inside ``value``."""
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in leaves_in(item, (*path, key))]
    if isinstance(value, list):
        return [p for i, item in enumerate(value) for p in leaves_in(item, (*path, i))]
    return [path]


def at(value: Any, path: Path) -> Any:
    for step in path:
        value = value[step]
    return value


def changed(leaf: Any) -> Any:
    """A JSON value different from ``leaf``."""
    if isinstance(leaf, bool):
        return int(leaf)  # same Python value, another JSON value
    if isinstance(leaf, (int, float)):
        return leaf + 1
    if isinstance(leaf, str):
        return leaf + "x"
    return "was null"


def absent_from(target: dict[str, Any]) -> Callable[[str], bool]:
    return lambda key: key not in target


def with_additions(draw: Callable[..., Any], obj: Obj) -> Obj:
    """``obj`` with extra keys (absent from it) added to some of its maps, at any depth."""
    out = copy.deepcopy(obj)
    targets = draw(st.lists(st.sampled_from(maps_in(out)), max_size=6))
    for path in targets:
        target = at(out, path)
        key = draw(KEYS.filter(absent_from(target)))
        target[key] = draw(JSON)
    return out


@settings(max_examples=60, deadline=None)
@given(OBJECTS, st.data())
def test_server_additions_never_need_a_write_and_any_changed_leaf_does(d: Obj, data: st.DataObject) -> None:
    desired = stamped(d)
    stored = with_additions(data.draw, desired)
    assert up_to_date(stored, desired)
    assert up_to_date(freeze(stored), desired)
    leaf = data.draw(st.sampled_from(leaves_in(desired)))
    drifted = copy.deepcopy(stored)
    parent = at(drifted, leaf[:-1])
    parent[leaf[-1]] = changed(parent[leaf[-1]])
    assert not up_to_date(drifted, desired), leaf


def reordered(value: Any) -> Any:
    """``value`` with the keys of every map in reverse order (the same JSON content)."""
    if isinstance(value, dict):
        return {k: reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [reordered(v) for v in value]
    return value


@settings(max_examples=60, deadline=None)
@given(OBJECTS, st.data())
def test_the_hash_changes_exactly_when_a_leaf_changes(d: Obj, data: st.DataObject) -> None:
    digest = applied_hash(stamped(d))
    assert applied_hash(stamped(reordered(d))) == digest
    assert stamped(stamped(d)) == stamped(d)
    leaf = data.draw(st.sampled_from(leaves_in(d)))
    other = copy.deepcopy(d)
    parent = at(other, leaf[:-1])
    parent[leaf[-1]] = changed(parent[leaf[-1]])
    assert applied_hash(stamped(other)) != digest, leaf
