"""JSON patch: the examples of RFC 6902 appendix A
(https://www.rfc-editor.org/rfc/rfc6902#appendix-A) and the behaviour and
messages of github.com/evanphx/json-patch v4 (patch.go), which
kube-apiserver applies JSON patches with (apiserver
pkg/endpoints/handlers/patch.go answers 422 with the library's message).
"""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.patching.json_patch import PatchError, apply_json_patch


def patched(doc: Any, *ops: dict[str, Any]) -> Any:
    return apply_json_patch(doc, list(ops))


def fails(doc: Any, *ops: dict[str, Any]) -> PatchError:
    with pytest.raises(PatchError) as e:
        apply_json_patch(doc, list(ops))
    return e.value


def test_rfc_add_object_member_and_array_element() -> None:
    """RFC 6902 A.1, A.2, A.10 (nested member), A.16 (array value)."""
    assert patched({"foo": "bar"}, {"op": "add", "path": "/baz", "value": "qux"}) == {
        "foo": "bar",
        "baz": "qux",
    }
    assert patched({"foo": ["bar", "baz"]}, {"op": "add", "path": "/foo/1", "value": "qux"}) == {
        "foo": ["bar", "qux", "baz"]
    }
    assert patched({"foo": "bar"}, {"op": "add", "path": "/child", "value": {"grandchild": {}}}) == {
        "foo": "bar",
        "child": {"grandchild": {}},
    }
    assert patched({"foo": ["bar"]}, {"op": "add", "path": "/foo/-", "value": ["abc", "def"]}) == {
        "foo": ["bar", ["abc", "def"]]
    }


def test_rfc_remove_and_replace() -> None:
    """RFC 6902 A.3, A.4, A.5."""
    assert patched({"baz": "qux", "foo": "bar"}, {"op": "remove", "path": "/baz"}) == {"foo": "bar"}
    assert patched({"foo": ["bar", "qux", "baz"]}, {"op": "remove", "path": "/foo/1"}) == {
        "foo": ["bar", "baz"]
    }
    assert patched({"baz": "qux", "foo": "bar"}, {"op": "replace", "path": "/baz", "value": "boo"}) == {
        "baz": "boo",
        "foo": "bar",
    }


