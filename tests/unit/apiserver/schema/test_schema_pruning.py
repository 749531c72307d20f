"""Pruning of unknown fields: apiextensions pkg/apiserver/schema/pruning
(algorithm.go), objectmeta/coerce.go for embedded metadata, and the CRD docs
https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#field-pruning
and #controlling-pruning (x-kubernetes-preserve-unknown-fields).
"""

from __future__ import annotations

import copy
from typing import Any

from crd_schema_strategies import json_values, schemas
from hypothesis import given, settings

from mo_devkit.localcluster.apiserver.schema.pruning import prune
from mo_devkit.localcluster.apiserver.schema.validation import validate

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "groups": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"name": {"type": "string"}}},
                },
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": True,
                    "properties": {"typed": {"type": "object", "properties": {"a": {"type": "string"}}}},
                },
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object", "properties": {"x": {"type": "string"}}}},
                },
            },
        }
    },
}


def test_unknown_fields_are_dropped_and_reported() -> None:
    """The docs' example: spec.someRandomField is pruned; the paths are what
    fieldValidation=Strict reports as 'unknown field "spec.foo"'."""
    obj = {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "a", "whatever": 1},
        "spec": {"replicas": 1, "foo": 1, "groups": [{"name": "a", "extra": True}]},
        "other": {},
    }
    pruned, unknown = prune(obj, SCHEMA)
    assert pruned == {
        "apiVersion": "example.com/v1",
        "kind": "Thing",
        "metadata": {"name": "a", "whatever": 1},
        "spec": {"replicas": 1, "groups": [{"name": "a"}]},
    }
    assert unknown == ["other", "spec.foo", "spec.groups[0].extra"]
    assert obj["spec"]["foo"] == 1  # the input is untouched


def test_additional_properties_keep_keys() -> None:
    pruned, unknown = prune({"spec": {"labels": {"a": "1", "b": "2"}}}, SCHEMA)
    assert pruned["spec"]["labels"] == {"a": "1", "b": "2"}
    assert unknown == []


def test_preserve_unknown_fields_stops_pruning_until_a_nested_schema() -> None:
    """Docs: x-kubernetes-preserve-unknown-fields keeps unknown fields, but
    pruning resumes below properties specified inside it."""
    pruned, unknown = prune(
        {"spec": {"free": {"anything": {"deep": 1}, "typed": {"a": "x", "b": "y"}}}}, SCHEMA
    )
    assert pruned["spec"]["free"] == {"anything": {"deep": 1}, "typed": {"a": "x"}}
    assert unknown == ["spec.free.typed.b"]


def test_preserve_unknown_at_root_keeps_everything_unspecified() -> None:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    pruned, unknown = prune({"spec": {"a": 1}, "status": [1]}, schema)
    assert pruned == {"spec": {"a": 1}, "status": [1]}
    assert unknown == []


def test_embedded_resource_keeps_type_meta_and_object_meta_only() -> None:
    """Embedded resources keep apiVersion/kind/metadata whatever the schema says;
    their metadata is pruned by ObjectMeta, so unknown metadata keys go."""
    obj = {
        "spec": {
            "template": {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1},
                "spec": {"x": "y", "z": 1},
                "status": {},
            }
        }
    }
    pruned, unknown = prune(obj, SCHEMA)
    assert pruned["spec"]["template"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"x": "y"},
    }
    assert unknown == ["spec.template.spec.z", "spec.template.status", "spec.template.metadata.bogus"]


def test_values_without_schema_lose_nested_fields() -> None:
    """A boolean additionalProperties gives no schema: pruning.go prunes the
    values as unspecified (maps emptied, scalars kept)."""
    schema = {"type": "object", "properties": {"m": {"type": "object", "additionalProperties": True}}}
    pruned, unknown = prune({"m": {"a": 1, "b": {"c": 2}}}, schema)
    assert pruned == {"m": {"a": 1, "b": {}}}
    assert unknown == ["m.b.c"]


@settings(max_examples=300, deadline=None)
@given(json_values, schemas)
def test_prune_then_validate_never_raises_and_prune_is_idempotent(value: Any, schema: dict[str, Any]) -> None:
    """The server prunes, then validates; neither may crash, and pruning what
    was pruned finds nothing more."""
    root = {"type": "object", "properties": {"spec": schema}}
    pruned, _ = prune({"spec": value}, root)
    validate(pruned, root)
    again, unknown = prune(copy.deepcopy(pruned), root)
    assert again == pruned
    assert unknown == []
