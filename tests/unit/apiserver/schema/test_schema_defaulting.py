"""Structural defaulting, as apiextensions pkg/apiserver/schema/defaulting
(algorithm.go, prunenulls.go) does it and the CRD docs describe it:
https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting
and "Defaulting and Nullable" in the same page.
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_devkit.localcluster.apiserver.schema.defaulting import apply_defaults

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer", "default": 1},
                "image": {"type": "string"},
                "config": {
                    "type": "object",
                    "default": {},
                    "properties": {"mode": {"type": "string", "default": "fast"}},
                },
                "logs": {
                    "type": "object",
                    "properties": {"level": {"type": "string", "default": "info"}},
                },
                "groups": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"replicas": {"type": "integer", "default": 2}},
                    },
                },
                "limits": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "object",
                        "properties": {"unit": {"type": "string", "default": "Gi"}},
                    },
                },
                "nullableWithDefault": {"type": "string", "nullable": True, "default": "d"},
                "plainWithDefault": {"type": "string", "default": "d"},
                "plain": {"type": "string"},
                "nullable": {"type": "string", "nullable": True},
            },
        }
    },
}


def test_absent_fields_of_present_objects_get_defaults() -> None:
    """Defaults apply to absent fields; a default object is itself defaulted
    (config gets mode)."""
    out = apply_defaults({"spec": {"image": "x"}}, SCHEMA)
    assert out["spec"]["replicas"] == 1
    assert out["spec"]["config"] == {"mode": "fast"}
    assert out["spec"]["plainWithDefault"] == "d"
    assert out["spec"]["image"] == "x"


def test_defaults_do_not_create_parents() -> None:
    """logs has no default, so logs.level is not defaulted when logs is absent;
    an absent spec stays absent."""
    assert "logs" not in apply_defaults({"spec": {}}, SCHEMA)["spec"]
    assert apply_defaults({}, SCHEMA) == {}
    assert apply_defaults({"spec": {"logs": {}}}, SCHEMA)["spec"]["logs"] == {"level": "info"}


def test_present_values_win() -> None:
    out = apply_defaults({"spec": {"replicas": 5, "config": {"mode": "slow"}}}, SCHEMA)
    assert out["spec"]["replicas"] == 5
    assert out["spec"]["config"] == {"mode": "slow"}


def test_list_items_and_map_values_are_defaulted() -> None:
    out = apply_defaults({"spec": {"groups": [{}, {"replicas": 3}], "limits": {"memory": {}}}}, SCHEMA)
    assert out["spec"]["groups"] == [{"replicas": 2}, {"replicas": 3}]
    assert out["spec"]["limits"] == {"memory": {"unit": "Gi"}}


def test_nulls() -> None:
    """Docs: nulls of non-nullable fields are pruned before defaulting, and
    defaulted if there is a default; nullable fields keep their null."""
    out = apply_defaults(
        {
            "spec": {
                "plain": None,
                "plainWithDefault": None,
                "nullable": None,
                "nullableWithDefault": None,
                "unknown": None,
            }
        },
        SCHEMA,
    )["spec"]
    assert "plain" not in out
    assert out["plainWithDefault"] == "d"
    assert out["nullable"] is None
    assert out["nullableWithDefault"] is None
    assert out["unknown"] is None  # no schema: prunenulls.go leaves it alone


def test_null_list_item_gets_item_default() -> None:
    schema = {
        "type": "object",
        "properties": {"l": {"type": "array", "items": {"type": "string", "default": "x"}}},
    }
    assert apply_defaults({"l": [None, "y"]}, schema) == {"l": ["x", "y"]}


def test_input_is_not_mutated_and_defaults_are_copies() -> None:
    obj = {"spec": {}}
    first = apply_defaults(obj, SCHEMA)
    first["spec"]["config"]["mode"] = "changed"
    assert obj == {"spec": {}}
    assert apply_defaults(obj, SCHEMA)["spec"]["config"] == {"mode": "fast"}


leaf_values = st.none() | st.integers(-3, 3) | st.text(max_size=3)
objects = st.recursive(
    leaf_values,
    lambda children: (
        st.dictionaries(
            st.sampled_from(
                ["spec", "replicas", "config", "mode", "logs", "groups", "limits", "plain", "nullable", "x"]
            ),
            children,
            max_size=5,
        )
        | st.lists(children, max_size=3)
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.just("spec"), objects))
def test_defaulting_is_idempotent(obj: dict[str, Any]) -> None:
    """The server defaults on every read and write; a second pass must be a no-op."""
    once = apply_defaults(obj, SCHEMA)
    assert apply_defaults(copy.deepcopy(once), SCHEMA) == once