def test_rfc_move() -> None:
    """RFC 6902 A.6, A.7."""
    doc = {"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}}
    assert patched(doc, {"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}) == {
        "foo": {"bar": "baz"},
        "qux": {"corge": "grault", "thud": "fred"},
    }
    assert patched(
        {"foo": ["all", "grass", "cows", "eat"]}, {"op": "move", "from": "/foo/1", "path": "/foo/3"}
    ) == {"foo": ["all", "cows", "eat", "grass"]}


def test_rfc_test_operation() -> None:
    """RFC 6902 A.8, A.9 and A.15 (a string is not a number)."""
    doc = {"baz": "qux", "foo": ["a", 2, "c"]}
    ops = [{"op": "test", "path": "/baz", "value": "qux"}, {"op": "test", "path": "/foo/1", "value": 2}]
    assert apply_json_patch(doc, ops) == {"baz": "qux", "foo": ["a", 2, "c"]}
    assert fails({"baz": "qux"}, {"op": "test", "path": "/baz", "value": "bar"}).message == (
        "testing value /baz failed: test failed"
    )
    assert fails({"/": 9, "~1": 10}, {"op": "test", "path": "/~01", "value": "10"}).code == 422


def test_rfc_escaping() -> None:
    """RFC 6902 A.14: ``~01`` is ``~1`` (``~0`` decoded last)."""
    assert patched({"/": 9, "~1": 10}, {"op": "test", "path": "/~01", "value": 10}) == {"/": 9, "~1": 10}
    assert patched({"a/b": 1}, {"op": "replace", "path": "/a~1b", "value": 2}) == {"a/b": 2}
    assert patched({"m~n": 1}, {"op": "remove", "path": "/m~0n"}) == {}


def test_rfc_add_to_missing_parent_fails() -> None:
    """RFC 6902 A.12, with the library's message."""
    err = fails({"foo": "bar"}, {"op": "add", "path": "/baz/bat", "value": "qux"})
    assert err.message == 'add operation does not apply: doc is missing path: "/baz/bat": missing value'
    assert err.code == 422


def test_rfc_ignores_unrecognised_members() -> None:
    """RFC 6902 A.11."""
    assert patched({"foo": "bar"}, {"op": "add", "path": "/baz", "value": "qux", "xyz": 123}) == {
        "foo": "bar",
        "baz": "qux",
    }


def test_copy_is_deep() -> None:
    doc = patched({"a": {"b": [1]}}, {"op": "copy", "from": "/a", "path": "/c"})
    doc["c"]["b"].append(2)
    assert doc == {"a": {"b": [1]}, "c": {"b": [1, 2]}}


def test_added_values_are_copied_from_the_patch() -> None:
    value = {"k": [1]}
    doc = apply_json_patch({}, [{"op": "add", "path": "/x", "value": value}])
    value["k"].append(2)
    assert doc == {"x": {"k": [1]}}


def test_remove_missing_key_message() -> None:
    err = fails({"metadata": {"labels": {}}}, {"op": "remove", "path": "/metadata/labels/app"})
    assert err.message == (
        "error in remove for path: '/metadata/labels/app': Unable to remove nonexistent key: app: missing value"
    )


def test_replace_of_missing_member_adds_it() -> None:
    """evanphx/json-patch v4 ``partialDoc.get`` never fails, so ``replace``
    of a missing object member behaves as ``add`` (kubectl users rely on it)."""
    assert patched({"spec": {}}, {"op": "replace", "path": "/spec/replicas", "value": 3}) == {
        "spec": {"replicas": 3}
    }


def test_index_errors() -> None:
    assert fails({"a": [1]}, {"op": "replace", "path": "/a/5", "value": 0}).message == (
        "replace operation does not apply: doc is missing key: /a/5: missing value"
    )
    assert fails({"a": [1]}, {"op": "add", "path": "/a/3", "value": 0}).message == (
        "error in add for path: '/a/3': Unable to access invalid index: 3: invalid index referenced"
    )
    assert fails({"a": [1]}, {"op": "add", "path": "/a/x", "value": 0}).message == (
        "error in add for path: '/a/x': value was not a proper array index: 'x'"
    )
    assert fails({"a": [1]}, {"op": "remove", "path": "/a/1"}).message == (
        "error in remove for path: '/a/1': Unable to access invalid index: 1: invalid index referenced"
    )


def test_negative_indices_count_from_the_end() -> None:
    """``SupportNegativeIndices`` is on in the library kube-apiserver uses."""
    assert patched({"a": [1, 2, 3]}, {"op": "remove", "path": "/a/-1"}) == {"a": [1, 2]}
    assert patched({"a": [1, 2]}, {"op": "add", "path": "/a/-1", "value": 9}) == {"a": [1, 2, 9]}
    assert patched({"a": [1, 2]}, {"op": "replace", "path": "/a/-2", "value": 0}) == {"a": [0, 2]}


def test_root_replace_and_unknown_operation() -> None:
    assert patched({"a": 1}, {"op": "replace", "path": "", "value": {"b": 2}}) == {"b": 2}
    assert fails({}, {"op": "frobnicate", "path": "/a"}).message == "Unexpected kind: frobnicate"
    assert fails({}, {"path": "/a"}).message == "Unexpected kind: unknown"


def test_test_of_missing_member() -> None:
    """A missing member tests equal to null, and unequal to anything else."""
    assert patched({"a": 1}, {"op": "test", "path": "/b", "value": None}) == {"a": 1}
    assert (
        fails({"a": 1}, {"op": "test", "path": "/b", "value": 1}).message
        == "testing value /b failed: test failed"
    )


def test_move_into_own_child_fails() -> None:
    err = fails({"a": {"b": 1}}, {"op": "move", "from": "/a", "path": "/a/c"})
    assert "doc is missing destination path: /a/c" in err.message


def test_operations_apply_in_order_and_stop_at_first_failure() -> None:
    doc = {"a": 1}
    with pytest.raises(PatchError):
        apply_json_patch(doc, [{"op": "add", "path": "/b", "value": 2}, {"op": "remove", "path": "/zzz"}])
    assert doc == {"a": 1, "b": 2}  # the library works in place; the server discards the copy


def test_patch_must_be_a_list() -> None:
    with pytest.raises(PatchError) as e:
        apply_json_patch({}, {"op": "add"})
    assert e.value.code == 400
