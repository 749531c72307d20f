"""JSON merge patch: the test cases of RFC 7386 appendix A
(https://www.rfc-editor.org/rfc/rfc7386#appendix-A), as evanphx/json-patch
v4 ``MergePatch`` (merge.go) applies them for kube-apiserver, which answers
400 "Invalid JSON Patch" to a null or scalar merge patch.
"""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.patching.errors import PatchError
from mo_devkit.localcluster.apiserver.patching.merge_patch import apply_merge_patch, create_merge_patch

RFC_7386_CASES: list[tuple[Any, Any, Any]] = [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"a": "b"}, ["c"], ["c"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
]


@pytest.mark.parametrize(("target", "patch", "result"), RFC_7386_CASES)
def test_rfc_7386_cases(target: Any, patch: Any, result: Any) -> None:
    assert apply_merge_patch(target, patch) == result


@pytest.mark.parametrize("patch", [None, "bar", 3, True])
def test_non_object_patch_is_rejected(patch: Any) -> None:
    """RFC 7386 would return ``null``/``"bar"``; the library refuses them."""
    with pytest.raises(PatchError) as e:
        apply_merge_patch({"a": "foo"}, patch)
    assert e.value.message == "Invalid JSON Patch"
    assert e.value.code == 400


def test_lists_are_replaced_whole() -> None:
    doc = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}}
    assert apply_merge_patch(doc, {"spec": {"containers": [{"name": "a", "image": "y"}]}}) == {
        "spec": {"containers": [{"name": "a", "image": "y"}]}
    }


def test_null_members_pruned_in_new_subtrees_and_lists() -> None:
    assert apply_merge_patch({}, {"a": [{"b": None, "c": 1}]}) == {"a": [{"c": 1}]}


def test_create_merge_patch_is_a_minimal_diff() -> None:
    original = {"a": 1, "b": {"c": 2, "d": 3}, "e": [1], "f": True}
    modified = {"a": 1, "b": {"c": 5}, "e": [1, 2], "g": "new", "f": 1}
    patch = create_merge_patch(original, modified)
    assert patch == {"b": {"c": 5, "d": None}, "e": [1, 2], "g": "new", "f": 1}
    assert apply_merge_patch(original, patch) == modified
    assert create_merge_patch(modified, modified) == {}
