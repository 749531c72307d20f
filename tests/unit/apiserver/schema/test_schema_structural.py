"""The checks on a CRD's openAPIV3Schema: apiextensions
pkg/apiserver/schema/validation.go and complete.go (structurality),
pkg/apis/apiextensions/validation/validation.go
(ValidateCustomResourceDefinitionOpenAPISchema), schema/defaulting/validation.go
(defaults), and the docs' "Specifying a structural schema"
https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
"""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.apiserver.schema.structural import structural_causes, structural_errors

ROOT = "spec.versions[0].schema.openAPIV3Schema"


def errors(schema: dict[str, Any], **kw: Any) -> list[str]:
    return [c.error() for c in structural_causes(schema, ROOT, **kw)]


def spec_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def test_a_typical_operator_schema_is_structural() -> None:
    schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["image"],
                "properties": {
                    "image": {"type": "string", "description": "the image"},
                    "replicas": {"type": "integer", "format": "int32", "default": 1, "minimum": 0},
                    "memory": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                        "pattern": "^[0-9]+(Mi|Gi)?$",
                    },
                    "groups": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}},
                        },
                    },
                    "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                },
                "oneOf": [{"required": ["image"]}, {"required": ["replicas"]}],
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    assert structural_causes(schema, ROOT, status_subresource=True) == []


def test_missing_types() -> None:
    """Every specified field and item needs a type unless int-or-string or
    preserving unknown fields."""
    schema = {"properties": {"spec": {"properties": {"l": {"type": "array", "items": {}}}}}}
    assert errors(schema) == [
        f"{ROOT}.properties[spec].properties[l].items.type: Required value: must not be empty for specified array items",
        f"{ROOT}.properties[spec].type: Required value: must not be empty for specified object fields",
        f"{ROOT}.type: Required value: must not be empty at the root",
    ]


def test_array_needs_items() -> None:
    assert errors(spec_schema(l={"type": "array"})) == [
        f"{ROOT}.properties[spec].properties[l].items: Required value: must be specified"
    ]


def test_properties_and_additional_properties_are_exclusive() -> None:
    schema = spec_schema(
        m={
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "string"},
        }
    )
    assert errors(schema) == [
        f"{ROOT}.properties[spec].properties[m].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
    ]


def test_junctors_must_not_carry_structure() -> None:
    """Types, descriptions, defaults... inside allOf/anyOf/oneOf/not make a
    schema non-structural; the int-or-string anyOf pattern is the exception."""
    schema = spec_schema(
        x={"type": "string", "anyOf": [{"type": "string", "description": "d", "default": "a"}]}
    )
    assert errors(schema) == [
        f"{ROOT}.properties[spec].properties[x].anyOf[0].default: Forbidden: must be undefined to be structural",
        f"{ROOT}.properties[spec].properties[x].anyOf[0].description: Forbidden: must be empty to be structural",
        f"{ROOT}.properties[spec].properties[x].anyOf[0].type: Forbidden: must be empty to be structural",
    ]


def test_junctor_properties_must_exist_structurally() -> None:
    """complete.go: a root junctor mentioning a field the schema does not specify."""
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object"}},
        "anyOf": [{"properties": {"status": {}}}],
    }
    assert errors(schema) == [
        f"{ROOT}.properties[status]: Required value: because it is defined in {ROOT}.anyOf[0].properties[status]"
    ]


def test_root_metadata_may_only_restrict_name_and_generate_name() -> None:
    ok = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}}
        },
    }
    assert errors(ok) == []
    bad = {
        "type": "object",
        "properties": {"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}},
    }
    assert errors(bad) == [
        f"{ROOT}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
    ]


def test_root_rules() -> None:
    assert errors({"type": "string"}) == [f'{ROOT}.type: Invalid value: "string": must be object at the root']
    assert f"{ROOT}.nullable: Forbidden: nullable cannot be true at the root" in errors(
        {"type": "object", "nullable": True}
    )
    assert errors({"type": "object", "additionalProperties": {"type": "string"}}) == [
        f"{ROOT}.additionalProperties: Forbidden: must not be used at the root"
    ]


def test_status_subresource_root_restriction() -> None:
    schema = {"type": "object", "anyOf": [{"required": ["spec"]}], "properties": {"spec": {"type": "object"}}}
    [err] = errors(schema, status_subresource=True)
    assert err.startswith(f"{ROOT}: Invalid value: ")
    assert err.endswith("fields are allowed at the root of the schema if the status subresource is enabled")


def test_unsupported_keywords() -> None:
    schema = spec_schema(
        x={"type": "null"}, y={"type": "string", "uniqueItems": True}, z={"$ref": "#/x", "type": "string"}
    )
    assert errors(schema) == [
        f'{ROOT}.properties[spec].properties[x].type: Unsupported value: "null": supported values: '
        '"array", "boolean", "integer", "number", "object", "string"',
        f"{ROOT}.properties[spec].properties[x].type: Forbidden: type cannot be set to null, use nullable as an alternative",
        f"{ROOT}.properties[spec].properties[y].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        f"{ROOT}.properties[spec].properties[z].$ref: Forbidden: $ref is not supported",
    ]


def test_list_type_rules() -> None:
    base = {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    assert errors(spec_schema(l={**base, "x-kubernetes-list-type": "map"})) == [
        f"{ROOT}.properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
    ]
    assert errors(
        spec_schema(l={**base, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]})
    ) == [
        f"{ROOT}.properties[spec].properties[l].items.properties[name].default: Required value: "
        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
    ]
    assert errors(
        spec_schema(l={**base, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["nope"]})
    ) == [
        f'{ROOT}.properties[spec].properties[l].x-kubernetes-list-map-keys: Invalid value: []string{{"nope"}}: '
        "entries must all be names of item properties"
    ]
    assert errors(spec_schema(l={**base, "x-kubernetes-list-type": "bag"})) == [
        f'{ROOT}.properties[spec].properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "set", "map"'
    ]
    assert errors(spec_schema(s={"type": "string", "x-kubernetes-list-type": "set"})) == [
        f'{ROOT}.properties[spec].properties[s].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified'
    ]


def test_embedded_resource_rules() -> None:
    assert errors(spec_schema(t={"type": "object", "x-kubernetes-embedded-resource": True})) == [
        f"{ROOT}.properties[spec].properties[t].properties: Required value: "
        "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"
    ]


def test_invalid_pattern() -> None:
    [err] = errors(spec_schema(s={"type": "string", "pattern": "(a"}))
    assert err.startswith(
        f'{ROOT}.properties[spec].properties[s].pattern: Invalid value: "(a": must be a valid regular expression'
    )


def test_defaults_must_validate_and_be_pruned() -> None:
    """defaulting/validation.go validates each default against its own node (the
    message path is relative to the default) and requires it to be pruned."""
    schema = spec_schema(
        n={"type": "integer", "default": "x"},
        o={"type": "object", "default": {"a": 1}, "properties": {"b": {"type": "string"}}},
    )
    assert errors(schema) == [
        f'{ROOT}.properties[spec].properties[n].default: Invalid value: "string":  in body must be of type integer: "string"',
        f'{ROOT}.properties[spec].properties[o].default: Invalid value: map[string]interface {{}}{{"a":1}}: must not have unknown fields',
    ]


def test_defaults_forbidden_in_top_level_metadata() -> None:
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}
        },
    }
    assert (
        f"{ROOT}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata"
        in errors(schema)
    )


def test_structural_errors_are_relative_lines() -> None:
    assert structural_errors(spec_schema(l={"type": "array"})) == [
        "properties[spec].properties[l].items: Required value: must be specified"
    ]
